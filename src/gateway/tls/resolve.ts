/**
 * @module gateway/tls/resolve
 * A configuration's TLS records made into what the gateway serves with:
 * the certificates of the HTTPS port by name (each Host with a
 * certificate, and each TLSContext with `hosts`), the Hosts requests are
 * routed by, the names whose cleartext requests are redirected, TLS to the
 * upstreams that name a TLSContext, and the X-Forwarded-Client-Cert
 * policy. Every problem is collected, each at its record and field; a
 * configuration with any is not served, and the one in service keeps
 * serving.
 *
 * A Host's Secret is looked for in its namespace, or the one its
 * `tlsSecret.namespace` names; a TLSContext's as ./contexts says.
 */
import {
  CertificateStore,
  servedContext,
  type CertificatePair,
  type ClientCertPolicy,
  type ServedContext,
  type ServedEntry,
  type UpstreamTls,
} from '../../tls';
import type { ConfigProblem } from '../config/problems';
import type { GatewayConfig, GatewayRecord, MappingRecord, RecordSource } from '../config/schema';
import { DEFAULT_NAMESPACE, type HostRecord } from '../config/tls';
import { parseHostPattern, type HostPattern } from '../match/host-match';
import { ContextReader, secretRef, settingsField, type TlsReadOptions } from './contexts';
import { hostRoute, hostSelects, type HostRoute } from './hosts';
import type { CertificateInService } from './ledger';

export type { TlsReadOptions } from './contexts';

/** What a configuration's TLS records give the gateway. */
export interface GatewayTls {
  /** The certificates of the HTTPS port; null when none is served. */
  readonly certificates: CertificateStore | null;
  /** The Hosts requests are routed by, each with whether it serves a Mapping; empty when there is none. */
  readonly hosts: readonly { readonly route: HostRoute<null>; readonly selects: (m: MappingRecord) => boolean }[];
  /** Names whose cleartext requests are redirected to HTTPS (a TLSContext's `redirect_cleartext_from`); null for `*`. */
  readonly redirected: readonly (HostPattern | null)[];
  /** TLS to upstreams, by TLSContext name. */
  readonly upstreams: ReadonlyMap<string, UpstreamTls>;
  readonly clientCert: ClientCertPolicy;
  /** Every certificate in service, described. */
  readonly inService: readonly CertificateInService[];
  /** The files the certificates were read from. */
  readonly files: readonly string[];
}

const NO_TLS: GatewayTls = {
  certificates: null,
  hosts: [],
  redirected: [],
  upstreams: new Map(),
  clientCert: { forward: 'SANITIZE', details: {} },
  inService: [],
  files: [],
};

class Resolution extends ContextReader {
  /** A Host's entry (when it has a certificate) and its route. */
  host(h: HostRecord): { entry?: ServedEntry; settingsOf: GatewayRecord } {
    const who = `Host ${h.name}`;
    const context = h.tlsContext === undefined ? undefined : this.context(h, h.tlsContext.name, 'tlsContext.name');
    let pair: CertificatePair | undefined;
    if (h.tlsSecret !== undefined) {
      const ref = { name: h.tlsSecret.name, namespace: h.tlsSecret.namespace ?? h.namespace ?? DEFAULT_NAMESPACE };
      pair = this.reader.secretPair({ ...ref, field: 'tlsSecret.name' }, { record: h, who, role: 'serves' });
      if (context?.secret !== undefined) {
        const theirs = secretRef(context.secret, context.namespace, context.secret_namespacing, 'secret');
        if (theirs.name !== ref.name || theirs.namespace !== ref.namespace)
          this.reader.problem(
            h,
            'tlsContext.name',
            `TLSContext ${context.name} serves Secret ${theirs.namespace}/${theirs.name}, and tlsSecret names ${ref.namespace}/${ref.name}: name one certificate`,
          );
      }
    } else if (context !== undefined) {
      pair = this.contextPair(context, who, 'serves');
    }
    const settingsOf: GatewayRecord = context ?? h;
    const settings = context
      ? this.settings(context, context, context.namespace, '')
      : this.settings(h, h.tls ?? {}, h.namespace, 'tls.');
    return { entry: pair && { origin: who, names: [h.hostname], pair, settings }, settingsOf };
  }

  /** The served contexts of the entries, in order; a name served twice with two certificates is a problem. */
  served(
    entries: readonly { entry: ServedEntry; settingsOf: GatewayRecord; record: GatewayRecord }[],
  ): ServedContext[] {
    const byName = new Map<string, { entry: ServedEntry }>();
    const out: ServedContext[] = [];
    for (const { entry, settingsOf, record } of entries) {
      let clash = false;
      for (const name of entry.names) {
        const first = byName.get(name);
        if (first === undefined) byName.set(name, { entry });
        else if (!first.entry.pair.cert.equals(entry.pair.cert)) {
          clash = true;
          this.reader.problem(
            record,
            record.kind === 'Host' ? 'hostname' : 'hosts',
            `${name} is served by ${first.entry.origin} with another certificate`,
          );
        }
      }
      if (clash) continue;
      try {
        out.push(servedContext(entry));
      } catch (err) {
        this.reader.problem(settingsOf, settingsField((err as Error).message), (err as Error).message);
      }
    }
    return out;
  }

  run(): GatewayTls {
    const { config, reader } = this;
    reader.checkTlsSecrets();
    const entries: { entry: ServedEntry; settingsOf: GatewayRecord; record: GatewayRecord }[] = [];
    const hosts = (config.hosts ?? []).map((h) => {
      const { entry, settingsOf } = this.host(h);
      if (entry !== undefined) entries.push({ entry, settingsOf, record: h });
      return { route: hostRoute(h, entry !== undefined, null), selects: (m: MappingRecord) => hostSelects(h, m) };
    });
    const redirected: (HostPattern | null)[] = [];
    for (const c of config.tlsContexts ?? []) {
      if (c.hosts === undefined || c.hosts.length === 0) continue;
      const who = `TLSContext ${c.name}`;
      const pair = this.contextPair(c, who, 'serves');
      const settings = this.settings(c, c, c.namespace, '');
      if (pair !== undefined)
        entries.push({ entry: { origin: who, names: c.hosts, pair, settings }, settingsOf: c, record: c });
      if (c.redirect_cleartext_from !== undefined)
        for (const name of c.hosts) {
          const parsed = parseHostPattern(name, true);
          if (typeof parsed !== 'string') redirected.push(parsed);
        }
    }
    const contexts = this.served(entries);
    // TLS to upstreams: the contexts a `tls` names, and those that serve no name (none, or no Host's).
    const upstreams = new Map<string, UpstreamTls>();
    const named = this.references();
    const ofHosts = new Set((config.hosts ?? []).flatMap((h) => (h.tlsContext ? [h.tlsContext.name] : [])));
    for (const c of config.tlsContexts ?? []) {
      if ((c.hosts?.length || ofHosts.has(c.name)) && !named.has(c.name)) continue;
      const upstream = this.upstream(c);
      if (upstream !== undefined) upstreams.set(c.name, upstream);
    }
    const module = config.module?.config;
    return {
      certificates: contexts.length > 0 ? new CertificateStore(contexts) : null,
      hosts,
      redirected,
      upstreams,
      clientCert: {
        forward: module?.forward_client_cert_details ?? 'SANITIZE',
        details: module?.set_current_client_cert_details ?? {},
      },
      inService: reader.ledger.list(),
      files: [...reader.files],
    };
  }

  /** The TLSContexts a `tls` names; a name no TLSContext has is a problem. */
  private references(): Set<string> {
    const { config } = this;
    const named = new Set<string>();
    const refer = (record: GatewayRecord, name: string) => {
      if (this.context(record, name, 'tls') !== undefined) named.add(name);
    };
    for (const m of config.mappings) if (m.tls !== undefined) refer(m, m.tls);
    for (const record of [config.authService, config.rateLimitService]) {
      if (record !== undefined && typeof record.tls === 'string' && record.tls !== '') refer(record, record.tls);
    }
    return named;
  }
}

/** Whether a Mapping, the AuthService or the RateLimitService names a TLSContext in its `tls`. */
function namesTlsContext(config: GatewayConfig): boolean {
  if (config.mappings.some((m) => m.tls !== undefined)) return true;
  return [config.authService, config.rateLimitService].some((r) => typeof r?.tls === 'string' && r.tls !== '');
}

/**
 * The TLS a configuration serves with, and its problems (none: it can be
 * served). `sourceOf` tells where each record was read, for problems and
 * for the files a record names relative to its own.
 */
export function resolveTls(
  config: GatewayConfig,
  sourceOf: (record: object) => RecordSource | undefined,
  options: TlsReadOptions = {},
): { tls: GatewayTls; problems: ConfigProblem[] } {
  // A `tls` that names a TLSContext is resolved even in a folder without one, so that the missing context is said.
  const none =
    !config.hosts?.length &&
    !config.tlsContexts?.length &&
    !config.secrets?.length &&
    config.module?.config.forward_client_cert_details === undefined &&
    !namesTlsContext(config);
  if (none) return { tls: NO_TLS, problems: [] };
  const resolution = new Resolution(config, sourceOf, options);
  const tls = resolution.run();
  // A context that serves names and upstreams alike is read twice: each problem is said once.
  const said = new Set<string>();
  const problems = resolution.reader.problems.filter((p) => !said.has(p.text) && said.add(p.text));
  return { tls, problems };
}
