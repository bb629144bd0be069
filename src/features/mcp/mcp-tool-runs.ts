/**
 * What each MCP tool does: the same service call its REST twin makes, as the caller, then
 * the answer shaped (mcp-shaping.ts). Nothing here reads events another way.
 */
import type { Identity } from '../../core/identity.js';
import { AppError } from '../../errors/errors.js';
import type { ReadOrigin } from '../../query/read-audit.js';
import { resolveTimeRange, type TimeRangeParam } from '../../query/time-range.js';
import type { EventsService } from '../events/events-service.js';
import type { FieldsService } from '../events/fields-service.js';
import type { QueriesService } from '../queries/queries-service.js';
import type { StreamsService } from '../streams/streams-service.js';
import { ArgumentError } from './mcp-arguments.js';
import { Cutter, fitToCap, iso, shapeEvent, shapeEvents } from './mcp-shaping.js';

export interface ToolServices {
  queries: QueriesService;
  events: EventsService;
  fields: FieldsService;
  streams: StreamsService;
}

/** Who calls, from where, and how long the call may run. */
export interface ToolCall {
  who: Identity;
  origin: ReadOrigin;
  signal: AbortSignal;
  /** Longest the call runs (mcpToolTimeoutSeconds). */
  ms: number;
}

/** A tool's answer: its `structuredContent`, and how many items it holds (the audit's `returned`). */
export interface ToolAnswer {
  answer: Record<string, unknown>;
  returned: number;
}

/** The call ran past its time (or was cancelled): answered `isError` saying what to do. */
export class ToolTimeout extends Error {
  override name = 'ToolTimeout';
}

type Args = Record<string, unknown>;

/** Most rows `aggregate` answers. */
export const MAX_AGGREGATE_ROWS = 1000;

/** Why a call stopped before its answer: cancelled, or past its time. */
const stoppedText = (call: ToolCall) =>
  call.signal.aborted
    ? 'The call was cancelled (notifications/cancelled, or its connection closed).'
    : `The call ran longer than ${Math.round(call.ms / 1000)} s and was stopped: narrow the time range or the query.`;

/** A REST error as the text of an `isError` result, naming arguments as the tool does (`params.n` → `n`). */
export function errorText(err: AppError, names: Record<string, string> = {}): string {
  const argName = (key: string) => {
    const bare = key.replace(/^params\./, '');
    const head = bare.split('.')[0] ?? bare;
    return (names[head] ?? head) + bare.slice(head.length);
  };
  const text = err.errors
    ? Object.entries(err.errors)
        .map(([key, messages]) => `${argName(key)}: ${messages.join(' ')}`)
        .join('; ')
    : err.message.replace(/^params\./, '');
  // A pipe where only the aggregate tool takes them: the query language's own words name the type.
  return text.replace(
    /Pipes need the query type Table, at ([^:]*): run this query as type Table, or remove the pipes/,
    'pipes (|) are taken by the aggregate tool only, at $1: call aggregate with this query, or remove the pipes',
  );
}

/** A time range as the answers echo it: `{from, to}` ISO, resolved at `baseMs`. */
function resolved(range: TimeRangeParam, baseMs: number) {
  const w = resolveTimeRange(range, baseMs);
  return { from: iso(w.fromMs / 1000), to: iso(w.toMs / 1000) };
}

/** Runs a query of `type` as POST /api/query would, for one answer; its results. */
async function runQuery(
  s: ToolServices,
  call: ToolCall,
  type: string,
  params: Args,
  names: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  let valid: ReturnType<QueriesService['validate']>;
  try {
    valid = s.queries.validate({ type, params });
  } catch (err) {
    if (err instanceof AppError) throw new ArgumentError(errorText(err, names));
    throw err;
  }
  let answered: Awaited<ReturnType<QueriesService['answer']>>;
  try {
    answered = await s.queries.answer(call.who, valid, {}, call.origin, call);
  } catch (err) {
    // A stream the query names that the caller may not read is a 400 found while scoping.
    if (err instanceof AppError && err.status === 400) throw new ArgumentError(errorText(err, names));
    throw err;
  }
  const { settled, query } = answered;
  if (!settled) throw new ToolTimeout(stoppedText(call));
  if (query.status === 'ERROR')
    throw new ArgumentError(`The query failed: ${query.error ?? 'unknown error'}`);
  return query.results as Record<string, unknown>;
}

/** Runs a read that takes no signal within the call's time. */
async function within<T>(call: ToolCall, read: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ToolTimeout(stoppedText(call))), call.ms);
    call.signal.addEventListener('abort', () => reject(new ToolTimeout(stoppedText(call))), { once: true });
  });
  try {
    return await Promise.race([read(), stop]);
  } finally {
    clearTimeout(timer);
  }
}

const orEmpty = (q: unknown) => (typeof q === 'string' ? q : '');

export async function searchLogs(s: ToolServices, call: ToolCall, a: Args): Promise<ToolAnswer> {
  const base = Date.now();
  const limit = a.limit as number;
  const range = a.time_range as TimeRangeParam;
  const r = await runQuery(
    s,
    call,
    'Search',
    {
      query: a.query,
      time_range: range,
      sort: ['-ts'],
      page_size: limit,
      ...(a.fields !== undefined ? { fields: a.fields } : {}),
    },
    { page_size: 'limit' },
  );
  const total = r.total as number;
  const cutEvents: string[] = [];
  const events = shapeEvents(r.events as Record<string, unknown>[], cutEvents);
  const { answer } = fitToCap(events, (kept, dropped) => ({
    query: a.query,
    time_range: resolved(range, base),
    total,
    returned: kept.length,
    limit,
    events: kept,
    truncated: kept.length < total || cutEvents.length > 0 || dropped,
    cut_events: cutEvents.filter((id) => kept.some((e) => e.ev_id === id)),
  }));
  return { answer, returned: (answer.events as unknown[]).length };
}

export async function aggregate(s: ToolServices, call: ToolCall, a: Args): Promise<ToolAnswer> {
  const base = Date.now();
  const range = a.time_range as TimeRangeParam;
  const r = await runQuery(s, call, 'Table', { query: a.query, time_range: range });
  const columns = r.columns as { name: string; type: string }[];
  const totalRows = r.total_rows as number;
  const cutter = new Cutter();
  const rows = (r.rows as unknown[][])
    .slice(0, MAX_AGGREGATE_ROWS)
    .map((row) => row.map((cell, i) => (columns[i]?.type === 'time' ? iso(cell) : cutter.deep(cell))));
  const { answer } = fitToCap(rows, (kept, dropped) => ({
    query: a.query,
    time_range: resolved(range, base),
    columns,
    rows: kept,
    total_rows: totalRows,
    truncated: kept.length < totalRows || cutter.cut || dropped,
  }));
  return { answer, returned: (answer.rows as unknown[]).length };
}

export async function eventContext(s: ToolServices, call: ToolCall, a: Args): Promise<ToolAnswer> {
  const by = a.by as string[] | undefined;
  let r: Awaited<ReturnType<EventsService['context']>>;
  try {
    r = await within(call, () =>
      s.events.context(
        call.who,
        a.ev_id as string,
        {
          before: a.before as number,
          after: a.after as number,
          ...(by !== undefined ? { by: by.join(',') } : {}),
        },
        call.origin,
      ),
    );
  } catch (err) {
    if (err instanceof AppError && err.status === 404)
      throw new ArgumentError('ev_id: no event with this id that you may read.');
    if (err instanceof AppError) throw new ArgumentError(errorText(err));
    throw err;
  }
  const cutEvents: string[] = [];
  const anchor = shapeEvent(r.anchor, cutEvents);
  const before = shapeEvents(r.before ?? [], cutEvents);
  const after = shapeEvents(r.after ?? [], cutEvents);
  const moreBefore = r.before_cursor != null;
  const moreAfter = r.after_cursor != null;
  // Items tagged by side, nearest the anchor in the middle: the farthest go first.
  const items = [...before.map((e) => ({ side: 'before', e })), ...after.map((e) => ({ side: 'after', e }))];
  const { answer } = fitToCap(
    items,
    (kept, dropped) => {
      const b = kept.filter((i) => i.side === 'before').map((i) => i.e);
      const f = kept.filter((i) => i.side === 'after').map((i) => i.e);
      const shown = new Set([anchor.ev_id, ...b.map((e) => e.ev_id), ...f.map((e) => e.ev_id)]);
      return {
        anchor,
        by: new Cutter().deep(r.by),
        before: b,
        after: f,
        more_before: moreBefore || b.length < before.length,
        more_after: moreAfter || f.length < after.length,
        truncated: moreBefore || moreAfter || cutEvents.length > 0 || dropped,
        cut_events: cutEvents.filter((id) => shown.has(id)),
      };
    },
    (kept) => {
      const nBefore = kept.filter((i) => i.side === 'before').length;
      const nAfter = kept.length - nBefore;
      // The oldest before (first) or the newest after (last), whichever side is longer.
      return nBefore > nAfter ? 0 : kept.length - 1;
    },
  );
  return { answer, returned: (answer.before as unknown[]).length + (answer.after as unknown[]).length };
}

export async function topPatterns(s: ToolServices, call: ToolCall, a: Args): Promise<ToolAnswer> {
  const base = Date.now();
  const range = a.time_range as TimeRangeParam;
  const r = await runQuery(s, call, 'Patterns', {
    query: orEmpty(a.query),
    time_range: range,
    n: a.n,
    ...(a.compare_to !== undefined ? { compare_to: a.compare_to } : {}),
  });
  const cutter = new Cutter();
  const patterns = (r.patterns as Record<string, unknown>[]).map((p) => {
    const { series: _series, ...rest } = p;
    const samples = (p.samples as Record<string, unknown>[]).map((x) => ({ ...x, ts: iso(x.ts) }));
    return cutter.deep({
      ...rest,
      first_seen: iso(p.first_seen),
      last_seen: iso(p.last_seen),
      samples,
    }) as Record<string, unknown>;
  });
  const other = r.other as number;
  const { answer } = fitToCap(patterns, (kept, dropped) => ({
    query: orEmpty(a.query),
    time_range: resolved(range, base),
    total: r.total,
    other,
    patterns: kept,
    truncated: other > 0 || cutter.cut || dropped,
  }));
  return { answer, returned: (answer.patterns as unknown[]).length };
}

export async function listFields(s: ToolServices, call: ToolCall, a: Args): Promise<ToolAnswer> {
  const base = Date.now();
  const range = a.time_range as TimeRangeParam;
  let r: Awaited<ReturnType<FieldsService['fields']>>;
  try {
    r = await within(call, () =>
      s.fields.fields(call.who, {
        ...(a.query !== undefined ? { query: a.query as string } : {}),
        time_range: range,
      }),
    );
  } catch (err) {
    if (err instanceof AppError) throw new ArgumentError(errorText(err));
    throw err;
  }
  const cutter = new Cutter();
  const fields = cutter.deep(r.fields) as Record<string, unknown>[];
  const { answer } = fitToCap(fields, (kept) => ({
    time_range: resolved(range, base),
    fields: kept,
    sampled: r.sampled,
    events: r.events,
    total: r.total,
  }));
  return { answer, returned: (answer.fields as unknown[]).length };
}

export async function listStreams(s: ToolServices, call: ToolCall): Promise<ToolAnswer> {
  const list = await within(call, () => s.streams.list(call.who, { counts: true }));
  const cutter = new Cutter();
  const streams = list.map((x) =>
    cutter.deep({
      id: x.id,
      title: x.title,
      description: x.description,
      rule: x.rule,
      builtin: x.builtin,
      retention_days: x.retention_days,
      ...(x.event_count !== undefined ? { event_count: x.event_count } : {}),
    }),
  );
  const { answer } = fitToCap(streams, (kept) => ({ streams: kept }));
  return { answer, returned: (answer.streams as unknown[]).length };
}

export async function explainChanges(s: ToolServices, call: ToolCall, a: Args): Promise<ToolAnswer> {
  const r = await runQuery(s, call, 'Explain', {
    query: orEmpty(a.query),
    time_range: a.time_range,
    baseline: a.baseline ?? { preset: 'previous' },
    ...(a.fields !== undefined ? { fields: a.fields } : {}),
    n: a.n,
    min_score: a.min_score,
  });
  const window = (w: unknown) => {
    const x = w as { ts_from: number; ts_to: number };
    return { from: iso(x.ts_from), to: iso(x.ts_to) };
  };
  const cutter = new Cutter();
  const changes = (r.changes as Record<string, unknown>[]).map(
    (c) =>
      cutter.deep(
        Array.isArray(c.samples)
          ? { ...c, samples: (c.samples as Record<string, unknown>[]).map((x) => ({ ...x, ts: iso(x.ts) })) }
          : c,
      ) as Record<string, unknown>,
  );
  const { answer } = fitToCap(changes, (kept, dropped) => ({
    query: orEmpty(a.query),
    focus: window(r.focus),
    baseline: window(r.baseline),
    focus_total: r.focus_total,
    baseline_total: r.baseline_total,
    fields: r.fields,
    tested: r.tested,
    min_score: r.min_score,
    changes: kept,
    truncated: cutter.cut || dropped,
  }));
  return { answer, returned: (answer.changes as unknown[]).length };
}
