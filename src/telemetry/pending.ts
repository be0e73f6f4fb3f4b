/**
 * @module telemetry/pending
 * Counts made on the request path, handed to prom-client in one increment:
 * its `inc` hashes the label values on every call, which costs more than the
 * rest of the counting. What waits is handed over before every scrape (the
 * metrics' `collect`), so that a scrape sees every request.
 */

/** Something that waits to be handed to prom-client. */
export interface Pending {
  flush(): void;
}

/** Increments of one labelled counter, added up until they are handed over. */
export class PendingCount implements Pending {
  count = 0;
  constructor(private readonly child: { inc(value?: number): void }) {}
  flush(): void {
    if (this.count === 0) return;
    const n = this.count;
    this.count = 0;
    this.child.inc(n);
  }
}
