/**
 * The one way tests wait for something that happens in the background: calls `probe`
 * every `everyMs` until it returns a value (anything but `undefined` or `false`), and
 * returns it; after `withinMs` throws an error naming `what`. An error `probe` throws ends
 * the wait at once (a daemon that exited, a 500), unless `retryErrors` is set (a server
 * still starting).
 */
export async function eventually<T>(
  what: string | (() => string),
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  opts: { withinMs?: number; everyMs?: number; retryErrors?: boolean } = {},
): Promise<T> {
  const { withinMs = 10_000, everyMs = 50, retryErrors = false } = opts;
  const end = Date.now() + withinMs;
  for (;;) {
    let value: T | undefined | false;
    try {
      value = await probe();
    } catch (err) {
      if (!retryErrors) throw err;
      value = undefined;
    }
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end)
      throw new Error(
        `timed out after ${withinMs} ms waiting for ${typeof what === 'string' ? what : what()}`,
      );
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** `eventually` for a list: waits until it holds at least `n` items. */
export function eventuallyAtLeast<T>(
  what: string,
  read: () => Promise<T[]>,
  n: number,
  withinMs = 5000,
): Promise<T[]> {
  return eventually(
    `${what} (${n} or more)`,
    async () => {
      const rows = await read();
      return rows.length >= n ? rows : undefined;
    },
    { withinMs },
  );
}
