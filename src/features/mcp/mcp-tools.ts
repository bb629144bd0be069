/**
 * The tools `/mcp` serves (docs/mcp.md): each one's name, title, description (what it
 * answers, its limits, an example call), arguments and output schema, and what runs it.
 */
import { type ArgsSpec, inputSchema } from './mcp-arguments.js';
import { MAX_ANSWER_BYTES, MAX_STRING } from './mcp-shaping.js';
import {
  aggregate,
  eventContext,
  explainChanges,
  listFields,
  listStreams,
  MAX_AGGREGATE_ROWS,
  searchLogs,
  type ToolAnswer,
  type ToolCall,
  type ToolServices,
  topPatterns,
} from './mcp-tool-runs.js';

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  args: ArgsSpec;
  outputSchema: Record<string, unknown>;
  run(s: ToolServices, call: ToolCall, args: Record<string, unknown>): Promise<ToolAnswer>;
}

const CAPS = `Times are ISO 8601 UTC. Strings longer than ${MAX_STRING} characters are cut; the answer is at most ${MAX_ANSWER_BYTES} bytes of JSON (items left out from the end); truncated says when it shows less than matched.`;

const QUERY_TEXT =
  'A query in the query language (resource logscope://query-language): words match the message, field:value, AND/OR/NOT, ranges, regexes; "" matches every event.';
const RANGE_TEXT =
  'The time range: a preset ("last_hour", "last_24_hours", "today", "last_<n>_<minutes|hours|days>"), {"preset": name}, or {"from": t, "to": t} with ISO 8601 (no zone: UTC) or Unix seconds; to defaults to now; [from, to).';

const obj = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  properties,
  required,
});
const str = { type: 'string' };
const int = { type: 'integer' };
const num = { type: 'number' };
const bool = { type: 'boolean' };
const isoTime = { type: 'string', description: 'ISO 8601 UTC' };
const anyObject = { type: 'object' };
const RangeOut = obj({ from: isoTime, to: isoTime }, ['from', 'to']);
const list = (items: unknown) => ({ type: 'array', items });
const nullable = (t: string) => ({ type: [t, 'null'] });

export const TOOLS: readonly ToolDef[] = [
  {
    name: 'search_logs',
    title: 'Search logs',
    description: `The newest events matching a query in a time range, with the number of all matches (total). At most 200 events (limit, default 50); fields narrows each event to ev_id, ts and the fields named. No pipes: use aggregate for stats. ${CAPS} Example: {"query": "error AND app:nginx", "time_range": "last_hour", "limit": 20}.`,
    args: {
      properties: {
        query: { kind: 'string', maxLength: 10_000, description: `${QUERY_TEXT} No pipes.` },
        time_range: { kind: 'time_range', description: RANGE_TEXT },
        limit: {
          kind: 'integer',
          minimum: 1,
          maximum: 200,
          default: 50,
          description: 'Most events answered.',
        },
        fields: {
          kind: 'names',
          maxItems: 50,
          description: 'Field names: each event then holds ev_id, ts and these only.',
        },
      },
      required: ['query', 'time_range'],
    },
    outputSchema: obj(
      {
        query: str,
        time_range: RangeOut,
        total: int,
        returned: int,
        limit: int,
        events: list(anyObject),
        truncated: bool,
        cut_events: list(str),
      },
      ['query', 'time_range', 'total', 'returned', 'limit', 'events', 'truncated', 'cut_events'],
    ),
    run: searchLogs,
  },
  {
    name: 'aggregate',
    title: 'Aggregate logs',
    description: `Runs a query with pipes (stats, top, timechart, fields, sort, limit, where, extract, rex, rename, eval) and answers a table: columns and rows. Without an aggregating pipe it gives event rows. At most ${MAX_AGGREGATE_ROWS} rows (total_rows counts all). ${CAPS} Example: {"query": "app:nginx | stats count() as n by host | sort -n", "time_range": "last_24_hours"}.`,
    args: {
      properties: {
        query: { kind: 'string', maxLength: 10_000, description: `${QUERY_TEXT} With pipes (| stats ...).` },
        time_range: { kind: 'time_range', description: RANGE_TEXT },
      },
      required: ['query', 'time_range'],
    },
    outputSchema: obj(
      {
        query: str,
        time_range: RangeOut,
        columns: list(obj({ name: str, type: str }, ['name', 'type'])),
        rows: list({ type: 'array' }),
        total_rows: int,
        truncated: bool,
      },
      ['query', 'time_range', 'columns', 'rows', 'total_rows', 'truncated'],
    ),
    run: aggregate,
  },
  {
    name: 'event_context',
    title: 'Events around one event',
    description: `The events of the same source (host, app and process or file, or the fields in by) just before and after one event, in the order they happened (both lists oldest first). before and after 0–100 (default 10). ${CAPS} Example: {"ev_id": "01JD…", "before": 20, "after": 5}.`,
    args: {
      properties: {
        ev_id: { kind: 'string', maxLength: 64, description: 'The event, as ev_id of a search answer.' },
        before: { kind: 'integer', minimum: 0, maximum: 100, default: 10, description: 'Events before it.' },
        after: { kind: 'integer', minimum: 0, maximum: 100, default: 10, description: 'Events after it.' },
        by: {
          kind: 'names',
          maxItems: 20,
          description:
            'Fields naming the source (default host, app and a process id or file path); [] every event.',
        },
      },
      required: ['ev_id'],
    },
    outputSchema: obj(
      {
        anchor: anyObject,
        by: anyObject,
        before: list(anyObject),
        after: list(anyObject),
        more_before: bool,
        more_after: bool,
        truncated: bool,
        cut_events: list(str),
      },
      ['anchor', 'by', 'before', 'after', 'more_before', 'more_after', 'truncated', 'cut_events'],
    ),
    run: eventContext,
  },
  {
    name: 'top_patterns',
    title: 'Top message patterns',
    description: `The most common kinds of message (templates, variables as <*>) among the events matching a query, with counts, share, first and last seen and up to 3 samples; with compare_to, which are new and their earlier counts. n 1–100 (default 20); other counts the events of patterns not listed. ${CAPS} Example: {"query": "app:sshd", "time_range": "last_hour", "compare_to": "yesterday"}.`,
    args: {
      properties: {
        query: { kind: 'string', maxLength: 10_000, description: `${QUERY_TEXT} No pipes.` },
        time_range: { kind: 'time_range', description: RANGE_TEXT },
        n: { kind: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Most patterns listed.' },
        compare_to: { kind: 'time_range', description: `An earlier range to compare with. ${RANGE_TEXT}` },
      },
      required: ['time_range'],
    },
    outputSchema: obj(
      {
        query: str,
        time_range: RangeOut,
        total: int,
        other: int,
        patterns: list(
          obj(
            {
              pattern_id: str,
              template: str,
              count: int,
              share: num,
              first_seen: isoTime,
              last_seen: isoTime,
              new: bool,
              previous_count: nullable('integer'),
              samples: list(anyObject),
            },
            ['pattern_id', 'template', 'count', 'share', 'first_seen', 'last_seen', 'new', 'samples'],
          ),
        ),
        truncated: bool,
      },
      ['query', 'time_range', 'total', 'other', 'patterns', 'truncated'],
    ),
    run: topPatterns,
  },
  {
    name: 'list_fields',
    title: 'Fields of the matching events',
    description: `The fields present in the events a query matches in a time range, most common first, each with its type, how many events have it and its 5 most common values, from the newest 10,000 matches (sampled). ${CAPS} Example: {"time_range": "last_hour", "query": "app:nginx"}.`,
    args: {
      properties: {
        time_range: { kind: 'time_range', description: RANGE_TEXT },
        query: { kind: 'string', maxLength: 10_000, description: `${QUERY_TEXT} No pipes.` },
      },
      required: ['time_range'],
    },
    outputSchema: obj(
      {
        time_range: RangeOut,
        fields: list(
          obj({ name: str, type: str, count: int, top: list(anyObject) }, ['name', 'type', 'count']),
        ),
        sampled: bool,
        events: int,
        total: int,
      },
      ['time_range', 'fields', 'sampled', 'events', 'total'],
    ),
    run: listFields,
  },
  {
    name: 'list_streams',
    title: 'Streams you may read',
    description:
      'The streams (named sets of events, each with its rule in the query language) whose events you may read, with their events of the last 24 hours (event_count). A query narrows to one with stream:<id or title>. Example: {}.',
    args: { properties: {}, required: [] },
    outputSchema: obj(
      {
        streams: list(
          obj(
            {
              id: int,
              title: str,
              description: str,
              rule: nullable('string'),
              builtin: bool,
              retention_days: nullable('integer'),
              event_count: int,
            },
            ['id', 'title', 'description', 'rule', 'builtin', 'retention_days'],
          ),
        ),
      },
      ['streams'],
    ),
    run: (s, call) => listStreams(s, call),
  },
  {
    name: 'explain_changes',
    title: 'Explain what changed',
    description: `Which kinds of message (patterns) and which field values account for a change between a focus time range and a baseline (default the period just before), ranked by a G-test score, with counts, rates per minute, ratio, direction (up, down, new, gone) and samples. n 1–100 (default 20), min_score ≥ 0 (default 20), fields 0–20 names. Each window 1 s to 31 days. ${CAPS} Example: {"time_range": {"from": "2026-11-27T05:00:00Z", "to": "2026-11-27T05:30:00Z"}, "baseline": "same_time_last_week"}.`,
    args: {
      properties: {
        time_range: { kind: 'time_range', description: `The focus window. ${RANGE_TEXT}` },
        baseline: {
          kind: 'baseline',
          description: `"previous" (as long as the focus, just before it), "same_time_last_week", or a time range. ${RANGE_TEXT}`,
        },
        query: { kind: 'string', maxLength: 10_000, description: `${QUERY_TEXT} No pipes.` },
        fields: { kind: 'names', maxItems: 20, description: 'Fields to examine ([]: patterns only).' },
        n: { kind: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Most changes listed.' },
        min_score: { kind: 'number', minimum: 0, default: 20, description: 'Least score listed.' },
      },
      required: ['time_range'],
    },
    outputSchema: obj(
      {
        query: str,
        focus: RangeOut,
        baseline: RangeOut,
        focus_total: int,
        baseline_total: int,
        fields: list(str),
        tested: int,
        min_score: num,
        changes: list(anyObject),
        truncated: bool,
      },
      [
        'query',
        'focus',
        'baseline',
        'focus_total',
        'baseline_total',
        'fields',
        'tested',
        'min_score',
        'changes',
        'truncated',
      ],
    ),
    run: explainChanges,
  },
];

export const TOOL_NAMED: ReadonlyMap<string, ToolDef> = new Map(TOOLS.map((t) => [t.name, t]));

/** The tools as `tools/list` gives them. */
export function listedTools() {
  return TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: inputSchema(t.args),
    outputSchema: t.outputSchema,
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  }));
}
