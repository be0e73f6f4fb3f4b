/**
 * @module errors/define
 * How an error is declared: its status, the `detail` of its body as a
 * template whose `{name}` marks take values when it is raised, and the
 * headers it always carries. The types read a template's marks, so that the
 * values an error is raised with are checked by the compiler.
 */

/** One error a client can get, as the registry declares it. */
export interface ErrorSpec {
  /** The HTTP status it is answered with. */
  readonly status: number;
  /**
   * The `detail` of its body. `{name}` marks a value given when it is
   * raised (`the request body is larger than {limit} bytes`). None: its
   * body has no `detail`.
   */
  readonly detail?: string;
  /** Headers it is always answered with, besides those it is raised with. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The setting that chooses its status instead, when one does
   * (`status_on_error`): it is then raised with the status, and `status`
   * is that setting's default.
   */
  readonly statusFrom?: string;
  /** What the reference says of it beyond its detail, when the template alone does not tell what a value is. */
  readonly about?: string;
}

/** The names of the values a detail template takes: `'within {timeoutMs} ms'` gives `'timeoutMs'`. */
export type TemplateValues<T extends string> = T extends `${string}{${infer Name}}${infer Rest}`
  ? Name | TemplateValues<Rest>
  : never;

/** Errors of one module, by name: the names are the registry's stable codes (`LIMIT_NOT_INTEGER`). */
export type ErrorGroup = Readonly<Record<string, ErrorSpec>>;

/**
 * Declares a module's errors. The declarations keep their literal types,
 * from which the values of each template are read.
 */
export function defineErrors<const T extends ErrorGroup>(errors: T): T {
  for (const [code, spec] of Object.entries(errors)) {
    if (!/^[A-Z][A-Z0-9_]*$/.test(code)) throw new Error(`error code ${code} is not UPPER_SNAKE_CASE`);
    if (spec.status < 400 || spec.status > 599)
      throw new Error(`error ${code} has status ${spec.status}, not 4xx or 5xx`);
  }
  return errors;
}

/** A detail template split at its marks, to fill without parsing it again. */
export interface CompiledTemplate {
  /** The text around the marks: one more than `names`. */
  readonly parts: readonly string[];
  /** The marks' names, in order. */
  readonly names: readonly string[];
}

const MARK = /\{([A-Za-z][A-Za-z0-9]*)\}/g;

/** Splits `template` at its `{name}` marks. */
export function compileTemplate(template: string): CompiledTemplate {
  const parts: string[] = [];
  const names: string[] = [];
  let from = 0;
  for (const match of template.matchAll(MARK)) {
    parts.push(template.slice(from, match.index));
    names.push(match[1]);
    from = match.index + match[0].length;
  }
  parts.push(template.slice(from));
  return { parts, names };
}

/** The template filled with `values`, each written as `String` writes it. */
export function fillTemplate(compiled: CompiledTemplate, values: Readonly<Record<string, unknown>>): string {
  const { parts, names } = compiled;
  let text = parts[0];
  for (let i = 0; i < names.length; i++) text += String(values[names[i]]) + parts[i + 1];
  return text;
}
