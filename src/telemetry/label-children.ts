/**
 * @module telemetry/label-children
 * Caches of prom-client label children, so that recording on the hot path
 * neither hashes nor allocates.
 */

/**
 * Caches of prom-client label children, by label values: `labels()` hashes
 * and allocates on every call. One per arity, so that a lookup takes no
 * array of its arguments.
 */
export function childCache2<C>(make: (a: string, b: string) => C): (a: string, b: string) => C {
  const root = new Map<string, Map<string, C>>();
  return (a, b) => {
    let byA = root.get(a);
    if (byA === undefined) root.set(a, (byA = new Map<string, C>()));
    let child = byA.get(b);
    if (child === undefined) byA.set(b, (child = make(a, b)));
    return child;
  };
}

/** As {@link childCache2}, for three labels. */
export function childCache3<C>(make: (a: string, b: string, c: string) => C): (a: string, b: string, c: string) => C {
  const root = new Map<string, (b: string, c: string) => C>();
  return (a, b, c) => {
    let byA = root.get(a);
    if (byA === undefined) root.set(a, (byA = childCache2((b2, c2) => make(a, b2, c2))));
    return byA(b, c);
  };
}
