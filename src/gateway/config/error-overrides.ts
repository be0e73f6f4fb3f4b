/**
 * @module gateway/config/error-overrides
 * `error_response_overrides`, as Emissary's Module and Mapping write them:
 * for an answer of a given 4xx or 5xx status, the body the client gets
 * instead (`text_format`, `json_format` or `text_format_source`, with
 * Envoy's `%COMMAND%`s), and its `content_type`. A command the gateway
 * cannot fill in, or a `%` that starts none, is refused rather than sent as
 * written, as Envoy refuses it.
 */
import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { dataRecord } from '../../files';

/** The Envoy commands a body may use: what the gateway knows of every answer. */
const PLAIN_COMMANDS = [
  'RESPONSE_CODE',
  'PROTOCOL',
  'UPSTREAM_CLUSTER',
  'ROUTE_NAME',
  'HOSTNAME',
  'START_TIME',
  'DOWNSTREAM_REMOTE_ADDRESS',
  'DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT',
  'DOWNSTREAM_DIRECT_REMOTE_ADDRESS',
  'DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT',
  'DOWNSTREAM_LOCAL_ADDRESS',
  'DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT',
  'DOWNSTREAM_LOCAL_PORT',
] as const;
const PLAIN = new Set<string>(PLAIN_COMMANDS);
/** The commands that name a header: `%REQ(name)%`, `%REQ(name?other)%`, `%RESP(...)%`. */
const HEADER_COMMANDS = new Set(['REQ', 'RESP']);

/**
 * A command in a format, as Envoy parses one: `%NAME%`, `%NAME(arg)%`,
 * either with a `:length` that cuts its value; or `%%`, a literal `%`.
 */
export const FORMAT_COMMAND = /%%|%([A-Z0-9_]+)(?:\(([^)]*)\))?(?::([0-9]+))?%/g;

/** Why a format cannot be filled in, or undefined when it can. */
export function formatProblem(format: string): string | undefined {
  let end = 0;
  for (const found of format.matchAll(FORMAT_COMMAND)) {
    const [written, name, arg] = found;
    if (format.indexOf('%', end) < found.index) return strayPercent(format, end);
    end = found.index + written.length;
    if (name === undefined) continue;
    const known = arg === undefined ? PLAIN.has(name) : HEADER_COMMANDS.has(name) && /^[^?]+(\?[^?]+)?$/.test(arg);
    if (!known) {
      const all = [...PLAIN_COMMANDS, 'REQ(header)', 'RESP(header)'].map((c) => `%${c}%`).join(', ');
      return `uses Envoy's ${written}, which the gateway does not fill in; it knows ${all}`;
    }
  }
  return format.indexOf('%', end) >= 0 ? strayPercent(format, end) : undefined;
}

function strayPercent(format: string, from: number): string {
  const at = format.indexOf('%', from);
  return `has a % at ${at} that starts no command, which Envoy refuses: write %% for a literal %`;
}

/** The largest file `text_format_source` may name: a body is held in memory for every answer it replaces. */
const MAX_SOURCE_BYTES = 1024 * 1024;

/** A scalar Emissary writes as text: numbers and booleans become their text, as Emissary converts them. */
const scalarText = z.unknown().transform((v, ctx) => {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  ctx.addIssue({ code: 'custom', message: 'must be text, a number or a boolean, as Emissary takes it' });
  return z.NEVER;
});

const format = scalarText.superRefine((text, ctx) => {
  const problem = formatProblem(text);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

/** `text_format_source: {filename}`: the file is read once, when the configuration is. */
const formatSource = z.strictObject({ filename: z.string().min(1) }).transform((source, ctx) => {
  const problem = (message: string) => {
    ctx.addIssue({ code: 'custom', path: ['filename'], message });
    return z.NEVER;
  };
  try {
    if (statSync(source.filename).size > MAX_SOURCE_BYTES) return problem(`is larger than ${MAX_SOURCE_BYTES} bytes`);
    const text = readFileSync(source.filename, 'utf8');
    const wrong = formatProblem(text);
    return wrong === undefined ? text : problem(`its text ${wrong}`);
  } catch (err) {
    return problem(`cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
});

const body = z
  .strictObject({
    text_format: format.optional(),
    /** Keys and values of a JSON object; values are text, as Emissary passes them to Envoy. */
    json_format: dataRecord(z.string(), format).optional(),
    text_format_source: formatSource.optional(),
    content_type: z
      .string()
      .regex(/^[\x21-\x7e][\x20-\x7e]*$/, 'must be a media type')
      .optional(),
  })
  .superRefine((b, ctx) => {
    const given = [b.text_format, b.json_format, b.text_format_source].filter((f) => f !== undefined).length;
    if (given !== 1) {
      ctx.addIssue({ code: 'custom', message: 'give one of text_format, json_format and text_format_source' });
    }
  });

const statusMessage = 'must be an error status, 400 to 599, as in Emissary';

/** One override. */
const override = z.strictObject({
  /** A whole number, or its digits as text (an annotation's record), as Emissary reads it. */
  on_status_code: z.preprocess(
    (v) => (typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : v),
    z.number().int('must be a whole HTTP status').min(400, statusMessage).max(599, statusMessage),
  ),
  body,
});

/** `error_response_overrides`: a list of overrides, one status each. */
export const errorOverridesSchema = z
  .array(override)
  .min(1, 'gives at least one override')
  .superRefine((list, ctx) => {
    const seen = new Set<number>();
    list.forEach((o, i) => {
      if (seen.has(o.on_status_code)) {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'on_status_code'],
          message: `${o.on_status_code} is overridden twice`,
        });
      }
      seen.add(o.on_status_code);
    });
  });

export type ErrorOverrideRecord = z.output<typeof override>;
