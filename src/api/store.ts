/**
 * @module api/store
 * The accounts and messages the versioned API serves: read-only records,
 * built by a factory so that every app (and every test) has its own.
 */

/** An account: it owns messages. */
export interface AccountRecord {
  readonly id: string;
  readonly name: string;
  /** ISO 8601, UTC. */
  readonly created_at: string;
}

/** A message as stored; each API version represents it in its own way. */
export interface MessageRecord {
  readonly id: string;
  readonly account_id: string;
  /** The text in Markdown. */
  readonly text: string;
  /** BCP 47 language tag of the text. */
  readonly language: string;
  /** ISO 8601, UTC. */
  readonly created_at: string;
}

/** Read access to accounts and messages, in id order. */
export interface MessageStore {
  accounts(): readonly AccountRecord[];
  account(id: string): AccountRecord | undefined;
  /** Every message, or those of one account. */
  messages(accountId?: string): readonly MessageRecord[];
  message(id: string): MessageRecord | undefined;
}

/** The records a store serves; the demo data when not given. */
export interface MessageStoreData {
  accounts: readonly AccountRecord[];
  messages: readonly MessageRecord[];
}

/**
 * Builds a store over `data`, or over the demo data: accounts 1 (Alice, 25
 * messages), 2 (Bob, 10) and 3 (Carol, 10); messages 1 to 45. Throws when a
 * message names an account that does not exist or an id is used twice.
 */
export function createMessageStore(data: MessageStoreData = demoData()): MessageStore {
  const accounts = new Map<string, AccountRecord>();
  for (const account of data.accounts) {
    if (accounts.has(account.id)) throw new Error(`account id ${account.id} is used twice`);
    accounts.set(account.id, Object.freeze({ ...account }));
  }
  const messages = new Map<string, MessageRecord>();
  const byAccount = new Map<string, MessageRecord[]>([...accounts.keys()].map((id) => [id, []]));
  for (const message of data.messages) {
    if (messages.has(message.id)) throw new Error(`message id ${message.id} is used twice`);
    const owned = byAccount.get(message.account_id);
    if (!owned) throw new Error(`message ${message.id} names an unknown account ${message.account_id}`);
    const record = Object.freeze({ ...message });
    messages.set(message.id, record);
    owned.push(record);
  }
  const allAccounts = Object.freeze([...accounts.values()]);
  const allMessages = Object.freeze([...messages.values()]);
  for (const [id, owned] of byAccount) byAccount.set(id, Object.freeze(owned) as MessageRecord[]);

  return {
    accounts: () => allAccounts,
    account: (id) => accounts.get(id),
    messages: (accountId) => (accountId === undefined ? allMessages : (byAccount.get(accountId) ?? [])),
    message: (id) => messages.get(id),
  };
}

const DEMO_ACCOUNTS: readonly AccountRecord[] = [
  { id: '1', name: 'Alice', created_at: '2025-01-02T08:00:00.000Z' },
  { id: '2', name: 'Bob', created_at: '2025-01-03T08:00:00.000Z' },
  { id: '3', name: 'Carol', created_at: '2025-01-04T08:00:00.000Z' },
];

/** Who writes message n: of every nine, five go to Alice, two each to Bob and Carol. */
const OWNERS = ['1', '2', '1', '3', '1', '2', '1', '3', '1'];

const TEXTS: readonly (readonly [language: string, text: string])[] = [
  ['en', 'Welcome to **Gatehouse**, {name}.'],
  ['en', 'Your hotel booking is *confirmed*.'],
  ['fr', 'Votre réservation est *confirmée*.'],
  ['en', 'Check-in opens at **14:00**.'],
  ['de', 'Ihre Buchung ist *bestätigt*.'],
  ['en', 'Your car is waiting at **gate 3**.'],
  ['es', 'Su reserva está *confirmada*.'],
  ['en', 'Thanks for travelling with us, _{name}_!'],
];

const DEMO_START = Date.parse('2025-01-06T09:00:00.000Z');
const HOUR = 3_600_000;

/** The demo records: 3 accounts and 45 messages, the same every time. */
export function demoData(): MessageStoreData {
  const names = new Map(DEMO_ACCOUNTS.map((a) => [a.id, a.name]));
  const messages: MessageRecord[] = [];
  for (let n = 1; n <= 45; n++) {
    const accountId = OWNERS[(n - 1) % OWNERS.length];
    const [language, text] = TEXTS[(n - 1) % TEXTS.length];
    messages.push({
      id: String(n),
      account_id: accountId,
      text: text.replace('{name}', names.get(accountId)!),
      language,
      created_at: new Date(DEMO_START + (n - 1) * HOUR).toISOString(),
    });
  }
  return { accounts: DEMO_ACCOUNTS, messages };
}
