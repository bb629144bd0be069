import type { NewPatternCondition } from './conditions.js';
import type { Sample, ThresholdCondition } from './threshold.js';

/** What a trigger says when it fires: the body of a webhook, the matter of a mail. */
export interface Notification {
  /**
   * `fire`: a trigger's condition was met; `recover`: a threshold that fired (and was
   * notified) no longer holds; `test`: POST /api/channels/{id}/test.
   */
  kind: 'fire' | 'recover' | 'test';
  trigger: { id: number; name: string; severity: string; description: string } | null;
  condition: { type: 'match' } | ThresholdCondition | NewPatternCondition | null;
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
  /** new_pattern: the pattern first seen, with its template (variables `<*>`). */
  pattern?: { pattern_id: string; template: string };
}

const OPS: Record<string, string> = { gt: '>', gte: '≥', lt: '<', lte: '≤' };

/** One line saying what happened, for a chat message or a mail subject. */
export function headline(n: Notification): string {
  if (n.kind === 'test' || !n.trigger) return 'Logscope test notification: this channel works.';
  const where = Object.entries(n.group)
    .map(([k, v]) => `${k}=${v === null ? '(none)' : String(v)}`)
    .join(', ');
  const c = n.condition;
  const what =
    c && c.type === 'threshold'
      ? `${n.count} matching events in ${c.window_seconds} s (${OPS[c.op]} ${c.value})`
      : n.pattern
        ? `new pattern "${n.pattern.template}"`
        : `${n.count} matching event${n.count === 1 ? '' : 's'}`;
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
