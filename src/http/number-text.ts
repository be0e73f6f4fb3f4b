/**
 * @module http/number-text
 * The text of a number that changes with each request, for a header, a log
 * line or a Redis argument, made without leaving old-generation garbage.
 */

/**
 * `String(n)` for a finite number, as a new young string. `String(n)` and
 * template literals keep the text of each number they convert in V8's
 * number-string cache, which allocates it in the old generation: a number
 * that differs from one request to the next (what remains of a limit, a
 * duration, a deadline) leaves a string there on each request, and the old
 * generation fills until a mark-compact pauses the event loop for
 * milliseconds. JSON.stringify writes the same digits outside that cache.
 */
export function numberText(n: number): string {
  return JSON.stringify(n);
}
