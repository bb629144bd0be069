import { EVENT_COLUMNS } from '../core/event.js';

/** An event as the API presents it (times in Unix seconds, extra fields by dotted name). */
export type ApiEvent = Record<string, unknown> & { ev_id: string; ts: number };

/** Columns every event has: what is not one of them is an extra field. */
const COLUMNS: ReadonlySet<string> = new Set(EVENT_COLUMNS);

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Unix seconds as a local ISO 8601 time with milliseconds and offset: 2026-11-20T13:00:00.000+01:00. */
export function localIso(seconds: number): string {
  const d = new Date(Math.round(seconds * 1000));
  if (Number.isNaN(d.getTime())) return String(seconds);
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const abs = Math.abs(off);
  return (
    `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}` +
    `T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

/** Control characters (a newline in a message, an escape sequence) shown escaped: one event, one line. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g;
const escapeControls = (s: string) =>
  s.replace(CONTROL, (c) =>
    c === '\n' ? '\\n' : c === '\r' ? '\\r' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

const text = (v: unknown) => (v === null || v === undefined || v === '' ? '-' : escapeControls(String(v)));

const SGR = {
  dim: '\x1b[2m',
  red: '\x1b[31m',
  boldRed: '\x1b[1;31m',
  yellow: '\x1b[33m',
  green: '\x1b[32m',
  cyan: '\x1b[36m',
  blue: '\x1b[34m',
  magenta: '\x1b[35m',
  reset: '\x1b[0m',
};

const SEVERITY_COLOUR: Record<string, string> = {
  debug: SGR.dim,
  info: SGR.green,
  notice: SGR.cyan,
  warning: SGR.yellow,
  error: SGR.red,
  critical: SGR.boldRed,
  alert: SGR.boldRed,
  emergency: SGR.boldRed,
};

/** Whether to colour output on this stream: a terminal, and NO_COLOR / TERM=dumb not set. */
export function wantsColour(stream: NodeJS.WriteStream): boolean {
  return Boolean(stream.isTTY) && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
}

/**
 * One event as one line: local time, severity, host, app, message (`-` where missing).
 * An event without a message shows its extra fields as `key=value` instead.
 */
export function formatEvent(e: ApiEvent, colour: boolean): string {
  const paint = (code: string | undefined, s: string) => (colour && code ? `${code}${s}${SGR.reset}` : s);
  const severity = typeof e.severity === 'string' ? e.severity : '';
  let message = e.message;
  if (message === null || message === undefined) {
    const extra = Object.entries(e)
      .filter(([k]) => !COLUMNS.has(k))
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
    message = extra.length ? extra.join(' ') : null;
  }
  return [
    paint(SGR.dim, localIso(e.ts)),
    paint(SEVERITY_COLOUR[severity], text(severity).padEnd(7)),
    paint(SGR.blue, text(e.host)),
    paint(SGR.magenta, text(e.app)),
    text(message),
  ].join(' ');
}

/** Oldest first; ties by id (ULIDs order by arrival). */
export const oldestFirst = (a: ApiEvent, b: ApiEvent) =>
  a.ts - b.ts || (a.ev_id < b.ev_id ? -1 : a.ev_id > b.ev_id ? 1 : 0);
