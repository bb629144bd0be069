import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { prng } from '../src/cli/demo-generator.js';

/**
 * The events of `bench/shippers.ts`, as log shippers send them: JSON lines of about 326
 * bytes (a message of lognormal length among the usual fields), their times over the 24
 * hours before `windowEnd` in order of arrival, about 2 % of them late (a time up to an
 * hour before their neighbours'), and a rare word in one message in 10,000. The same
 * `total` and `windowEnd` give the same lines (a fixed seed).
 *
 * They are written once to a file, request after request (each `batch` lines; in `_bulk`
 * form each line after its action line), and read back a request at a time, so neither
 * the clients nor the raw engine hold them all in memory and the clients' only work while
 * the server ingests is reading a file.
 */

/** The rare word, planted in one message in {@link RARE_EVERY} (by default). */
export const RARE_WORD = 'wolframite';
export const RARE_EVERY = 10_000;
/** A request id as a user pastes it: in exactly {@link FIVE_TIMES} messages, spread over the day. */
export const FIVE_TOKEN = '7c41d09e2b5fa3';
export const FIVE_TIMES = 5;
/** The share of events that arrive late, and how late at most (ms). */
export const LATE_SHARE = 0.02;
export const LATE_MAX_MS = 3_600_000;
const SEED = 57;
/** `_bulk`'s action line before each document. */
const BULK_ACTION = '{"create":{"_index":"logs"}}\n';

const APPS = [
  'checkout',
  'payments',
  'orders',
  'auth',
  'search',
  'inventory',
  'gateway',
  'worker',
  'mailer',
  'scheduler',
];
const HOSTS = 200;
const SEVERITIES = ['info', 'info', 'info', 'info', 'info', 'info', 'debug', 'notice', 'warning', 'error'];
const STATUSES = [200, 200, 200, 200, 200, 200, 200, 201, 204, 301, 404, 500, 503];
/** Message shapes: `#` a number, `%` a hex id, `@` an address. */
const TEMPLATES = [
  'GET /api/v1/orders/# 200 #ms',
  'POST /api/v1/cart/% 201 #ms',
  'user u# logged in from @',
  'connection to @:# timed out after # ms',
  'processed batch % of # items in # ms',
  'cache miss for key %',
  'payment % authorised amount=# currency=EUR',
  'worker # picked job % from queue default',
  'slow query took # ms: SELECT * FROM orders WHERE customer_id = #',
  'failed to deliver webhook % to https://hooks.example.com/#: status #',
  'GC pause # ms, heap # MB of # MB',
  'retrying request % (attempt # of 5) after upstream error',
];
/** Keys of the context pairs that lengthen a message to its drawn length, in this order. */
const CONTEXT_KEYS = [
  'req',
  'span',
  'tenant',
  'shard',
  'elapsed',
  'size',
  'attempt',
  'region',
  'node',
  'seq',
];
/** Message length: lognormal, median e^MU bytes (a line of about 326 bytes on average). */
const LENGTH_MU = Math.log(118);
const LENGTH_SIGMA = 0.6;

export interface ShipperFile {
  path: string;
  events: number;
  batch: number;
  bulk: boolean;
  /** Byte offset of each request's body, and the end of the last. */
  offsets: number[];
  /** Events holding {@link RARE_WORD}. */
  rare: number;
  /** The `trace_id` of one event (a third of the way through), which no other event has. */
  oneTrace: string;
  late: number;
  /** Average JSON line of an event, bytes (without `_bulk`'s action line). */
  lineBytes: number;
}

/**
 * Writes `total` events as requests of `batch` to `path`; `shape` changes the share of
 * late events and how often the rare word comes (the defaults are the issue's).
 */
export function writeShipperFile(
  path: string,
  total: number,
  batch: number,
  bulk: boolean,
  windowEnd: number,
  shape: { lateShare?: number; rareEvery?: number } = {},
): ShipperFile {
  const lateShare = shape.lateShare ?? LATE_SHARE;
  const rareEvery = shape.rareEvery ?? RARE_EVERY;
  const r = prng(SEED);
  const hex = (n: number) => {
    let s = '';
    for (let i = 0; i < n; i++) s += '0123456789abcdef'[Math.floor(r() * 16)];
    return s;
  };
  const gauss = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  const fill = (t: string) =>
    t.replace(/[#%@]/g, (c) =>
      c === '#'
        ? String(Math.floor(r() * r() * 100_000))
        : c === '%'
          ? hex(12)
          : `10.${Math.floor(r() * 8)}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}`,
    );
  const start = windowEnd - 86_400_000;
  const fd = openSync(path, 'w');
  const offsets: number[] = [0];
  let offset = 0;
  let rare = 0;
  let oneTrace = '';
  let late = 0;
  let lineBytes = 0;
  try {
    for (let from = 0; from < total; from += batch) {
      let body = '';
      for (let i = from; i < Math.min(total, from + batch); i++) {
        let ts = start + ((i + r()) / total) * 86_400_000;
        if (r() < lateShare) {
          ts -= 10_000 + r() * (LATE_MAX_MS - 10_000);
          late++;
        }
        const target = Math.exp(LENGTH_MU + LENGTH_SIGMA * gauss());
        let message = fill(TEMPLATES[Math.floor(r() * TEMPLATES.length)] as string);
        for (let k = 0; message.length < target && k < 40; k++)
          message += ` ${CONTEXT_KEYS[k % CONTEXT_KEYS.length]}=${r() < 0.5 ? hex(8) : Math.floor(r() * 1e6)}`;
        if (i % rareEvery === Math.floor(rareEvery / 2)) {
          // In the middle of the message, as a word among others.
          const cut = message.indexOf(' ', message.length >> 1);
          message =
            cut < 0
              ? `${message} ${RARE_WORD}`
              : `${message.slice(0, cut)} ${RARE_WORD}${message.slice(cut)}`;
          rare++;
        }
        // The five: evenly spread, as `ref=<id>` at the message's end (no draw of `r`, so
        // every other value is as before).
        if (i % Math.floor(total / FIVE_TIMES) === Math.floor(total / (3 * FIVE_TIMES)))
          message = `${message} ref=${FIVE_TOKEN}`;
        const record = {
          timestamp: new Date(Math.floor(Math.max(start - LATE_MAX_MS, ts))).toISOString(),
          host: `node-${String(Math.floor(r() * r() * HOSTS)).padStart(3, '0')}`,
          app: APPS[Math.floor(r() * r() * APPS.length)],
          severity: SEVERITIES[Math.floor(r() * SEVERITIES.length)],
          message,
          user: `u${Math.floor(r() * 5000)}`,
          status: STATUSES[Math.floor(r() * STATUSES.length)],
          bytes: Math.floor(Math.exp(7 + 1.5 * gauss())),
          trace_id: hex(16),
        };
        if (i === Math.floor(total / 3)) oneTrace = record.trace_id;
        const line = JSON.stringify(record);
        lineBytes += line.length + 1;
        body += bulk ? `${BULK_ACTION}${line}\n` : `${line}\n`;
      }
      offset += writeSync(fd, body);
      offsets.push(offset);
    }
  } finally {
    closeSync(fd);
  }
  return { path, events: total, batch, bulk, offsets, rare, oneTrace, late, lineBytes: lineBytes / total };
}

/** Reads request `r`'s body back. */
export function requestReader(file: ShipperFile): { body(r: number): Buffer; close(): void } {
  const fd = openSync(file.path, 'r');
  return {
    body(r) {
      const from = file.offsets[r] as number;
      const buf = Buffer.allocUnsafe((file.offsets[r + 1] as number) - from);
      readSync(fd, buf, 0, buf.length, from);
      return buf;
    },
    close: () => closeSync(fd),
  };
}

/** The records of request `r`, parsed (the documents alone in `_bulk` form). */
export function requestRecords(file: ShipperFile, body: Buffer): Array<Record<string, unknown>> {
  const lines = body.toString('utf8').split('\n');
  const out: Array<Record<string, unknown>> = [];
  for (let i = file.bulk ? 1 : 0; i < lines.length; i += file.bulk ? 2 : 1) {
    const line = lines[i] as string;
    if (line) out.push(JSON.parse(line) as Record<string, unknown>);
  }
  return out;
}
