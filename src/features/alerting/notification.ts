import { createHash } from 'node:crypto';
import type { Condition } from './conditions.js';
import type { Sample } from './threshold.js';

/** What a trigger says when it fires: the body of a webhook, the matter of a mail. */
export interface Notification {
  /**
   * `fire`: a trigger's condition was met; `recover`: a threshold that fired (and was
   * notified) no longer holds; `test`: POST /api/channels/{id}/test.
   */
  kind: 'fire' | 'recover' | 'test';
  trigger: { id: number; name: string; severity: string; description: string } | null;
  condition: Condition | null;
  /** The group's values (threshold conditions with group_by); {} otherwise. */
  group: Record<string, unknown>;
  /** Matching events in the window (threshold) or since the last notification (match). */
  count: number;
  window_seconds: number | null;
  fired_at: string;
  /** Up to 10 of the matching events, newest last. */
  samples: Sample[];
  /** The matching events in the web UI's Search. */
  search_url: string | null;
  /** new_pattern, pattern_rate: the pattern, with its template (variables `<*>`). */
  pattern?: { pattern_id: string; template: string };
  /** pattern_rate: what the pattern did, its count `b` to compare with, `count / b` (null when b = 0). */
  change?: 'up' | 'new' | 'down' | 'gone';
  baseline_count?: number;
  ratio?: number | null;
  /** pattern_rate: the window judged and the one its baseline was counted over (Unix seconds). */
  window?: { ts_from: number; ts_to: number };
  baseline_window?: { ts_from: number; ts_to: number };
}

const OPS: Record<string, string> = { gt: '>', gte: '≥', lt: '<', lte: '≤' };

/** A group's values as text: `host=web-1, region=eu` ('' without group_by). */
export const groupText = (group: Record<string, unknown>): string =>
  Object.entries(group)
    .map(([k, v]) => `${k}=${v === null ? '(none)' : String(v)}`)
    .join(', ');

/** One line saying what happened, for a chat message or a mail subject. */
export function headline(n: Notification): string {
  if (n.kind === 'test' || !n.trigger) return 'Logscope test notification: this channel works.';
  const groups = groupText(n.group);
  const c = n.condition;
  const what =
    c?.type === 'pattern_rate'
      ? patternRateWhat(n)
      : c && c.type === 'threshold'
        ? `${n.count} matching events in ${c.window_seconds} s (${OPS[c.op]} ${c.value})`
        : n.pattern
          ? `new pattern "${n.pattern.template}"`
          : `${n.count} matching event${n.count === 1 ? '' : 's'}`;
  // pattern_rate: the pattern is the group, already named by the headline.
  const where = c?.type === 'pattern_rate' ? '' : groups;
  const recovered = n.kind === 'recover' ? 'recovered, ' : '';
  return `[${n.trigger.severity}] ${n.trigger.name}: ${recovered}${what}${where ? ` for ${where}` : ''}`;
}

/** The plain-text body of a mail (and the detail of a chat message). */
export function bodyText(n: Notification): string {
  const lines = [headline(n), ''];
  if (n.trigger?.description) lines.push(n.trigger.description, '');
  lines.push(`Fired at ${n.fired_at}`);
  if (n.search_url) lines.push(`Search: ${n.search_url}`);
  if (n.samples.length) {
    lines.push('', 'Latest events:');
    for (const s of n.samples)
      lines.push(`  ${new Date(s.ts * 1000).toISOString()}  ${s.message ?? ''}  (${s.ev_id})`);
  }
  return lines.join('\n');
}

/** A pattern_rate notification's matter: `pattern "<template>" up 10.0× (300 vs 30 in 10 s)`. */
function patternRateWhat(n: Notification): string {
  const b = n.baseline_count ?? 0;
  const factor =
    n.change === 'up'
      ? ` ${(n.count / b).toFixed(1)}×`
      : n.change === 'down' && n.count > 0
        ? ` ${(b / n.count).toFixed(1)}×`
        : '';
  return `pattern "${n.pattern?.template ?? ''}" ${n.change ?? ''}${factor} (${n.count} vs ${b} in ${n.window_seconds} s)`;
}

/** JSON with every object's keys sorted: the same group gives the same text on every node. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value ?? null);
}

/**
 * One key per trigger and group: a firing and its recovery share it, two groups never do,
 * and it is the same across restarts and nodes. PagerDuty's `dedup_key`, Opsgenie's `alias`,
 * the delivery queue's sequence.
 */
export function dedupKey(n: Notification): string {
  const id = n.trigger?.id ?? 0;
  if (Object.keys(n.group).length === 0) return `logscope-${id}`;
  const hash = createHash('sha256').update(canonicalJson(n.group)).digest('hex').slice(0, 32);
  return `logscope-${id}-${hash}`;
}

/** The key of a test notification of a channel. */
export const testKey = (channelId: number, atMs: number) => `logscope-test-${channelId}-${atMs}`;
