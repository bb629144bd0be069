import { apiJson, CliError, type ServerTarget } from './api-client.js';
import { type ApiEvent, formatEvent, oldestFirst, wantsColour } from './format.js';

/** Most events one Search page holds (the API's page_size maximum). */
export const MAX_LIMIT = 10_000;

/** What POST /api/query and GET /api/query/{qid} answer (the fields the CLI reads). */
export interface GenericQuery {
  query_id: string;
  status: 'PENDING' | 'IN_PROGRESS' | 'SUCCESS' | 'STOPPED' | 'ERROR';
  error: string | null;
  created_at: string;
  results: {
    total?: number;
    events?: ApiEvent[];
    columns?: Array<{ name: string; type: string }>;
    rows?: Array<Array<string | number | null>>;
    total_rows?: number;
  };
}

export type TimeRange = { ts_from: number; ts_to: number } | { preset: string };

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 } as const;

/** `15m`, `1h`, `7d`, `2w`, `90s` → seconds; anything else is a CliError naming the flag. */
export function parseDuration(flag: string, value: string): number {
  const m = /^\s*([1-9][0-9]{0,8})\s*([smhdw])\s*$/.exec(value);
  if (!m) throw new CliError(`${flag} takes a duration like 15m, 1h or 7d (s, m, h, d, w), got "${value}"`);
  return Number(m[1]) * UNIT_SECONDS[m[2] as keyof typeof UNIT_SECONDS];
}

/**
 * A duration as the server's own relative preset (`last_<n>_<unit>`), so "the last hour"
 * is the server's last hour whatever the client's clock says; seconds that are no whole
 * minute fall back to an absolute range from this machine's clock.
 */
function sincePreset(seconds: number, nowMs: number): TimeRange {
  if (seconds % 86_400 === 0) return { preset: `last_${seconds / 86_400}_days` };
  if (seconds % 3600 === 0) return { preset: `last_${seconds / 3600}_hours` };
  if (seconds % 60 === 0) return { preset: `last_${seconds / 60}_minutes` };
  const to = Math.floor(nowMs / 1000) + 1;
  return { ts_from: to - seconds, ts_to: to };
}

function parseTime(flag: string, value: string): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    throw new CliError(`${flag} takes an ISO 8601 time like 2026-11-20T12:00:00Z, got "${value}"`);
  return ms;
}

/**
 * The time range of `--since` / `--from` / `--to`: `--from` (to `--to` or now), `--to` alone
 * (the `--since` before it), else the last `--since` (default 1h). A time without an offset
 * is local time.
 */
export function timeRange(
  o: { since?: string; from?: string; to?: string; sinceGiven?: boolean },
  nowMs = Date.now(),
): TimeRange {
  const since = parseDuration('--since', o.since ?? '1h');
  if (o.from !== undefined && o.sinceGiven)
    throw new CliError('--since and --from exclude each other: give one of them');
  if (o.from === undefined && o.to === undefined) return sincePreset(since, nowMs);
  const toMs = o.to !== undefined ? parseTime('--to', o.to) : nowMs;
  const tsTo = Math.ceil(toMs / 1000) + (o.to !== undefined ? 0 : 1);
  const tsFrom = o.from !== undefined ? Math.floor(parseTime('--from', o.from) / 1000) : tsTo - since;
  if (tsFrom >= tsTo) throw new CliError('--from must be before --to');
  return { ts_from: tsFrom, ts_to: tsTo };
}

const TERMINAL = new Set(['SUCCESS', 'ERROR', 'STOPPED']);

/**
 * Creates a Search and waits until it finished (polling while the server answers 202). A
 * query with pipes (`… | stats count() by host`) is a Table: the server says so, and it
 * runs as one.
 */
export async function runSearch(
  target: ServerTarget,
  params: { query: string; time_range: TimeRange; page_size: number },
): Promise<GenericQuery> {
  const created = await apiJson<GenericQuery>(target, '/api/query', {
    method: 'POST',
    body: { type: 'Search', params: { ...params, sort: ['-ts'] } },
  }).catch((err: unknown) => {
    if (!(err instanceof CliError) || !/query type Table/.test(err.message)) throw err;
    return apiJson<GenericQuery>(target, '/api/query', {
      method: 'POST',
      body: { type: 'Table', params: { query: params.query, time_range: params.time_range } },
    });
  });
  let q = created.body;
  // Removed however the wait ends (Ctrl-C included): nobody will read it again.
  const remove = () =>
    apiJson(target, `/api/query/${encodeURIComponent(q.query_id)}/remove`, {
      signal: AbortSignal.timeout(2000),
    }).catch(() => undefined);
  const onSignal = () => {
    void remove().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  try {
    for (let wait = 100; !TERMINAL.has(q.status); wait = Math.min(1000, wait * 2)) {
      await new Promise((r) => setTimeout(r, wait));
      q = (await apiJson<GenericQuery>(target, `/api/query/${encodeURIComponent(q.query_id)}`)).body;
    }
  } finally {
    process.off('SIGINT', onSignal);
  }
  await remove();
  if (q.status === 'ERROR') throw new CliError(`search failed: ${q.error ?? 'no reason given'}`);
  if (q.status === 'STOPPED') throw new CliError('search was stopped on the server');
  return q;
}

/** A Table's rows: aligned columns under a header, or NDJSON objects by column name. */
function printTable(q: GenericQuery, json: boolean): void {
  const columns = q.results.columns ?? [];
  const rows = q.results.rows ?? [];
  const cell = (v: string | number | null, type: string | undefined) =>
    v === null ? '' : type === 'time' && typeof v === 'number' ? new Date(v * 1000).toISOString() : String(v);
  let out = '';
  if (json) {
    for (const r of rows)
      out += `${JSON.stringify(Object.fromEntries(columns.map((c, i) => [c.name, r[i] ?? null])))}\n`;
  } else if (columns.length) {
    const text = [columns.map((c) => c.name), ...rows.map((r) => r.map((v, i) => cell(v, columns[i]?.type)))];
    const widths = columns.map((_, i) => Math.max(...text.map((t) => [...(t[i] ?? '')].length)));
    const right = columns.map((c) => c.type === 'number');
    for (const t of text)
      out += `${t
        .map((v, i) => (right[i] ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd()}\n`;
  }
  if (out) process.stdout.write(out);
  const total = q.results.total_rows ?? rows.length;
  if (total > rows.length)
    process.stderr.write(`(the first ${rows.length} of ${total.toLocaleString('en-US')} rows)\n`);
}

/** Prints a finished Search: its events oldest first, as lines or NDJSON; a note on stderr. A Table as a table. */
export function printSearch(q: GenericQuery, json: boolean): void {
  if (q.results.columns) {
    printTable(q, json);
    return;
  }
  const events = [...(q.results.events ?? [])].sort(oldestFirst);
  const total = q.results.total ?? events.length;
  const colour = !json && wantsColour(process.stdout);
  let out = '';
  for (const e of events) out += `${json ? JSON.stringify(e) : formatEvent(e, colour)}\n`;
  if (out) process.stdout.write(out);
  if (total > events.length)
    process.stderr.write(
      `(the newest ${events.length} of ${total.toLocaleString('en-US')} matching events; --limit or a narrower time range for others)\n`,
    );
  else if (!events.length && process.stdout.isTTY) process.stderr.write('No matching events.\n');
}
