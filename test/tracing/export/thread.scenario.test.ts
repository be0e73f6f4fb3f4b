/**
 * The export thread from the compiled package, as a gateway runs it: what
 * it sends leaves the gateway's buffers as they were. A buffer moved to a
 * thread is detached, and the first one detached in a process makes V8
 * check every typed array access for it from then on.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../support/process';
import { useOtlpCollector } from '../../support/otlp/collector';

const run = promisify(execFile);

describe('tracing export thread, compiled', function () {
  const collector = useOtlpCollector();

  it('sends batches without detaching a buffer of the process', async () => {
    const script = `
      const { ThreadExporter } = require(${JSON.stringify(join(REPO_ROOT, 'dist', 'tracing', 'export'))});
      const { BasicTracerProvider } = require('@opentelemetry/sdk-trace-base');
      const exporter = new ThreadExporter({ endpoint: process.argv[1], protocol: 'http/protobuf', headers: {}, timeoutMs: 10000 });
      const spans = [];
      const provider = new BasicTracerProvider({ spanProcessors: [{ onStart() {}, onEnd(s) { spans.push(s); }, forceFlush: async () => {}, shutdown: async () => {} }] });
      for (let i = 0; i < 50; i++) provider.getTracer('detach-test').startSpan('detach-' + i).end();
      let left = 3;
      const next = () => exporter.export(spans, (result) => {
        if (result.code !== 0) { console.error(String(result.error)); process.exit(1); }
        if (--left > 0) return next();
        exporter.shutdown().then(() => console.log('sent'));
      });
      next();
    `;
    const { stdout } = await run(
      process.execPath,
      ['--trace-protector-invalidation', '-e', script, `${collector.httpUrl}/v1/traces`],
      { cwd: REPO_ROOT },
    );
    assert.match(stdout, /^sent$/m);
    assert.doesNotMatch(stdout, /ArrayBufferDetaching/);
    const spans = await collector.waitFor((s) => s.filter((x) => x.name === 'detach-49').length === 3);
    assert.equal(spans.filter((x) => x.name.startsWith('detach-')).length, 150);
  });
});
