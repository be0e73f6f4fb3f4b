/**
 * @module gateway/config/emissary/values
 * Values that Emissary spells in more ways than the gateway's records:
 * added headers as `v3alpha1` stores them (`{value, append,
 * v2Representation}`), CORS policies with `v2CommaSeparatedOrigins`, v2's
 * longhand `{generic_key, v3Key}` labels, `ambassador_id` as a name or a
 * list, a service's `host:port` as Emissary's Linkerd header names it, and
 * a service with a path, of which Emissary reads the host and port alone.
 * Anything not in those spellings is returned as it is, for the record's
 * schema to judge.
 */
import type { FieldNote } from './types';

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `add_request_headers` / `add_response_headers`: `v2Representation` dropped, an empty (null) value as `""`. */
export function addedHeaders(raw: unknown): unknown {
  if (!isPlainObject(raw)) return raw;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === null) out[name] = '';
    else if (isPlainObject(value)) {
      const rest = { ...value };
      delete rest.v2Representation;
      out[name] = 'value' in rest ? rest : { ...rest, value: '' };
    } else out[name] = value;
  }
  return out;
}

/** A CORS policy: `v2CommaSeparatedOrigins` (how v3alpha1 remembers a v2 `"a,b"`) dropped. */
export function corsPolicy(raw: unknown): unknown {
  if (!isPlainObject(raw)) return raw;
  const rest = { ...raw };
  delete rest.v2CommaSeparatedOrigins;
  return rest;
}

/** One label: v2's longhand `{generic_key: value, v3Key: key}` as `{generic_key: {key, value}}`. */
function label(raw: unknown): unknown {
  if (!isPlainObject(raw) || typeof raw.generic_key !== 'string' || !('v3Key' in raw)) return raw;
  const { generic_key: value, v3Key: key, ...rest } = raw;
  return { generic_key: typeof key === 'string' && key !== '' ? { key, value } : value, ...rest };
}

/** A list of labels. */
export function labelList(raw: unknown): unknown {
  return Array.isArray(raw) ? raw.map(label) : raw;
}

/** The actions a v3alpha1 label specifier holds, one of them each (its schema's properties). */
const LABEL_SPECIFIERS = ['request_headers', 'generic_key', 'remote_address', 'source_cluster', 'destination_cluster'];

/**
 * A v3alpha1 resource's label with keys beside its action and no value
 * (`- x-user:` written above `request_headers:` at the same indent, as
 * Emissary's rate-limit tutorial has it): Kubernetes prunes the keys its
 * schema does not know, and Emissary reads the action alone. The pruned
 * names are said to `pruned`.
 */
function prunedLabel(raw: unknown, pruned: (names: string[]) => void): unknown {
  if (!isPlainObject(raw)) return raw;
  const keys = Object.keys(raw);
  const actions = keys.filter((k) => LABEL_SPECIFIERS.includes(k));
  const others = keys.filter((k) => !LABEL_SPECIFIERS.includes(k));
  if (keys.length < 2 || actions.length !== 1 || others.some((k) => raw[k] !== null)) return raw;
  pruned(others);
  return { [actions[0]]: raw[actions[0]] };
}

/**
 * `labels: {<domain>: [{<group>: [<label>...]}]}`, each label in a spelling
 * the gateway reads; with `pruned`, a resource's labels as Kubernetes keeps
 * them, each pruned key said with its path under `labels`.
 */
export function labels(raw: unknown, pruned?: (path: string, names: string[]) => void): unknown {
  if (!isPlainObject(raw)) return raw;
  const out: Record<string, unknown> = {};
  for (const [domain, groups] of Object.entries(raw)) {
    out[domain] = Array.isArray(groups)
      ? groups.map((group: unknown, g) =>
          isPlainObject(group)
            ? Object.fromEntries(
                Object.entries(group).map(([name, list]) => {
                  if (pruned === undefined || !Array.isArray(list)) return [name, labelList(list)];
                  const kept = list.map((one: unknown, i) =>
                    prunedLabel(one, (names) => pruned(`${domain}.${g}.${name}.${i}`, names)),
                  );
                  return [name, labelList(kept)];
                }),
              )
            : group,
        )
      : groups;
  }
  return out;
}

/** The ids an `ambassador_id` names (`default` when it names none), or what is wrong with it. */
export function ambassadorIds(raw: unknown): readonly string[] | { problem: string } {
  if (raw === undefined || raw === null) return ['default'];
  if (typeof raw === 'string' && raw !== '') return [raw];
  if (Array.isArray(raw) && raw.every((id) => typeof id === 'string' && id !== ''))
    return raw.length > 0 ? (raw as string[]) : ['default'];
  return { problem: 'must be a name or a list of names (the ambassador_id of the gateways that serve the record)' };
}

/** An upstream as Emissary writes it: an optional `http://` or `https://`, a host, an optional `:port`. */
const SERVICE = /^(?:(https?):\/\/)?(\[[0-9A-Fa-f:.]+\]|[^:/[\]]+)(?::([0-9]{1,5}))?\/?$/i;

/**
 * `service` qualified with a namespace, as Emissary qualifies a Kubernetes
 * name: a bare name (no dot, not `localhost`, not an address) gets
 * `.<namespace>`, its scheme and port kept; anything else is returned as it is.
 */
export function qualifiedService(service: string, namespace: string): string {
  const m = SERVICE.exec(service);
  if (!m) return service;
  const [, scheme, host, port] = m;
  if (host.includes('.') || host.startsWith('[') || host.toLowerCase() === 'localhost') return service;
  return `${scheme ? `${scheme}://` : ''}${host}.${namespace}${port ? `:${port}` : ''}`;
}

/** The `host:port` of a service, the port by its scheme when it names none (`quote` → `quote:80`), as Emissary's `l5d-dst-override`. */
export function serviceHostPort(service: string): string | undefined {
  const m = SERVICE.exec(service);
  if (!m) return undefined;
  const [, scheme, host, port] = m;
  return `${host}:${port ?? (scheme?.toLowerCase() === 'https' ? '443' : '80')}`;
}

/**
 * A service with what follows its host and port (a path, a query, a
 * fragment) cut off, as Emissary reads it ("ignoring everything but the host
 * and port"), and what was cut; `cut` is '' when there was nothing to cut.
 */
export function serviceWithoutPath(service: string): { service: string; cut: string } {
  const m = /^((?:[a-z][a-z0-9+.-]*:\/\/)?[^/?#]*)(.*)$/i.exec(service)!;
  // A lone trailing slash is no path: `http://quote/` is `http://quote`.
  return m[2] === '/' || m[2] === '' ? { service, cut: '' } : { service: m[1], cut: m[2] };
}

/** A record's `service` (or `auth_service`) as Emissary reads it: host and port, a note saying what of it is ignored. */
export function hostAndPort(field: string, value: unknown, notes: FieldNote[]): unknown {
  if (typeof value !== 'string') return value;
  const { service, cut } = serviceWithoutPath(value);
  if (cut !== '') {
    notes.push({
      field,
      note: `${cut} is ignored: Emissary reads a service's host and port alone, and warns of the rest`,
    });
  }
  return service;
}

/**
 * `keepalive` as Emissary reads it: `time`, which Emissary's documentation
 * writes but its schema names `idle_time`, is dropped with a note, as
 * Kubernetes prunes it and Emissary never reads it.
 */
export function keepaliveAsRead(field: string, value: unknown, notes: FieldNote[]): unknown {
  if (!isPlainObject(value) || !('time' in value)) return value;
  const rest = { ...value };
  delete rest.time;
  notes.push({
    field: `${field}.time`,
    note: 'ignored, as Emissary ignores it: its keepalive names the idle time idle_time (Kubernetes prunes time); write idle_time to set it',
  });
  return rest;
}
