/**
 * @module cors/schema
 * A CORS policy as Emissary spells it, as a Mapping's `cors` or a Module's
 * `config.cors` holds it: the zod schema the gateway's records are checked
 * with, and the type it yields.
 */
import { z } from 'zod';

/** A CORS policy, as Emissary spells it. */
export const corsSchema = z.strictObject({
  origins: z.union([z.string(), z.array(z.string())]),
  methods: z.union([z.string(), z.array(z.string())]).optional(),
  headers: z.union([z.string(), z.array(z.string())]).optional(),
  exposed_headers: z.union([z.string(), z.array(z.string())]).optional(),
  credentials: z.boolean().default(false),
  max_age: z.union([z.number().int().nonnegative(), z.string()]).optional(),
});

/** A CORS policy with its defaults applied. */
export type CorsPolicy = z.output<typeof corsSchema>;
