/**
 * @module test/support/tls-config
 * A config folder of TLS records for the gateway's tests: real
 * certificates (test/support/certificates), the folder's file written and
 * loaded as a start loads it, and the gateway built from it, or the
 * problems that refuse it, with the folder shown as `config`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConfigError,
  createGateway,
  loadConfig,
  type Gateway,
  type GatewayConfig,
  type GatewayOptions,
} from '../../src/gateway';
import { CertificateFolder } from './certificates';

/** A folder of certificates and one of config, removed together. */
export class TlsConfigFolder {
  readonly certs = new CertificateFolder();
  readonly dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-config-'));

  /** Writes `text` as the folder's only record file and loads it, failing the test when it does not load. */
  async config(text: string): Promise<GatewayConfig> {
    writeFileSync(join(this.dir, 'services.yaml'), text);
    const loaded = await loadConfig(this.dir);
    if (!loaded.ok) assert.fail(loaded.problems.map((p) => p.text).join('\n'));
    return loaded.config;
  }

  /** A gateway serving `text`. */
  async gateway(text: string, options: GatewayOptions = {}): Promise<Gateway> {
    return createGateway({ ...options, config: await this.config(text) });
  }

  /** The problems that refuse `text` when a gateway is built from it, the folder shown as `config`. */
  async refusals(text: string, options: GatewayOptions = {}): Promise<string[]> {
    const config = await this.config(text);
    try {
      const gateway = createGateway({ ...options, config });
      await gateway.close();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return err.problems.map((p) => p.text.split(this.dir).join('config'));
    }
    return assert.fail('the configuration should have been refused');
  }

  remove(): void {
    this.certs.remove();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** An Emissary resource as YAML. */
export function resource(kind: string, name: string, spec: Record<string, unknown>, namespace?: string): string {
  const metadata = namespace === undefined ? `{name: ${name}}` : `{name: ${name}, namespace: ${namespace}}`;
  return `apiVersion: getambassador.io/v3alpha1\nkind: ${kind}\nmetadata: ${metadata}\nspec: ${JSON.stringify(spec)}\n`;
}

/** Documents of one file. */
export function documents(...docs: string[]): string {
  return docs.join('---\n');
}
