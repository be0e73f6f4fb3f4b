import assert from 'node:assert/strict';
import { Counter, Registry } from 'prom-client';
import { PendingCount } from '../../src/telemetry/pending';

describe('telemetry/pending', () => {
  it('adds up counts and hands them over in one increment', async () => {
    const registry = new Registry();
    const counter = new Counter({ name: 'done_total', help: 'Done.', labelNames: ['result'], registers: [registry] });
    const pending = new PendingCount(counter.labels('ok'));
    pending.count += 5;
    pending.flush();
    pending.flush();
    assert.match(await registry.metrics(), /done_total\{result="ok"\} 5\n/);
  });
});
