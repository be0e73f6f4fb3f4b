/**
 * @module gateway/config/record-fields
 * What every configuration record has (`apiVersion`, `name`), and the field
 * types several kinds of record share: header names, timeouts.
 */
import { z } from 'zod';
import { HEADER_NAME } from './headers';
import { API_VERSION } from './api-version';

/** A header name, in lower case as Node gives them. */
export const headerName = z
  .string()
  .regex(HEADER_NAME, 'must be an HTTP header name')
  .transform((h) => h.toLowerCase());

/** A timeout in milliseconds, at most ten minutes, `fallback` when left out. */
export const timeoutMs = (fallback: number) => z.number().int().positive().max(600_000).default(fallback);

/** The fields of every record. */
export const recordBase = {
  apiVersion: z.literal(API_VERSION, { error: `must be ${API_VERSION}` }),
  name: z.string().min(1),
};
