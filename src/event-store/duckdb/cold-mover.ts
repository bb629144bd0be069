import { chmod, mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { EVENT_SCHEMA } from '../../core/event.js';
import type { FilterNode } from '../../filter/ast.js';
import type { ColdMove, ColdMoveResult } from '../event-store.js';
import { quoteIdent, SqlParams, sqlTime } from '../sql/sql-params.js';
import {
  type ColdFile,
  ColdFiles,
  coldRowsSql,
  fileSha256,
  fsyncPath,
  removeColdFile,
} from './cold-files.js';
import { buildSummary, type ColdSummary, GROUP_ROWS, summaryBytes } from './cold-summary.js';
import type { DuckDbDatabase } from './duckdb-database.js';
import { compileFilter } from './duckdb-filter-compiler.js';
import type { DuckDbReads } from './duckdb-reads.js';
import { duckDbValue } from './duckdb-schema.js';

const DAY_MS = 86_400_000;

/**
 * zstd's level for the files: written once in the background and read for months, so
 * smaller beats faster. At 1 M demo events: level 15 29.8 bytes/event (0.48× the hot store
 * at rest), moved in 51 s; level 9 31.9 in 34 s; the default 3 34.4; 19 was 22× slower to
 * write than 3 (bench/notes/2026-11-28-cold-tier.md). In row groups of GROUP_ROWS with
 * Parquet's version 2 encodings (ADR 0032): 25.3 bytes/event (0.41×), moved in 29 s.
 */
const ZSTD_LEVEL = 15;

/** A file written and made durable, not yet recorded. */
interface Written {
  file: ColdFile;
  absolute: string;
  summary: ColdSummary;
}

/** A path in SQL: a string literal (a table function and COPY take no bound values). */
const literal = (p: string) => `'${p.replaceAll("'", "''")}'`;

/** Stream-days moved at most in one call: a round does the rest at its next call. */
const MAX_FILES_PER_CALL = 200;

/**
 * The file's columns (docs/operations/cold-tier.md): the schema's as stored, times as
 * UTC-adjusted timestamps, then `fields` holding every other field (its own column's value
 * when the store keeps one, ADR 0017), then the store's own (`shape`).
 */
function fileColumns(extraColumns: ReadonlyArray<readonly [string, string]>, params: SqlParams): string {
  const byName = (n: string) => quoteIdent(n);
  const order = [
    'ev_id',
    'ts',
    'received_at',
    'stored_at',
    'host',
    'app',
    'severity',
    'facility',
    'message',
    'src_ip',
    'dst_ip',
    'user',
    'action',
    'source',
    'intake',
    'pattern_id',
    'src_port',
    'dst_port',
    'status',
    'bytes',
  ];
  const types = new Map<string, string>(EVENT_SCHEMA.map((c) => [c.name, c.type]));
  const cols = order.map((n) =>
    types.get(n) === 'time' ? `${byName(n)}::TIMESTAMPTZ AS ${byName(n)}` : byName(n),
  );
  // Every extra field in the map: those with a column of their own joined in.
  let fields = 'coalesce(fields, MAP {}::MAP(VARCHAR, VARCHAR))';
  for (const [column, field] of extraColumns) {
    const c = quoteIdent(column);
    fields = `CASE WHEN ${c} IS NULL THEN ${fields} ELSE map_concat(${fields}, MAP {${params.add(field)}: ${c}}) END`;
  }
  cols.push(`${fields} AS fields`, 'shape');
  return cols.join(', ');
}

/**
 * Moves events past their streams' hot days into Parquet files (ADR 0031): per stream-day,
 * the file is written beside its place, made durable and renamed; then one transaction
 * deletes exactly the file's events from the hot table and records the file. A crash
 * before that commit leaves a file no record names, removed at the next start; after it,
 * the move is whole. Each event is in one tier at every instant, and a statement reads
 * the files of the snapshot it reads (cold-files.ts).
 */
export class ColdMover {
  constructor(
    private readonly db: DuckDbDatabase,
    private readonly cold: ColdFiles,
    private readonly reads: DuckDbReads,
  ) {}

  /** Files whose records were deleted (retention): removed at the next call. */
  private readonly doomed: string[] = [];

  async move(req: ColdMove): Promise<ColdMoveResult> {
    await this.removeDoomed();
    const out: ColdMoveResult = { files: 0, events: 0, errors: [] };
    const params = new SqlParams(undefined, this.db.extras.columnOf);
    const where = this.candidates(req, params);
    const home = this.homeSql(req, params);
    const groups = (
      await this.reads.onReader(
        `SELECT ${home} AS home, strftime(ts, '%Y-%m-%d') AS day, count(*) AS n ${where} GROUP BY ALL ORDER BY day, home LIMIT ${MAX_FILES_PER_CALL}`,
        params.values.map(duckDbValue),
      )
    ).getRowObjectsJS();
    for (const g of groups) {
      try {
        const f = await this.moveOne(req, Number(g.home), String(g.day));
        if (f) {
          out.files++;
          out.events += f.rows;
        }
      } catch (err) {
        out.errors.push(`${g.home}/${g.day}: ${(err as Error).message}`);
      }
    }
    if (out.files > 0) await this.dropMovedBlocks(req.cutMs);
    return out;
  }

  /**
   * The word index's blocks whose events have all left the hot table: those older than
   * its oldest event (every event before the cut when none is left). Kept, they made a
   * rare word's search read the moved days' ranges of the hot table and counted their
   * events as candidates (the few-matches estimate). Under the write gate, so no late
   * event older than that lands between the two statements.
   */
  private async dropMovedBlocks(cutMs: number): Promise<void> {
    const { gate, writer, words } = this.db;
    await gate.write(async () => {
      const [m] = (
        await writer.runAndReadAll('SELECT epoch_ms(min(ts)) AS lo FROM events')
      ).getRowObjectsJS();
      const lo = m?.lo === null || m?.lo === undefined ? cutMs : Math.min(cutMs, Number(m.lo));
      await words.deleteOlderThan(writer, lo);
    });
  }

  /** `FROM events WHERE …`: the events older than the cut that no stream keeps hot. */
  private candidates(req: ColdMove, params: SqlParams, day?: string): string {
    const cut = params.add(sqlTime(req.cutMs));
    const keep = req.keep ? ` AND NOT coalesce((${compileFilter(req.keep, params)}), false)` : '';
    let range = '';
    if (day) {
      const from = Date.parse(`${day}T00:00:00Z`);
      range = ` AND ts >= ${params.add(sqlTime(from))} AND ts < ${params.add(sqlTime(from + DAY_MS))}`;
    }
    return `FROM events WHERE ts < ${cut}${range}${keep}`;
  }

  /** An event's home: the lowest-id stream other than Default it belongs to, else Default. */
  private homeSql(req: ColdMove, params: SqlParams): string {
    if (!req.homes.length) return String(req.defaultId);
    const whens = req.homes.map(
      (h) => `WHEN coalesce((${compileFilter(h.filter, params)}), false) THEN ${h.id}`,
    );
    return `CASE ${whens.join(' ')} ELSE ${req.defaultId} END`;
  }

  private async moveOne(req: ColdMove, streamId: number, day: string): Promise<ColdFile | null> {
    const params = new SqlParams(undefined, this.db.extras.columnOf);
    const cols = fileColumns(this.db.extras.columns, params);
    const where = this.candidates(req, params, day);
    const home = this.homeSql(req, params);
    const written = await this.writeFile(
      streamId,
      day,
      `SELECT ${cols} ${where} AND ${home} = ${streamId} ORDER BY ts, ev_id`,
      params,
      req.nowMs,
    );
    if (!written) return null;
    await this.commit(written);
    return written.file;
  }

  /**
   * Writes the rows of `select` as the next part of a stream-day: beside its place, made
   * durable, renamed, its folder made durable. Nothing records it: the caller commits it.
   */
  private async writeFile(
    streamId: number,
    day: string,
    select: string,
    params: SqlParams,
    nowMs: number,
  ): Promise<Written | null> {
    const part = this.cold.nextPart(streamId, day);
    const rel = `${streamId}/${day}/part-${part}.parquet`;
    const final = this.cold.absolute({ path: rel });
    const tmp = path.join(path.dirname(final), `.part-${part}.parquet.tmp`);
    await mkdir(path.dirname(final), { recursive: true, mode: 0o700 });
    try {
      const meta = `KV_METADATA {'logscope.schema_version': '1', 'logscope.stream_id': '${streamId}'}`;
      await this.reads.onReader(
        `COPY (${select}) TO ${literal(tmp)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL ${ZSTD_LEVEL}, ROW_GROUP_SIZE ${GROUP_ROWS}, PARQUET_VERSION V2, ${meta})`,
        params.values.map(duckDbValue),
      );
      const [s] = (
        await this.reads.onReader(
          `SELECT count(*) AS n, epoch_ms(min(ts)) AS lo, epoch_ms(max(ts)) AS hi, min(ev_id) AS a, max(ev_id) AS b FROM read_parquet(${literal(tmp)})`,
        )
      ).getRowObjectsJS();
      const rows = Number(s?.n ?? 0);
      if (!s || rows === 0) {
        await rm(tmp, { force: true });
        return null;
      }
      const summary = await this.summaryOf(tmp);
      await chmod(tmp, 0o600);
      await fsyncPath(tmp);
      const bytes = (await stat(tmp)).size;
      const sha256 = await fileSha256(tmp);
      await rename(tmp, final);
      await fsyncPath(path.dirname(final));
      const file: ColdFile = {
        id: this.cold.nextId(),
        streamId,
        day,
        part,
        path: rel,
        rows,
        bytes,
        minTs: Number(s.lo),
        maxTs: Number(s.hi),
        minEvId: String(s.a),
        maxEvId: String(s.b),
        sha256,
        createdAt: nowMs,
        summaryBytes: summaryBytes(summary),
      };
      return { file, absolute: final, summary };
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  /**
   * Retention over the cold tier: of each file holding events older than `cutMs` that
   * `keep` does not match, those events go. A file left with none is forgotten (its record
   * deleted); one left with some is written again without them as the stream-day's next
   * part, the new record replacing the old in one transaction. The old file is removed
   * at the next call (a statement planned before may still read it), or at the next start.
   * Returns how many events went.
   */
  async expire(cutMs: number, keep: FilterNode | undefined, nowMs = Date.now()): Promise<number> {
    await this.removeDoomed();
    let deleted = 0;
    for (const f of this.cold.all().filter((x) => x.minTs < cutMs)) {
      const params = new SqlParams(undefined, this.db.extras.columnOf);
      const rows = `(${coldRowsSql(this.cold, [f], this.db.extras.columns, (p) => this.db.sets.bitsOfRows(p), params)})`;
      const expired = `(ts < ${params.add(sqlTime(cutMs))}${keep ? ` AND NOT coalesce((${compileFilter(keep, params)}), false)` : ''})`;
      const [c] = (
        await this.reads.onReader(
          `SELECT count(*) FILTER (WHERE ${expired}) AS gone FROM ${rows}`,
          params.values.map(duckDbValue),
        )
      ).getRowObjectsJS();
      const gone = Number(c?.gone ?? 0);
      if (gone === 0) continue;
      const kept =
        gone === f.rows
          ? null
          : await this.writeFile(
              f.streamId,
              f.day,
              `SELECT ${fileColumns(this.db.extras.columns, params)} FROM ${rows} WHERE NOT ${expired} ORDER BY ts, ev_id`,
              params,
              nowMs,
            );
      await this.db.gate.write(async () => {
        const { writer } = this.db;
        await writer.run('BEGIN TRANSACTION');
        try {
          await writer.run('DELETE FROM cold_files WHERE id = $1', [f.id]);
          if (kept) await ColdFiles.insert(writer, kept.file, kept.summary);
          await writer.run('COMMIT');
        } catch (err) {
          await writer.run('ROLLBACK').catch(() => undefined);
          throw err;
        }
        this.cold.replaced(f, kept);
      });
      this.doomed.push(this.cold.absolute(f));
      deleted += gone;
    }
    return deleted;
  }

  /**
   * `retentionMaxBytes` over both tiers: whole cold files, oldest first, are forgotten until
   * at least `bytes` are freed (or none is left). Returns the events they held.
   */
  async dropOldest(bytes: number): Promise<{ events: number; bytes: number }> {
    await this.removeDoomed();
    const gone: ColdFile[] = [];
    let freed = 0;
    for (const f of [...this.cold.all()].sort((a, b) => a.minTs - b.minTs || a.id - b.id)) {
      if (freed >= bytes) break;
      gone.push(f);
      freed += f.bytes;
    }
    if (!gone.length) return { events: 0, bytes: 0 };
    await this.db.gate.write(async () => {
      const { writer } = this.db;
      await writer.run('BEGIN TRANSACTION');
      try {
        for (const f of gone) await writer.run('DELETE FROM cold_files WHERE id = $1', [f.id]);
        await writer.run('COMMIT');
      } catch (err) {
        await writer.run('ROLLBACK').catch(() => undefined);
        throw err;
      }
      for (const f of gone) this.cold.replaced(f, null);
    });
    for (const f of gone) this.doomed.push(this.cold.absolute(f));
    return { events: gone.reduce((n, f) => n + f.rows, 0), bytes: freed };
  }

  /** A new file's summary (cold-summary.ts), read back on a connection of its own. */
  private async summaryOf(file: string): Promise<ColdSummary> {
    const conn = await this.db.instance.connect();
    try {
      return await buildSummary(conn, file, this.db.words.lowering);
    } finally {
      conn.closeSync();
    }
  }

  /**
   * Files whose records went at an earlier call: no statement planned since reads them.
   * A day's folder goes with its last file, and a stream's with its last day.
   */
  private async removeDoomed(): Promise<void> {
    for (const p of this.doomed.splice(0)) await removeColdFile(this.cold.dir, p);
  }

  /**
   * One transaction: the file's events leave the hot table and its record is written.
   * Refused (and the file removed) when the table no longer holds every one of them
   * (retention deleted some meanwhile): the round after writes the file again.
   */
  private async commit({ file, absolute, summary }: Written): Promise<void> {
    const { gate, writer } = this.db;
    const ok = await gate.write(async () => {
      await writer.run('BEGIN TRANSACTION');
      try {
        const src = `read_parquet(${literal(absolute)})`;
        const res = await writer.run(
          `DELETE FROM events WHERE ts >= $1 AND ts <= $2 AND ev_id IN (SELECT ev_id FROM ${src})`,
          [duckDbValue(sqlTime(file.minTs)), duckDbValue(sqlTime(file.maxTs))],
        );
        if (res.rowsChanged !== file.rows) {
          await writer.run('ROLLBACK');
          return false;
        }
        await ColdFiles.insert(writer, file, summary);
        await writer.run('COMMIT');
      } catch (err) {
        await writer.run('ROLLBACK').catch(() => undefined);
        throw err;
      }
      this.cold.committed(file, summary);
      return true;
    });
    if (!ok) {
      await rm(absolute, { force: true });
      throw new Error(`the hot store no longer holds every event of ${file.path}; moved again next round`);
    }
  }
}
