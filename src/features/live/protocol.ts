import { badRequest } from '../../errors/errors.js';
import type { GenericQuery } from '../queries/queries-service.js';

/**
 * The websocket protocol of `/ws/live-updates`: JSON arrays `[command, params]` both ways.
 * Clients send `subscribe`, `unsubscribe`, `unsubscribe_all` and `ping`; the server sends
 * `subscribed`, `unsubscribed`, `widget-update`, `pong` and `error`.
 */

/** What a client subscribes to. */
export type Target = { query_id: string } | { widget_id: number } | { dashboard_id: number };

/** Close code of a connection whose token is no longer valid. */
export const CLOSE_TOKEN_INVALID = 4401;

/** A subscription's key: its target as canonical JSON. */
export const targetKey = (t: Target) => JSON.stringify(t);

/** A client's message, or why it cannot be read (and the command it named, if any). */
export type Decoded = { command: string; params: unknown } | { error: string; command: unknown };

export function decode(data: Buffer, isBinary: boolean, maxBytes: number): Decoded {
  if (isBinary) return { error: 'Binary frames are not accepted.', command: null };
  if (data.length > maxBytes) return { error: `Message over ${maxBytes} bytes.`, command: null };
  let msg: unknown;
  try {
    msg = JSON.parse(data.toString('utf8'));
  } catch {
    return { error: 'Messages are JSON arrays: [command, params].', command: null };
  }
  if (!Array.isArray(msg) || msg.length < 1 || msg.length > 2 || typeof msg[0] !== 'string')
    return {
      error: 'Messages are JSON arrays: [command, params].',
      command: Array.isArray(msg) ? msg[0] : null,
    };
  return { command: msg[0], params: msg[1] };
}

/**
 * A `widget-update` for a subscription's widget and dashboard (null for a query's own),
 * as the frame's bytes; null when it would be longer than `maxBytes`. Written piece by
 * piece (arrays element by element), so an oversize update stops as soon as it passes
 * the limit: a Search page of large events is never first made into one string, which
 * can be hundreds of megabytes or past V8's longest string (~512 MB).
 */
export function updateFrame(
  w: { widgetId: number | null; dashboardId: number | null },
  data: GenericQuery,
  maxBytes: number,
): Buffer | null {
  const message = ['widget-update', { widget_id: w.widgetId, dashboard_id: w.dashboardId, data }];
  const parts: string[] = [];
  let bytes = 0;
  const put = (text: string) => {
    bytes += Buffer.byteLength(text);
    parts.push(text);
    return bytes <= maxBytes;
  };
  // Five levels reach the items of `data.results` arrays (events, buckets): each is one piece.
  return writeJson(message, 5, put) ? Buffer.from(parts.join('')) : null;
}

/** Values JSON leaves out of objects and writes as null in arrays. */
const omitted = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/**
 * Writes `value` as JSON.stringify would, through `put`, splitting arrays and plain
 * objects into pieces down to `depth` levels; false as soon as `put` refuses a piece.
 */
function writeJson(value: unknown, depth: number, put: (text: string) => boolean): boolean {
  if (depth === 0 || typeof value !== 'object' || value === null || 'toJSON' in value)
    return put(JSON.stringify(value));
  if (Array.isArray(value)) {
    if (!put('[')) return false;
    for (let i = 0; i < value.length; i++) {
      if (i > 0 && !put(',')) return false;
      const item: unknown = value[i];
      if (!(omitted(item) ? put('null') : writeJson(item, depth - 1, put))) return false;
    }
    return put(']');
  }
  let sep = '{';
  for (const [key, item] of Object.entries(value)) {
    if (omitted(item)) continue;
    if (!put(`${sep}${JSON.stringify(key)}:`) || !writeJson(item, depth - 1, put)) return false;
    sep = ',';
  }
  return put(sep === '{' ? '{}' : '}');
}

export function targetOrNull(params: unknown): Target | null {
  try {
    return parseTarget(params);
  } catch {
    return null;
  }
}

export function parseTarget(params: unknown): Target {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw badRequest('Params must be an object: {"query_id"}, {"widget_id"} or {"dashboard_id"}.');
  }
  const p = params as Record<string, unknown>;
  const keys = Object.keys(p);
  if (keys.length !== 1) throw badRequest('Name exactly one of query_id, widget_id, dashboard_id.');
  if (typeof p.query_id === 'string' && p.query_id.length > 0 && p.query_id.length <= 64)
    return { query_id: p.query_id };
  if (Number.isInteger(p.widget_id) && (p.widget_id as number) > 0)
    return { widget_id: p.widget_id as number };
  if (Number.isInteger(p.dashboard_id) && (p.dashboard_id as number) > 0)
    return { dashboard_id: p.dashboard_id as number };
  throw badRequest('query_id must be a string; widget_id and dashboard_id positive integers.');
}
