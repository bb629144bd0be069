/** Most values one `IN (...)` list carries: far below SQLite's and PostgreSQL's parameter limits. */
export const IN_LIST_MAX = 1000;

/** Runs a lookup over an id list in slices, so a long list never exceeds a parameter limit. */
export async function inChunks<T>(
  ids: readonly number[],
  lookup: (slice: number[]) => Promise<T[]>,
): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += IN_LIST_MAX)
    out.push(...(await lookup(ids.slice(i, i + IN_LIST_MAX))));
  return out;
}
