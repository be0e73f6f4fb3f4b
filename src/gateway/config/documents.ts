/**
 * @module gateway/config/documents
 * What a YAML document of a config folder looks like, by its keys alone: a
 * gateway record, an Emissary resource, a Kubernetes manifest, rate limits
 * in envoyproxy/ratelimit's format, the booking catalogue, or none of them.
 * A file is read by its name; this says when a document of it was written
 * for a file of another kind, so that it is not passed over in silence.
 */
import { API_VERSION } from './schema';
import { RECORD_KINDS } from './validate';

/** The kinds of document a config folder holds. */
export type DocumentShape = 'record' | 'emissary' | 'manifest' | 'limits' | 'bookings' | 'other';

/** A document of a records file that holds no record, and what it looks like. */
export interface IgnoredDocument {
  readonly file: string;
  /** Its place in the file, counted from 1. */
  readonly index: number;
  readonly shape: DocumentShape;
  /** A few words on it: `Service quote`, `domain gateway`, `keys a, b`. */
  readonly what: string;
}

const API_GROUP = API_VERSION.slice(0, API_VERSION.indexOf('/') + 1);
const BOOKING_KEYS = ['hotels', 'cars', 'hotel_bookings', 'car_bookings'];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What `doc` looks like. */
export function documentShape(doc: unknown): DocumentShape {
  if (!isPlainObject(doc)) return 'other';
  const { kind, apiVersion } = doc;
  if (typeof apiVersion === 'string' && apiVersion.startsWith('getambassador.io/')) return 'emissary';
  const record = typeof kind === 'string' && RECORD_KINDS.includes(kind);
  if (record || (typeof apiVersion === 'string' && apiVersion.startsWith(API_GROUP))) return 'record';
  if (typeof kind === 'string' && isPlainObject(doc.metadata)) return 'manifest';
  if ('domain' in doc || 'descriptors' in doc) return 'limits';
  if (BOOKING_KEYS.some((key) => key in doc)) return 'bookings';
  return 'other';
}

/** At most this many keys are named of a document of no known shape. */
const KEYS_NAMED = 4;

/** A few words on `doc`, of shape `shape`: its kind and name, its domain, or its first keys. */
export function documentWhat(doc: unknown, shape: DocumentShape = documentShape(doc)): string {
  if (!isPlainObject(doc)) return Array.isArray(doc) ? 'a list' : doc === null ? 'empty' : `a ${typeof doc}`;
  const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : undefined);
  const metadata = isPlainObject(doc.metadata) ? doc.metadata : {};
  const name = text(doc.name) ?? text(metadata.name);
  if (shape === 'record' || shape === 'emissary' || shape === 'manifest')
    return [text(doc.kind) ?? 'record', name].filter(Boolean).join(' ');
  if (shape === 'limits') {
    const domain = text(doc.domain);
    return domain === undefined ? 'descriptors' : `domain ${domain}`;
  }
  const keys = Object.keys(doc);
  if (shape === 'bookings') return BOOKING_KEYS.filter((key) => key in doc).join(', ');
  if (keys.length === 0) return 'an empty mapping';
  return `keys ${keys.slice(0, KEYS_NAMED).join(', ')}${keys.length > KEYS_NAMED ? ', ...' : ''}`;
}

/** What a document of `shape` is, in words, for a message. */
export function shapeText(shape: DocumentShape): string {
  switch (shape) {
    case 'record':
      return 'a gateway record';
    case 'emissary':
      return 'an Emissary resource';
    case 'manifest':
      return 'a Kubernetes manifest';
    case 'limits':
      return "rate limits in envoyproxy/ratelimit's format (domain, descriptors)";
    case 'bookings':
      return 'the booking catalogue (hotels, cars, bookings)';
    default:
      return 'no record, manifest or Emissary resource';
  }
}
