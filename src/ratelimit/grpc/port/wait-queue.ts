/**
 * @module ratelimit/grpc/port/wait-queue
 * The calls waiting for their request, oldest first, as a list linked
 * through the calls themselves. Not a Map or a Set: a call enters and leaves
 * within microseconds, thousands of times a second, and a Map's tables
 * live in the old generation, from where they keep the calls of the moment
 * reachable through every scavenge of the young one, which then copies them
 * instead of freeing them. A list holds a call only while it is linked.
 */

/** A member of a {@link WaitQueue}: its links are the queue's to set. */
export abstract class QueuedCall {
  /** When its request (or its next message) began to be awaited, by performance.now(). */
  since = 0;
  /** @internal */
  previous: QueuedCall | undefined = undefined;
  /** @internal */
  next: QueuedCall | undefined = undefined;
  /** @internal */
  queued = false;
}

export class WaitQueue<T extends QueuedCall> {
  private firstCall: T | undefined = undefined;
  private lastCall: T | undefined = undefined;
  private count = 0;

  /** How many calls are in it. */
  get size(): number {
    return this.count;
  }

  /** The call that has waited longest. */
  get first(): T | undefined {
    return this.firstCall;
  }

  /** The call after `call`, in the order they began to wait. */
  after(call: T): T | undefined {
    return call.next as T | undefined;
  }

  /** Puts `call` last, taking it out first if it is in. */
  push(call: T): void {
    this.remove(call);
    call.previous = this.lastCall;
    if (this.lastCall === undefined) this.firstCall = call;
    else this.lastCall.next = call;
    this.lastCall = call;
    call.queued = true;
    this.count++;
  }

  /** Takes `call` out; a call not in it is left as it is. */
  remove(call: T): void {
    if (!call.queued) return;
    const { previous, next } = call;
    if (previous === undefined) this.firstCall = next as T | undefined;
    else previous.next = next;
    if (next === undefined) this.lastCall = previous as T | undefined;
    else next.previous = previous;
    call.previous = call.next = undefined;
    call.queued = false;
    this.count--;
  }
}
