import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { demoGenerator } from '../src/cli/demo-generator.js';
import type { NormalisedEvent } from '../src/core/event.js';
import { newEventId } from '../src/core/ids.js';
import { summaryAdmits } from '../src/event-store/duckdb/cold-summary.js';
import type { DuckDbDatabase } from '../src/event-store/duckdb/duckdb-database.js';
import { DuckDbEventStore } from '../src/event-store/duckdb/duckdb-event-store.js';
import type { ColdFileRecord } from '../src/event-store/event-store.js';
import type { SearchPlan, SearchResult, TimeWindow } from '../src/event-store/query-plan.js';
import { SYSTEM_SCOPE } from '../src/event-store/read-scope.js';
import { cond } from '../src/filter/ast.js';
import { normaliseRecord } from '../src/ingest/normalise.js';
import { TemplateMiner } from '../src/ingest/patterns/template-miner.js';
import { flag, fmt, percentile, textFlag } from './lib.js';

const DAY = 86_400_000;
const BATCH = 1_000;
/** Days of events: the first COLD_DAYS move, the last two stay hot. */
const COLD_DAYS = 30;
const DAYS = COLD_DAYS + 2;
/** Rare words: one event every third day, and one event a day (found in every file). */
const RARE = [
  { word: 'zebrafinch', everyDays: 3 },
  { word: 'quokka', everyDays: 1 },
];

/**
 * `npm run bench -- cold [--events N] [--runs R] [--keep DIR]`: the cold tier (docs/operations/cold-tier.md)
 * on N demo events (default 1,000,000, normalised as ingest does, patterns mined, appended
 * 1,000 at a time in time order) over 32 days, in a DuckDB store with a cold dir. Sizes:
 * the hot store's bytes per event at rest (its data bytes right after a checkpoint) beside
 * the cold files' (file sizes ÷ rows) once the first 30 days have moved (goal ≤ 0.5×).
 * Speed: a rare word over the 30 days (newest 100 and the count), through the store while
 * the days are hot, then once they are cold, and the raw engine reading the same files
 * with `read_parquet` (median of R runs after one warm-up each); the files the range meets
 * beside those the summaries let the store open (goal: cold ≤ 2× hot).
 */
export async function main(argv: string[]) {
  const total = flag(argv, 'events', 1_000_000);
  const runs = flag(argv, 'runs', 7);
  // `--keep DIR`: the store and its files stay in DIR after the run (to study them).
  const keep = textFlag(argv, 'keep');
  const dir = keep ?? mkdtempSync(path.join(tmpdir(), 'logscope-bench-cold-'));
  mkdirSync(dir, { recursive: true });
  const coldDir = path.join(dir, 'cold');
  const start = Math.floor(Date.now() / DAY) * DAY - (DAYS + 1) * DAY;
  const range: TimeWindow = { fromMs: start, toMs: start + COLD_DAYS * DAY };
  const store = await DuckDbEventStore.open({
    dataDir: dir,
    memoryLimit: '1GB',
    checkpointThreshold: '256MB',
    coldDir,
  });
  try {
    const t0 = performance.now();
    await load(store, total, start);
    await store.checkpoint();
    const hot = await store.stats();
    console.log(
      `\n${fmt(total)} demo events over ${DAYS} days appended ${fmt(BATCH)} at a time in ${fmt((performance.now() - t0) / 1000, 1)} s`,
    );

    const search = (word: string): SearchPlan => ({
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter: cond('message', 'contains', word),
      range,
      sort: [{ field: 'ts', desc: true }],
      limit: 100,
      offset: 0,
      count: true,
    });
    const timeStore = async (word: string) => {
      const times: number[] = [];
      let answer: SearchResult | undefined;
      for (let i = 0; i < runs + 1; i++) {
        const t = performance.now();
        answer = await store.execute(search(word));
        if (i > 0) times.push(performance.now() - t);
      }
      return {
        p50: percentile(
          times.sort((a, b) => a - b),
          50,
        ),
        answer: answer as SearchResult,
      };
    };
    const hotRuns = new Map<string, Awaited<ReturnType<typeof timeStore>>>();
    for (const { word } of RARE) hotRuns.set(word, await timeStore(word));

    // --- the move: every day before the cut, filed under Default
    const t1 = performance.now();
    let moved = 0;
    for (;;) {
      const r = await store.moveCold({ cutMs: range.toMs, homes: [], defaultId: 1, nowMs: Date.now() });
      if (!r || r.errors.length) throw new Error(`move: ${r ? r.errors.join('; ') : 'no cold tier'}`);
      moved += r.events;
      if (r.files === 0) break;
    }
    const moveSeconds = (performance.now() - t1) / 1000;
    const files = await store.coldFiles();
    const coldBytes = files.reduce((s, f) => s + f.bytes, 0);
    const coldRows = files.reduce((s, f) => s + f.rows, 0);
    const hotPer = hot.dataBytes / hot.events;
    const coldPer = coldBytes / coldRows;
    console.log(
      `moved ${fmt(moved)} events (${COLD_DAYS} days) into ${files.length} files in ${fmt(moveSeconds, 1)} s`,
    );
    console.log(
      `bytes per event: hot at rest ${fmt(hotPer, 1)} (${fmt(hot.dataBytes / 2 ** 20, 1)} MiB / ${fmt(hot.events)})` +
        `   cold ${fmt(coldPer, 1)} (${fmt(coldBytes / 2 ** 20, 1)} MiB / ${fmt(coldRows)}, summaries ${fmt(files.reduce((s, f) => s + f.summaryBytes, 0) / 1024, 1)} KiB more)` +
        `   cold/hot ${fmt(coldPer / hotPer, 2)}× (goal ≤ 0.5)`,
    );

    // --- the raw engine on the same files
    const raw = await DuckDBInstance.create(':memory:', { memory_limit: '1GB' });
    const conn = await raw.connect();
    // The same work as the store's: the count and the newest 100 whole rows.
    const timeRaw = async (word: string, on: readonly ColdFileRecord[]) => {
      const list = on.map((f) => `'${path.join(coldDir, f.path).replaceAll("'", "''")}'`).join(', ');
      const times: number[] = [];
      let count = 0;
      let ids: string[] = [];
      for (let i = 0; i < runs + 1; i++) {
        const t = performance.now();
        const where = `FROM read_parquet([${list}]) WHERE contains(lower(message), '${word}')`;
        const [n, top] = await Promise.all([
          conn.runAndReadAll(`SELECT count(*) AS n ${where}`),
          conn.runAndReadAll(`SELECT * ${where} ORDER BY ts DESC, ev_id DESC LIMIT 100`),
        ]);
        if (i > 0) times.push(performance.now() - t);
        count = Number(n.getRowObjects()[0]?.n);
        ids = top.getRowObjects().map((r) => String(r.ev_id));
      }
      return {
        p50: percentile(
          times.sort((a, b) => a - b),
          50,
        ),
        count,
        ids,
      };
    };
    await columnBytes(conn, coldDir, files);

    console.log(`\na rare word over the ${COLD_DAYS} cold days, newest 100 + count, median of ${runs} (ms)`);
    for (const { word, everyDays } of RARE) {
      const h = hotRuns.get(word) as Awaited<ReturnType<typeof timeStore>>;
      const c = await timeStore(word);
      const r = await timeRaw(word, files);
      const opened = admittedFiles(store, files, word);
      const ro = await timeRaw(word, opened);
      const holding = await filesHolding(conn, coldDir, files, word);
      const same =
        c.answer.total === h.answer.total &&
        c.answer.total === r.count &&
        JSON.stringify(c.answer.events.map((e) => e.ev_id)) === JSON.stringify(r.ids) &&
        JSON.stringify(h.answer.events.map((e) => e.ev_id)) === JSON.stringify(r.ids);
      console.log(
        `${word.padEnd(11)} (1 event every ${everyDays} day${everyDays > 1 ? 's' : ''}, ${c.answer.total} found)` +
          `   hot ${fmt(h.p50, 1)}   cold ${fmt(c.p50, 1)}   raw on every file ${fmt(r.p50, 1)}` +
          `   raw on the files opened ${fmt(ro.p50, 1)}` +
          `   cold/hot ${fmt(c.p50 / h.p50, 2)}× (goal ≤ 2)   cold/raw ${fmt(c.p50 / r.p50, 2)}×` +
          `   files: ${files.length} met, ${opened.length} opened, ${holding} hold the word   same answer: ${same ? 'yes' : 'NO'}`,
      );
    }
    conn.closeSync();
    raw.closeSync();
  } finally {
    await store.close();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

/** N demo events in time order over DAYS days from `start`, normalised and mined as ingest does. */
async function load(store: DuckDbEventStore, total: number, start: number): Promise<void> {
  const gen = demoGenerator(11);
  const miner = new TemplateMiner();
  const perDay = total / DAYS;
  let batch: NormalisedEvent[] = [];
  for (let i = 0; i < total; i++) {
    const ts = Math.floor(start + (i / total) * DAYS * DAY);
    const n = normaliseRecord(gen.next(ts), { receivedAt: ts, intake: 'bench', newId: () => newEventId(ts) });
    if (!n.ok) throw new Error(n.detail);
    const e = n.event;
    // The first event of some days carries a rare word.
    const day = Math.floor(i / perDay);
    if (i === Math.ceil(day * perDay) + 17)
      for (const { word, everyDays } of RARE) if (day % everyDays === 0) e.message = `${e.message} ${word}`;
    e.pattern_id = miner.match(e.app ?? '', e.message ?? '').id;
    batch.push(e);
    if (batch.length === BATCH) {
      await store.append(batch);
      batch = [];
    }
    if (i % 50_000 === 0) process.stderr.write(`\r  loading: ${fmt(i)} events`);
  }
  if (batch.length) await store.append(batch);
  process.stderr.write('\n');
}

/**
 * The files the store opens for `message contains word`: those its summaries admit, as
 * the store's reads decide it (duckdb-reads.ts). The store keeps its word index and the
 * files' summaries to itself; the bench reads them through its private database handle.
 */
function admittedFiles(
  store: DuckDbEventStore,
  files: readonly ColdFileRecord[],
  word: string,
): ColdFileRecord[] {
  const db = (store as unknown as { db: DuckDbDatabase }).db;
  const filter = cond('message', 'contains', word);
  const test = db.words.test(filter);
  return files.filter((f) => summaryAdmits(db.cold?.summary(f) ?? null, test, filter));
}

/** The files that hold the word: a lower bound of what any reader must open. */
async function filesHolding(
  conn: Awaited<ReturnType<DuckDBInstance['connect']>>,
  coldDir: string,
  files: readonly ColdFileRecord[],
  word: string,
): Promise<number> {
  const list = files.map((f) => `'${path.join(coldDir, f.path).replaceAll("'", "''")}'`).join(', ');
  const rows = await conn.runAndReadAll(
    `SELECT count(DISTINCT filename) AS n FROM read_parquet([${list}], filename = true) WHERE contains(lower(message), '${word}')`,
  );
  return Number(rows.getRowObjects()[0]?.n);
}

/** The files' bytes by column (compressed), largest first: where a cold event's bytes go. */
async function columnBytes(
  conn: Awaited<ReturnType<DuckDBInstance['connect']>>,
  coldDir: string,
  files: readonly ColdFileRecord[],
): Promise<void> {
  const list = files.map((f) => `'${path.join(coldDir, f.path).replaceAll("'", "''")}'`).join(', ');
  const rows = (
    await conn.runAndReadAll(
      `SELECT split_part(path_in_schema, ',', 1) AS col, sum(total_compressed_size) AS b
       FROM parquet_metadata([${list}]) GROUP BY ALL ORDER BY b DESC`,
    )
  ).getRowObjects();
  const rowsTotal = files.reduce((s, f) => s + f.rows, 0);
  console.log(
    `cold bytes per event by column: ${rows
      .slice(0, 8)
      .map((r) => `${r.col} ${fmt(Number(r.b) / rowsTotal, 1)}`)
      .join(', ')}`,
  );
}
