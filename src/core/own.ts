/**
 * A table's own entry for a key that came from outside, else undefined. A plain object
 * answers `table['__proto__']` and `table['constructor']` from Object.prototype, which
 * once turned `?preset=__proto__` into a 500: every lookup keyed by request or record
 * input goes through here (or a Map).
 */
export const own = <T>(table: Readonly<Record<string, T>>, key: string): T | undefined =>
  Object.hasOwn(table, key) ? table[key] : undefined;
