/**
 * @module test/tracing/grpc-auth
 * A traced request checked by a gRPC ext_authz service: the check is a
 * CLIENT span of the request's trace, and the service is sent that span as
 * its parent in the call's metadata, as Envoy's ext_authz filter sends it.
 */
import assert from 'node:assert/strict';
import { startExtAuthzServer, type ExtAuthzServer } from '../support/ext-authz-server';
import { copyConfig, type TempConfig } from '../support/config-folder';
import { startGatehouse, type Running } from '../support/gatehouse';
import { startOtlpCollector, type OtlpCollector } from '../support/otlp/collector';
import { close } from '../support/server';
import { recordingUpstream } from '../support/upstreams';

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

describe('tracing a request checked by a gRPC AuthService', function () {
  let authz: ExtAuthzServer;
  let collector: OtlpCollector;
  let upstream: Awaited<ReturnType<typeof recordingUpstream>>;
  let config: TempConfig;
  let running: Running;

  before(async () => {
    authz = await startExtAuthzServer();
    collector = await startOtlpCollector();
    upstream = await recordingUpstream((_req, res) => res.writeHead(200).end('ok'));
    config = copyConfig();
    config.unlink('services.yaml');
    config.write(
      'services.yaml',
      `apiVersion: gateway/v1
kind: AuthService
name: authentication
auth_service: ${authz.address}
proto: grpc
protocol_version: v3
---
apiVersion: gateway/v1
kind: Mapping
name: upstream
prefix: /up/
service: ${upstream.url}
`,
    );
    running = await startGatehouse({ configDir: config.dir, otlpEndpoint: collector.httpUrl, bspScheduleDelayMs: 20 });
  });
  after(async () => {
    await running?.stop();
    await close(upstream?.server);
    await authz?.close();
    await collector?.close();
    config?.remove();
  });

  it('sends the service the check span as its parent, in the trace the client started', async () => {
    const res = await fetch(`${running.url}/up/things`, {
      headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, tracestate: 'vendor=opaque' },
    });
    assert.equal(res.status, 200);
    // The server span ends after its child, and may come in a later export.
    const spans = await collector.waitFor(
      (all) =>
        all.some((s) => s.traceId === CLIENT_TRACE && s.name === 'auth') &&
        all.some((s) => s.traceId === CLIENT_TRACE && s.kind === 'SERVER'),
    );
    const ours = spans.filter((s) => s.traceId === CLIENT_TRACE);
    const server = ours.find((s) => s.kind === 'SERVER')!;
    const auth = ours.find((s) => s.name === 'auth')!;
    assert.equal(auth.kind, 'CLIENT');
    assert.equal(auth.parentSpanId, server.spanId);
    assert.equal(auth.attributes['gatehouse.auth.outcome'], 'allowed');
    const sent = authz.metadata.at(-1)!;
    assert.equal(sent.traceparent, `00-${CLIENT_TRACE}-${auth.spanId}-01`);
    assert.equal(sent.tracestate, 'vendor=opaque');
  });

  it('ends the check span as denied when the service refuses, and the upstream is not called', async () => {
    const calls = upstream.received.length;
    authz.answer = () => ({ status: { code: 7 }, denied_response: { status: { code: 403 }, body: 'no' } });
    const trace = '0af7651916cd43dd8448eb211c80319c';
    const res = await fetch(`${running.url}/up/things`, { headers: { traceparent: `00-${trace}-${CLIENT_SPAN}-01` } });
    assert.equal(res.status, 403);
    const spans = await collector.waitFor((all) => all.some((s) => s.traceId === trace && s.name === 'auth'));
    const auth = spans.find((s) => s.traceId === trace && s.name === 'auth')!;
    assert.equal(auth.attributes['gatehouse.auth.outcome'], 'denied');
    assert.equal(auth.attributes['http.response.status_code'], 403);
    assert.equal(upstream.received.length, calls);
  });
});
