/**
 * @module api/types
 * What the versioned API is built from: its dependencies, and what makes one
 * version differ from another.
 */
import type { MessageRecord, MessageStore } from './store';

/** What the API apps are built from; everything has a default. */
export interface ApiDeps {
  /** The accounts and messages served; the demo data by default. */
  store?: MessageStore;
  /**
   * Trust `X-Forwarded-Proto/-Host` for absolute URLs. Only the outermost Koa
   * app's setting counts, so it matters when an API app is served alone.
   */
  proxy?: boolean;
}

/** How one API version shows a message. */
export interface MessageRepresentation {
  /** Every field a message has in this version, in the order sent; `fields=` may name these. */
  readonly fields: readonly string[];
  /** The fields other query arguments filter on, by equality. */
  readonly filterable: readonly string[];
  /**
   * The message as this version sends it. `root` is the absolute URL of the
   * version's root (`http://host/v1`, with every mount prefix, no trailing slash).
   */
  represent(record: MessageRecord, root: string): Record<string, unknown>;
}

/** One version of the API. */
export interface ApiVersion {
  /** `v1`, `v2`: also its path prefix. */
  readonly name: string;
  readonly message: MessageRepresentation;
}
