/**
 * Read integrity under concurrent appends: every string read back from the DuckDB event
 * store, through every read path the API and the tests use (runSql, a search plan run by
 * `execute`, `stream`, `getById`), must be exactly the string appended.
 *
 * Written after a test once read a stored "tcp newline hello" as "tcp newline hel "
 * although the row had matched `message LIKE '% hello'` in SQL. Values are derived from
 * a sequence number n kept in `bytes`, so each row can be checked on its own: strings of
 * 5 to 24 bytes (DuckDB keeps strings of up to 12 bytes inline in the vector, longer
 * ones in a separate heap), in several columns and in the `fields` map.
 *
 * Short by default (a few seconds, so CI keeps looking); longer with
 * READ_INTEGRITY_SECONDS=120. Forced garbage collections run throughout, so a chunk freed
 * while JavaScript still reads its memory is likely to show.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalisedEvent, StoredEvent } from '../../src/core/event.js';
import { DuckDbEventStore as CurrentStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import type { SearchPlan } from '../../src/event-store/query-plan.js';
import { SYSTEM_SCOPE } from '../../src/event-store/read-scope.js';
import { TRUE } from '../../src/filter/ast.js';
import { event, T0 } from '../helpers/seed.js';

const SECONDS = Number(process.env.READ_INTEGRITY_SECONDS ?? 6);
/** Another build of the store to check (e.g. a copy from before a fix), by absolute path. */
const DuckDbEventStore: typeof CurrentStore = process.env.READ_INTEGRITY_STORE
  ? (await import(process.env.READ_INTEGRITY_STORE)).DuckDbEventStore
  : CurrentStore;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** 8 hex digits from n (FNV-1a over its decimal digits). */
function checksum(n: number): string {
  let h = 0x811c9dc5;
  for (const c of String(n)) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

/** A message of 5 to 24 bytes, a third of them inline (≤ 12 bytes), the rest on the heap. */
function message(n: number): string {
  const full = `msg-${n}-${checksum(n)}-${'xyz'.repeat(3)}`;
  const len = 5 + ((n * 7) % 20); // 5..24
  return `${full.slice(0, Math.min(len, full.length))}`.padEnd(len, '.');
}
const host = (n: number) => `host-${checksum(n)}`; // 13 bytes
const app = (n: number) => (n % 2 ? 'myapp' : `app-${n % 97}-${checksum(n).slice(0, 6)}`);
const fieldValue = (n: number) => `v${checksum(n)}${checksum(n + 1)}`; // 17 bytes

function makeEvent(n: number): NormalisedEvent {
  return event({
    ts: T0 + n * 10,
    message: message(n),
    host: host(n),
    app: app(n),
    severity: 'warning',
    bytes: n,
    fields: { 'k.long': fieldValue(n), k: `s${n % 1000}` },
  });
}

interface Tally {
  reads: number;
  rows: number;
  bad: string[];
}

/** Checks one row read back; returns a description of what is wrong, or null. */
function check(
  via: string,
  row: Record<string, unknown> | StoredEvent,
  ids: Map<number, string>,
): string | null {
  const n = Number(row.bytes);
  const problems: string[] = [];
  const same = (name: string, got: unknown, want: unknown) => {
    if (got !== want) problems.push(`${name}=${JSON.stringify(got)} want ${JSON.stringify(want)}`);
  };
  same('message', row.message, message(n));
  same('host', row.host, host(n));
  same('app', row.app, app(n));
  if (ids.has(n)) same('ev_id', row.ev_id, ids.get(n));
  // runSql's JS conversion gives a MAP as [{ key, value }, ...]; rowToEvent as an object.
  const fields = Array.isArray(row.fields)
    ? Object.fromEntries((row.fields as { key: string; value: string }[]).map((e) => [e.key, e.value]))
    : (row.fields as Record<string, string> | undefined);
  same('fields.k.long', fields?.['k.long'], fieldValue(n));
  same('fields.k', fields?.k, `s${n % 1000}`);
  return problems.length ? `${via} n=${n}: ${problems.join('; ')}` : null;
}

describe('read integrity on young stores: one event per append, reads polling (the syslog test)', () => {
  const messages = ['udp 5424 hello', 'udp 3164 hello', 'tcp octet hello', 'tcp newline hello'];
  const youngEvent = (n: number) =>
    event({
      ts: T0 + n,
      host: host(n),
      app: 'myapp',
      severity: 'warning',
      message: messages[n % 4] as string,
      bytes: n,
      fields: { 'k.long': fieldValue(n), k: `s${n % 1000}` },
    });

  it(
    `reads back every string exactly (${SECONDS} s)`,
    async () => {
      const t = { stores: 0, reads: 0, rows: 0, bad: [] as string[] };
      const started = Date.now();
      const deadline = started + SECONDS * 1000 * 0.65;
      const range = { fromMs: T0, toMs: T0 + 1000 };
      while (Date.now() < deadline) {
        const dir = mkdtempSync(path.join(tmpdir(), 'logscope-read-integrity-'));
        const store = await DuckDbEventStore.open({
          dataDir: dir,
          memoryLimit: '512MB',
          checkpointThreshold: '256MB',
        });
        t.stores++;
        let done = false;
        const checkRows = (via: string, rows: readonly (Record<string, unknown> | StoredEvent)[]) => {
          t.reads++;
          for (const r of rows) {
            t.rows++;
            const n = Number(r.bytes);
            const fields = Array.isArray(r.fields)
              ? Object.fromEntries(
                  (r.fields as { key: string; value: string }[]).map((e) => [e.key, e.value]),
                )
              : (r.fields as Record<string, string>);
            if (r.message !== messages[n % 4] || r.host !== host(n) || fields['k.long'] !== fieldValue(n))
              t.bad.push(
                `${via} n=${n}: message=${JSON.stringify(r.message)} host=${JSON.stringify(r.host)}`,
              );
          }
        };
        const poll = (async () => {
          for (let i = 0; !done; i++) {
            if (i % 3 === 0) {
              checkRows(
                'runSql',
                await store.runSql(
                  `SELECT ev_id, message, host, app, severity, ts, received_at, fields, bytes FROM events WHERE message LIKE '% hello' AND app = 'myapp' ORDER BY ev_id`,
                ),
              );
            } else if (i % 3 === 1) {
              const plan: SearchPlan = {
                kind: 'search',
                scope: SYSTEM_SCOPE,
                filter: TRUE,
                range,
                sort: [{ field: 'message', desc: false }],
                limit: 50,
                offset: 0,
                count: true,
              };
              checkRows('execute(search)', (await store.execute(plan)).events);
            } else {
              const out: StoredEvent[] = [];
              const plan: SearchPlan = {
                kind: 'search',
                scope: SYSTEM_SCOPE,
                filter: TRUE,
                range,
                sort: [{ field: 'host', desc: false }],
                limit: 50,
                offset: 0,
                count: false,
              };
              for await (const e of store.stream(plan)) out.push(e);
              checkRows('stream', out);
            }
          }
        })();
        for (let n = 0; n < 8; n++) {
          await store.append([youngEvent(n)]);
          await new Promise((r) => setImmediate(r));
        }
        done = true;
        await poll;
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      }
      console.log(
        `read-integrity (young stores): ${t.stores} stores, ${t.reads} reads, ${t.rows} rows checked, ${t.bad.length} corrupt in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      expect(t.bad.slice(0, 20)).toEqual([]);
      expect(t.rows).toBeGreaterThan(0);
    },
    SECONDS * 1000 + 60_000,
  );
});

describe('read integrity under concurrent appends (DuckDB)', () => {
  let dir: string;
  let store: CurrentStore;
  const ids = new Map<number, string>();
  let next = 0;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'logscope-read-integrity-'));
    store = await DuckDbEventStore.open({
      dataDir: dir,
      // Small enough that the buffer manager evicts and reuses memory under the load.
      memoryLimit: '64MB',
      checkpointThreshold: '1MB',
      threads: 2,
    });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function appendSome(k: number): Promise<void> {
    const events = Array.from({ length: k }, () => makeEvent(next++));
    for (const e of events) ids.set(e.bytes as number, e.ev_id);
    await store.append(events);
  }

  const searchPlan = (limit: number, offset = 0): SearchPlan => ({
    kind: 'search',
    scope: SYSTEM_SCOPE,
    filter: TRUE,
    range: { fromMs: T0, toMs: T0 + 10 * 10_000_000 },
    sort: [{ field: 'ts', desc: true }],
    limit,
    offset,
    count: true,
  });

  /**
   * A row runSql read, its extra fields in columns of their own (field-columns.ts; every
   * event here has `k` and `k.long`) put back among its `fields`.
   */
  function withOwnColumns(row: Record<string, unknown>): Record<string, unknown> {
    const fields: Record<string, unknown> = Array.isArray(row.fields)
      ? Object.fromEntries((row.fields as { key: string; value: string }[]).map((e) => [e.key, e.value]))
      : { ...(row.fields as Record<string, string>) };
    for (const column in row) {
      const field = store.extras.fieldOf(column);
      if (field !== undefined && row[column] !== null) fields[field] = row[column];
    }
    return { ...row, fields };
  }

  async function readAll(t: Tally, i: number): Promise<void> {
    const record = (via: string, rows: readonly (Record<string, unknown> | StoredEvent)[]) => {
      t.reads++;
      t.rows += rows.length;
      for (const r of rows) {
        const bad = check(
          via,
          via.startsWith('runSql') ? withOwnColumns(r as Record<string, unknown>) : r,
          ids,
        );
        if (bad && t.bad.length < 20) t.bad.push(bad);
        else if (bad) t.bad.length++;
      }
    };
    switch (i % 6) {
      case 0:
      case 1: {
        const rows = await store.runSql(
          `SELECT ev_id, message, host, app, severity, ts, received_at, fields, bytes, COLUMNS('^extra_') FROM events WHERE bytes >= $1 AND app = 'myapp' AND message LIKE 'msg-%' ORDER BY ev_id`,
          [BigInt(Math.max(0, next - 400))],
        );
        record('runSql', rows);
        break;
      }
      case 2: {
        const r = await store.execute(searchPlan(200, (i * 37) % Math.max(1, next)));
        record('execute(search)', r.events);
        break;
      }
      case 3: {
        const out: StoredEvent[] = [];
        for await (const e of store.stream({ ...searchPlan(500), count: false })) out.push(e);
        record('stream', out);
        break;
      }
      case 4: {
        const n = Math.floor(Math.random() * Math.max(1, next - 1));
        const id = ids.get(n);
        const e = id ? await store.getById(id, SYSTEM_SCOPE) : null;
        record('getById', e ? [e] : []);
        break;
      }
      default: {
        const rows = await store.runSql(`SELECT * FROM events WHERE bytes >= $1 ORDER BY bytes LIMIT 500`, [
          BigInt(Math.max(0, next - 500)),
        ]);
        record('runSql(*)', rows);
      }
    }
  }

  it(
    `reads back every string exactly while appends run (${SECONDS} s)`,
    async () => {
      await appendSome(2000); // a base of rows that spans several chunks
      const t: Tally = { reads: 0, rows: 0, bad: [] };
      const deadline = Date.now() + SECONDS * 1000 * 0.2;
      const started = Date.now();
      let appends = 0;
      const writer = (async () => {
        while (Date.now() < deadline) {
          await appendSome(1 + (appends % 5));
          appends++;
          if (appends % 50 === 0) await new Promise((r) => setTimeout(r, 1));
        }
      })();
      const readers = [0, 1, 2].map(async (r) => {
        let i = r;
        while (Date.now() < deadline) {
          await readAll(t, i++);
          if (i % 10 === 0) gc();
        }
      });
      await Promise.all([writer, ...readers]);

      // The failing test's pattern: one small append (as one ingest call), then a read.
      const smallDeadline = Date.now() + SECONDS * 1000 * 0.1;
      let i = 0;
      while (Date.now() < smallDeadline) {
        await appendSome(1 + (i % 3));
        await readAll(t, i % 2 ? 0 : 5);
        if (++i % 5 === 0) gc();
      }
      const secs = (Date.now() - started) / 1000;
      console.log(
        `read-integrity: ${t.reads} reads, ${t.rows} rows checked, ${appends + i} appends (${next} events), ${t.bad.length} corrupt in ${secs.toFixed(1)} s`,
      );
      expect(t.bad).toEqual([]);
      expect(t.rows).toBeGreaterThan(0);
    },
    SECONDS * 1000 + 60_000,
  );
});
