/**
 * @module gateway/request/address-filter
 * The Module's `ip_allow` / `ip_deny`, as Emissary's: rules on the peer's
 * address (`peer`, the connection's other end) or the client's
 * (`remote`, the peer, or behind a trusted proxy the address it names),
 * each an address or a CIDR block. With `ip_allow`, a request no rule
 * matches is refused; with `ip_deny`, one a rule matches. Held before auth,
 * as Envoy's RBAC filter runs before ext_authz.
 */
import { BlockList, isIP } from 'node:net';
import type { Context } from 'koa';
import { HttpError, unmappedAddress } from '../../http';
import { clientAddress, trustedClientAddress } from './headers/forwarded';

/** One rule as the Module writes it: `{peer: <cidr>}` or `{remote: <cidr>}`. */
export interface AddressRule {
  readonly peer?: string;
  readonly remote?: string;
}

/** The compiled filter: refuses a request it does not admit. */
export type AddressFilter = (ctx: Context) => void;

/** Why a rule's address is no address or CIDR block, or undefined when it is one. */
export function cidrProblem(text: string): string | undefined {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return 'must be an IP address or a CIDR block (10.0.0.0/8, 2001:db8::/32)';
  if (slash === -1) return undefined;
  const bits = text.slice(slash + 1);
  const max = family === 4 ? 32 : 128;
  if (!/^[0-9]{1,3}$/.test(bits) || Number(bits) > max)
    return `the prefix length must be a whole number from 0 to ${max}`;
  return undefined;
}

function add(list: BlockList, cidr: string): void {
  const slash = cidr.indexOf('/');
  const address = slash === -1 ? cidr : cidr.slice(0, slash);
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  const bits = slash === -1 ? (family === 'ipv4' ? 32 : 128) : Number(cidr.slice(slash + 1));
  list.addSubnet(address, bits, family);
}

function matches(list: BlockList | null, address: string): boolean {
  if (list === null || address === '') return false;
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The filter of `rules` (validated); `allow` says whether they are
 * `ip_allow` (a request must match one) or `ip_deny` (it must match none).
 */
export function compileAddressFilter(rules: readonly AddressRule[], allow: boolean): AddressFilter {
  let peers: BlockList | null = null;
  let remotes: BlockList | null = null;
  for (const rule of rules) {
    if (rule.peer !== undefined) add((peers ??= new BlockList()), rule.peer);
    if (rule.remote !== undefined) add((remotes ??= new BlockList()), rule.remote);
  }
  return (ctx) => {
    const peer = clientAddress(ctx);
    const matched =
      matches(peers, peer) || (remotes !== null && matches(remotes, unmappedAddress(trustedClientAddress(ctx))));
    if (matched !== allow) throw HttpError.of('ADDRESS_REFUSED');
  };
}
