/**
 * @module gateway/config/module-schema
 * The zod schema of the `Module` record: the gateway-wide settings Emissary's
 * ambassador Module holds (CORS, error bodies, address filters, regular
 * expression bounds, client certificates).
 */
import { z } from 'zod';
import { corsSchema } from '../../cors';
import { MAX_REGEX_MAX_SIZE } from '../match/regex';
import { cidrProblem } from '../request/address-filter';
import { errorOverridesSchema } from './error-overrides';
import { recordBase } from './record-fields';
import { clientCertModuleFields } from './tls';

/** One rule of `ip_allow` / `ip_deny`: `{peer: <cidr>}` or `{remote: <cidr>}`. */
const addressRule = z
  .strictObject({ peer: z.string().optional(), remote: z.string().optional() })
  .superRefine((rule, ctx) => {
    const given = [
      rule.peer === undefined ? [] : ['peer', rule.peer],
      rule.remote === undefined ? [] : ['remote', rule.remote],
    ].filter((g) => g.length > 0);
    if (given.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: 'a rule is one of {peer: <address or CIDR>} or {remote: <address or CIDR>}',
      });
      return;
    }
    const problem = cidrProblem(given[0][1]);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: [given[0][0]], message: problem });
  });

/**
 * Gateway-wide settings, as Emissary's `Module` holds them:
 * `config: {cors: <policy>}` applies to every Mapping without a `cors` of its
 * own; `regex_max_size` bounds the Mappings' regular expressions.
 */
export const moduleSchema = z.strictObject({
  ...recordBase,
  kind: z.literal('Module'),
  config: z
    .strictObject({
      cors: corsSchema.optional(),
      /** Bodies for answers of these statuses, on every Mapping without its own list. */
      error_response_overrides: errorOverridesSchema.optional(),
      /** Only requests from these addresses are served (a 403 for the rest), before auth. */
      ip_allow: z.array(addressRule).optional(),
      /** Requests from these addresses are refused with a 403, before auth. */
      ip_deny: z.array(addressRule).optional(),
      /** `true`: no `x-envoy-*` header is added to an answer (`x-envoy-ratelimited` on a 429 of the rate-limit service). */
      suppress_envoy_headers: z.boolean().optional(),
      /** `true`: gRPC-Web calls (`application/grpc-web*`) to a `grpc: true` Mapping are translated to gRPC, as Envoy's grpc_web filter does. */
      enable_grpc_web: z.boolean().optional(),
      /** The largest program (RE2 instructions) a Mapping's regular expression may compile to, as Emissary's `regex_max_size`; default 200, at most 20 000. */
      regex_max_size: z
        .number()
        .int('must be a whole number of instructions')
        .positive('must be a whole number of instructions')
        .max(
          MAX_REGEX_MAX_SIZE,
          `must be at most ${MAX_REGEX_MAX_SIZE}: a larger program holds the event loop while it is compiled`,
        )
        .optional(),
      // What upstreams are told of a client's certificate (./tls/client-cert-fields).
      ...clientCertModuleFields,
    })
    .default({})
    .refine((c) => c.ip_allow === undefined || c.ip_deny === undefined, {
      message: 'give ip_allow or ip_deny, not both (as Emissary takes one)',
      path: ['ip_deny'],
    }),
});
