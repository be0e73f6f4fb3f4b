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

/** The absolute URL of a path of the version's app, as the client reaches it. */
export type Link = (pathInVersion: string) => string;

/** How one API version shows a message. */
export interface MessageRepresentation {
  /** Every field a message has in this version, in the order sent; `fields=` may name these. */
  readonly fields: readonly string[];
  /** The fields other query arguments filter on, by equality. */
  readonly filterable: readonly string[];
  /**
   * The message as this version sends it. `link` gives the absolute URL of
   * a path of the version (`/messages/1`) as the client reaches it: one
   * root does not do, since a Mapping may route the client to part of the
   * version only (`/m/` to `/v1/messages/`).
   */
  represent(record: MessageRecord, link: Link): Record<string, unknown>;
}

/** One version of the API. */
export interface ApiVersion {
  /** `v1`, `v2`: also its path prefix. */
  readonly name: string;
  readonly message: MessageRepresentation;
}
