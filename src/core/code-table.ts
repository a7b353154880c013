/**
 * A lookup table keyed by what comes from outside (a tipoDoc, a medio de pago, a CSV column): an object with no
 * prototype, frozen. `TABLE[input]` is then undefined for `valueOf`, `__proto__`, `constructor` and every other name
 * an ordinary object inherits, instead of a function that passes for a known code (the fuzzer found
 * `tipoDoc: "valueOf"` taken for a kind and thrown on later).
 */
export function codeTable<T>(entries: Readonly<Record<string, T>>): Readonly<Record<string, T>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, T>, entries));
}
