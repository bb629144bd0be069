/** Deepest nesting of arrays and objects accepted in a request. */
export const MAX_JSON_DEPTH = 64;

/**
 * The path (`.filter[0].any[0]…`) of a value nested deeper than `max` arrays and
 * objects, or undefined. Iterative, so that no nesting can exhaust the stack.
 */
export function tooDeep(value: unknown, max: number): string | undefined {
  const stack: Array<{ v: unknown; depth: number; path: string }> = [{ v: value, depth: 0, path: '' }];
  while (stack.length > 0) {
    const { v, depth, path } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= max) return path;
    const entries = Array.isArray(v)
      ? v.map((item, i) => [`[${i}]`, item] as const)
      : Object.entries(v).map(([k, item]) => [`.${k}`, item] as const);
    for (const [key, item] of entries) stack.push({ v: item, depth: depth + 1, path: path + key });
  }
  return undefined;
}
