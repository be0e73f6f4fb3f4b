/**
 * A traced request through a whole Gatehouse, against real services: the
 * spans the collector receives, their links, their attributes, and the
 * context each service is sent.
 */
import assert from 'node:assert/strict';
import type { ReceivedSpan } from '../support/otlp/collector';
import { ALICE } from '../support/credentials';
import { startTracedRig, type TracedRig } from '../support/traced-rig';

const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

function parent(header: string | string[] | undefined): { traceId: string; spanId: string; flags: string } {
  const match = TRACEPARENT.exec(String(header));
  assert.ok(match, `a traceparent: ${String(header)}`);
  return { traceId: match[1], spanId: match[2], flags: match[3] };
}

function one(spans: readonly ReceivedSpan[], test: (s: ReceivedSpan) => boolean, what: string): ReceivedSpan {
  const found = spans.filter(test);
  assert.equal(found.length, 1, `one ${what} span among ${spans.map((s) => s.name).join(', ')}`);
  return found[0];
}

describe('tracing through the gateway', function () {
  let rig: TracedRig;
  before(async () => {
    rig = await startTracedRig();
  });
  after(async () => {
    await rig.stop();
  });

  it('continues the client trace: server span, auth, rate limit and upstream try as children, each service sent its span', async () => {
    const res = await fetch(`${rig.running.url}/up/things?token=s3cret&page=2`, {
      headers: {
        authorization: ALICE,
        traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
        tracestate: 'vendor=opaque,other=value',
        baggage: 'tenant=acme,plan=gold',
      },
    });
    assert.equal(res.status, 200);
    const spans = await rig.collector.waitFor((s) => s.filter((x) => x.traceId === CLIENT_TRACE).length >= 4);
    const ours = spans.filter((s) => s.traceId === CLIENT_TRACE);

    const server = one(ours, (s) => s.kind === 'SERVER', 'SERVER');
    assert.equal(server.name, 'GET /up/');
    assert.equal(server.parentSpanId, CLIENT_SPAN);
    assert.equal(server.traceState, 'vendor=opaque,other=value');
    assert.equal(server.attributes['http.request.method'], 'GET');
    assert.equal(server.attributes['url.path'], '/up/things');
    assert.equal(server.attributes['url.scheme'], 'http');
    assert.equal(server.attributes['url.query'], 'token=REDACTED&page=REDACTED');
    assert.equal(server.attributes['http.route'], '/up/');
    assert.equal(server.attributes['http.response.status_code'], 200);
    assert.equal(server.attributes['server.address'], '127.0.0.1');
    assert.equal(server.attributes['client.address'], '127.0.0.1');
    assert.equal(server.attributes['network.protocol.version'], '1.1');
    assert.equal(server.status.code, 0);
    assert.equal(server.resource['service.name'], 'gatehouse');

    const auth = one(ours, (s) => s.name === 'auth', 'auth');
    assert.equal(auth.kind, 'CLIENT');
    assert.equal(auth.parentSpanId, server.spanId);
    assert.equal(auth.attributes['gatehouse.auth.outcome'], 'allowed');
    assert.equal(auth.attributes['http.response.status_code'], 200);
    const limit = one(ours, (s) => s.name === 'ratelimit', 'ratelimit');
    assert.equal(limit.kind, 'CLIENT');
    assert.equal(limit.parentSpanId, server.spanId);
    assert.equal(limit.attributes['rpc.system'], 'grpc');
    assert.equal(limit.attributes['gatehouse.ratelimit.outcome'], 'ok');
    const upstream = one(ours, (s) => s.kind === 'CLIENT' && s.name === 'GET', 'upstream try');
    assert.equal(upstream.parentSpanId, server.spanId);
    assert.equal(upstream.attributes['http.response.status_code'], 200);
    assert.equal(upstream.attributes['url.full'], `${rig.upstream.url}/things?token=REDACTED&page=REDACTED`);

    // Each service got its own span as the parent, the client's trace and tracestate, and the baggage as sent.
    const atAuth = rig.authHeaders.at(-1)!;
    assert.deepEqual(parent(atAuth.traceparent), { traceId: CLIENT_TRACE, spanId: auth.spanId, flags: '01' });
    assert.equal(atAuth.tracestate, 'vendor=opaque,other=value');
    assert.equal(atAuth.baggage, 'tenant=acme,plan=gold');
    const atLimit = rig.limitMetadata.at(-1)!;
    assert.deepEqual(parent(atLimit.traceparent), { traceId: CLIENT_TRACE, spanId: limit.spanId, flags: '01' });
    const atUpstream = rig.upstream.received.at(-1)!.headers;
    assert.deepEqual(parent(atUpstream.traceparent), { traceId: CLIENT_TRACE, spanId: upstream.spanId, flags: '01' });
    assert.equal(atUpstream.tracestate, 'vendor=opaque,other=value');
    assert.equal(atUpstream.baggage, 'tenant=acme,plan=gold');
  });

  it('writes no credential, Authorization value or query value into any span', async () => {
    const res = await fetch(`${rig.running.url}/up/secret?api_key=k3y-VALUE`, { headers: { authorization: ALICE } });
    assert.equal(res.status, 200);
    const spans = await rig.collector.waitFor((s) =>
      s.some((x) => x.kind === 'SERVER' && x.attributes['url.path'] === '/up/secret'),
    );
    const text = JSON.stringify(spans);
    for (const secret of [ALICE, ALICE.slice('Basic '.length), 'wonderland', 'k3y-VALUE'])
      assert.ok(!text.includes(secret), `no span holds ${secret}`);
  });

  it('starts a new sampled trace for a malformed traceparent, and drops a tracestate without one', async () => {
    const res = await fetch(`${rig.running.url}/up/malformed`, {
      headers: { authorization: ALICE, traceparent: '00-not-a-trace-01', tracestate: 'vendor=x' },
    });
    assert.equal(res.status, 200);
    const sent = parent(rig.upstream.received.at(-1)!.headers.traceparent);
    assert.equal(sent.flags, '01');
    assert.equal(rig.upstream.received.at(-1)!.headers.tracestate, undefined);
    const spans = await rig.collector.waitFor((s) => s.some((x) => x.traceId === sent.traceId && x.kind === 'SERVER'));
    const server = one(spans, (s) => s.traceId === sent.traceId && s.kind === 'SERVER', 'SERVER');
    assert.equal(server.parentSpanId, '');
  });

  it('follows a client that did not sample: nothing exported, the flag and tracestate passed on', async () => {
    const unsampled = '11111111111111111111111111111111';
    const res = await fetch(`${rig.running.url}/up/unsampled`, {
      headers: { authorization: ALICE, traceparent: `00-${unsampled}-2222222222222222-00`, tracestate: 'vendor=left' },
    });
    assert.equal(res.status, 200);
    const received = rig.upstream.received.at(-1)!.headers;
    const sent = parent(received.traceparent);
    assert.equal(sent.traceId, unsampled);
    assert.equal(sent.flags, '00');
    assert.equal(received.tracestate, 'vendor=left');
    assert.notEqual(sent.spanId, '2222222222222222');
    // A later sampled request's spans arrive: the unsampled one's would have come with them or before.
    await fetch(`${rig.running.url}/up/after`, { headers: { authorization: ALICE } });
    await rig.collector.waitFor((s) => s.some((x) => x.attributes['url.path'] === '/up/after'));
    assert.ok(!rig.collector.spans.some((s) => s.traceId === unsampled));
  });

  it('marks a 5xx as an error of the server span, a 4xx not, and records the refusal', async () => {
    const refused = await fetch(`${rig.running.url}/nowhere`);
    assert.equal(refused.status, 404);
    const spans = await rig.collector.waitFor((s) => s.some((x) => x.attributes['url.path'] === '/nowhere'));
    const notFound = one(spans, (s) => s.attributes['url.path'] === '/nowhere', 'refused');
    assert.equal(notFound.name, 'GET');
    assert.equal(notFound.status.code, 0);
    assert.equal(notFound.attributes['error.type'], undefined);
    assert.deepEqual(
      notFound.events.map((e) => [e.name, e.attributes['gatehouse.check']]),
      [['gatehouse.refused', 'NOT_FOUND']],
    );
    const denied = await fetch(`${rig.running.url}/up/denied`, { headers: { authorization: 'Basic bm9ib2R5Ong=' } });
    assert.equal(denied.status, 401);
    const after = await rig.collector.waitFor((s) =>
      s.some((x) => x.name === 'auth' && x.attributes['gatehouse.auth.outcome'] === 'denied'),
    );
    const deniedServer = one(after, (s) => s.attributes['url.path'] === '/up/denied', 'denied');
    assert.equal(deniedServer.status.code, 0);
    assert.equal(deniedServer.attributes['http.response.status_code'], 401);
  });

  it('shows each upstream try as a span: a retry carries its resend count, a failure its type', async () => {
    const retried = await fetch(`${rig.running.url}/retry/once`, { headers: { authorization: ALICE } });
    assert.equal(retried.status, 200);
    let spans = await rig.collector.waitFor((s) => s.some((x) => x.attributes['url.path'] === '/retry/once'));
    const server = one(spans, (s) => s.attributes['url.path'] === '/retry/once', 'retried');
    const tries = spans.filter((s) => s.parentSpanId === server.spanId && s.kind === 'CLIENT' && s.name === 'GET');
    assert.deepEqual(
      tries.map((t) => [t.attributes['http.response.status_code'], t.attributes['http.request.resend_count'] ?? 0]),
      [
        [503, 0],
        [200, 1],
      ],
    );
    assert.equal(tries[0].status.code, 2);
    const sentSpans = rig.upstream.received.slice(-2).map((r) => parent(r.headers.traceparent).spanId);
    assert.deepEqual(sentSpans, [tries[0].spanId, tries[1].spanId]);

    const dead = await fetch(`${rig.running.url}/dead/x`, { headers: { authorization: ALICE } });
    assert.equal(dead.status, 503);
    spans = await rig.collector.waitFor((s) => s.some((x) => x.attributes['url.path'] === '/dead/x'));
    const failed = one(spans, (s) => s.attributes['url.path'] === '/dead/x', 'dead');
    assert.equal(failed.status.code, 2);
    assert.equal(failed.attributes['error.type'], 'UPSTREAM_UNAVAILABLE');
    const attempt = one(spans, (s) => s.parentSpanId === failed.spanId && s.name === 'GET', 'failed try');
    assert.equal(attempt.attributes['error.type'], 'refused');
    assert.equal(attempt.status.code, 2);
  });

  it('puts trace_id and span_id of the server span on the access line', async () => {
    const res = await fetch(`${rig.running.url}/up/logged`, {
      headers: {
        authorization: ALICE,
        'x-request-id': 'traced-line',
        traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
      },
    });
    assert.equal(res.status, 200);
    const [line] = await rig.running.log.waitForLines(1, (l) => l.msg === 'request' && l.req_id === 'traced-line');
    const spans = await rig.collector.waitFor((s) => s.some((x) => x.attributes['url.path'] === '/up/logged'));
    const server = one(spans, (s) => s.attributes['url.path'] === '/up/logged', 'logged');
    assert.equal(line.trace_id, CLIENT_TRACE);
    assert.equal(line.span_id, server.spanId);
  });

  it('sends the built-in module the server span as parent, as an upstream would be', async () => {
    const res = await fetch(`${rig.running.url}/v1/hotels/bookings/`, {
      headers: { authorization: ALICE, traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
    });
    assert.equal(res.status, 200);
    const spans = await rig.collector.waitFor((s) =>
      s.some((x) => x.kind === 'SERVER' && x.attributes['url.path'] === '/v1/hotels/bookings/'),
    );
    const server = one(
      spans,
      (s) => s.kind === 'SERVER' && s.attributes['url.path'] === '/v1/hotels/bookings/',
      'hotels',
    );
    assert.equal(server.name, 'GET /v1/hotels');
    assert.equal(server.attributes['gatehouse.mapping'], 'hotels');
  });
});
