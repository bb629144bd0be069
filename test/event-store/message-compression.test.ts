import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { prng } from '../../src/cli/demo-generator.js';
import type { NormalisedEvent } from '../../src/core/event.js';
import { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import { CREATE_EVENTS } from '../../src/event-store/duckdb/duckdb-schema.js';
import { SYSTEM_SCOPE } from '../../src/event-store/read-scope.js';
import { cond } from '../../src/filter/ast.js';
import { event } from './filter-store.js';

// The message column of a store's file (docs/adr/0033-message-compression.md): ZSTD in a
// new store; a store made before keeps its file's format and DuckDB's own choice, and both
// read back every message as it was written.

const T0 = Date.UTC(2024, 6, 1, 12);
const EVENTS = 30_000;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function messages(): NormalisedEvent[] {
  const next = prng(33);
  const words = ['GET', 'POST', '/api/orders', 'took', 'ms', 'user', 'session', 'cache', 'miss', 'upstream'];
  return Array.from({ length: EVENTS }, (_, i) => {
    const n = 8 + Math.floor(next() * 20);
    const parts = Array.from({ length: n }, () =>
      next() < 0.3 ? String(Math.floor(next() * 1e6)) : (words[Math.floor(next() * words.length)] as string),
    );
    return event(`m${String(i).padStart(6, '0')}`, {
      ts: T0 + i * 100,
      host: `h${i % 5}`,
      message: parts.join(' '),
    });
  });
}

/** The message column's compressions in the file, and its messages (the store closed). */
async function fileOf(dir: string) {
  const instance = await DuckDBInstance.create(path.join(dir, 'events.duckdb'), { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  try {
    const compressions = (
      await conn.runAndReadAll(
        `SELECT DISTINCT compression AS c FROM pragma_storage_info('events') WHERE column_name = 'message' AND segment_type = 'VARCHAR'`,
      )
    )
      .getRowObjects()
      .map((r) => String(r.c));
    const rows = (
      await conn.runAndReadAll('SELECT ev_id, message FROM events ORDER BY ev_id')
    ).getRowObjects();
    return { compressions, rows: rows.map((r) => [String(r.ev_id), String(r.message)]) };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

async function fill(dir: string, events: NormalisedEvent[]) {
  const store = await DuckDbEventStore.open({
    dataDir: dir,
    memoryLimit: '512MB',
    checkpointThreshold: '16MB',
  });
  for (let at = 0; at < events.length; at += 1_000) await store.append(events.slice(at, at + 1_000));
  const found = await store.execute({
    kind: 'search',
    filter: cond('message', 'contains', 'upstream'),
    range: { fromMs: T0 - 1, toMs: T0 + EVENTS * 100 + 1 },
    sort: [],
    limit: 0,
    offset: 0,
    count: true,
    scope: SYSTEM_SCOPE,
  });
  await store.close();
  return found.total;
}

describe('the message column on disk', () => {
  const events = messages();
  const written = events
    .map((e) => [e.ev_id, e.message])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  const withUpstream = events.filter((e) => e.message?.includes('upstream')).length;

  it('is ZSTD in a new store, and every message reads back as written', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'logscope-zstd-'));
    dirs.push(dir);
    expect(await fill(dir, events)).toBe(withUpstream);
    const file = await fileOf(dir);
    expect(file.compressions).toContain('ZSTD');
    expect(file.compressions).not.toContain('Uncompressed');
    expect(file.rows).toEqual(written);
  }, 120_000);

  it('keeps the format of a store made before, compressed as DuckDB chooses, not uncompressed', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'logscope-fsst-'));
    dirs.push(dir);
    // The table as an earlier version made it: DuckDB's default file format, no ZSTD asked.
    const old = await DuckDBInstance.create(path.join(dir, 'events.duckdb'));
    const conn = await old.connect();
    await conn.run(CREATE_EVENTS.replace(' USING COMPRESSION zstd', ''));
    conn.closeSync();
    old.closeSync();
    expect(await fill(dir, events)).toBe(withUpstream);
    const file = await fileOf(dir);
    expect(file.compressions).not.toContain('ZSTD');
    expect(file.compressions).not.toContain('Uncompressed');
    expect(file.rows).toEqual(written);
  }, 120_000);
});
