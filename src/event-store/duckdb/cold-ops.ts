import { type Dirent, realpathSync } from 'node:fs';
import { chmod, lstat, mkdir, readdir, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { EVENT_SCHEMA } from '../../core/event.js';
import { badRequest, notFound } from '../../errors/errors.js';
import type {
  ColdImport,
  ColdImportResult,
  ColdProblem,
  ColdVerify,
  ColdVerifyResult,
} from '../event-store.js';
import { type ColdFile, ColdFiles, fileSha256, fsyncPath } from './cold-files.js';
import { buildSummary } from './cold-summary.js';
import type { DuckDbDatabase } from './duckdb-database.js';
import type { DuckDbReads } from './duckdb-reads.js';

/** A path in SQL: a string literal (a table function takes no bound values). */
const literal = (p: string) => `'${p.replaceAll("'", "''")}'`;

/** The type DuckDB reads each of the files' columns as (docs/operations/cold-tier.md). */
const COLUMN_TYPES: Readonly<Record<string, string>> = {
  text: 'VARCHAR',
  ip: 'VARCHAR',
  time: 'TIMESTAMP WITH TIME ZONE',
  int32: 'INTEGER',
  int64: 'BIGINT',
  map: 'MAP(VARCHAR, VARCHAR)',
};

/** `<stream id>/<YYYY-MM-DD>/…`: where a file's path names its stream. */
const FILED = /^(\d{1,15})\/\d{4}-\d{2}-\d{2}\//;

type ImportedFile = ColdImportResult['files'][number];

/**
 * The cold tier's operations (docs/operations/cold-tier.md): `verify` checks every record
 * against its file and every Parquet file under the directory against the records,
 * changing nothing; `import` records Parquet files placed under the directory (a day
 * folder copied back from an archive), each filed as the next part of its stream-day and
 * committed as a move is (cold-mover.ts): its record written in one transaction inside
 * a write of the statement gate, so a statement reads it only once it is whole.
 */
export class ColdOps {
  constructor(
    private readonly db: DuckDbDatabase,
    private readonly cold: ColdFiles,
    private readonly reads: DuckDbReads,
  ) {}

  async verify(req: ColdVerify): Promise<ColdVerifyResult> {
    const records = this.cold.all().filter((f) => req.streamId === undefined || f.streamId === req.streamId);
    const out: ColdVerifyResult = { files: 0, events: 0, bytes: 0, problems: [] };
    await this.withConnection(async (conn) => {
      for (const f of records) {
        out.files++;
        out.events += f.rows;
        out.bytes += f.bytes;
        out.problems.push(...(await this.check(conn, f, req.checksums)));
      }
    });
    const known = new Set(this.cold.all().map((f) => f.path));
    const under = req.streamId === undefined ? '' : String(req.streamId);
    for (const rel of await this.parquetFiles(under))
      if (!known.has(rel))
        out.problems.push({ path: rel, problem: 'not_recorded', detail: 'No record names this file.' });
    return out;
  }

  /** What is wrong with one recorded file: nothing, or each disagreement found. */
  private async check(conn: DuckDBConnection, f: ColdFile, checksums: boolean): Promise<ColdProblem[]> {
    const file = this.cold.absolute(f);
    const problem = (p: ColdProblem['problem'], detail: string): ColdProblem => ({
      path: f.path,
      problem: p,
      detail,
    });
    let size: number;
    try {
      size = (await stat(file)).size;
    } catch {
      return [problem('missing', 'The recorded file is not there.')];
    }
    const out: ColdProblem[] = [];
    if (size !== f.bytes) out.push(problem('size', `Recorded ${f.bytes} bytes, the file has ${size}.`));
    else if (checksums) {
      const sha = await fileSha256(file);
      if (sha !== f.sha256)
        out.push(problem('checksum', `Recorded sha256 ${f.sha256}, the file has ${sha}.`));
    }
    let s: Record<string, unknown> | undefined;
    try {
      [s] = (
        await conn.runAndReadAll(
          `SELECT count(*) AS n, epoch_ms(min(ts)) AS lo, epoch_ms(max(ts)) AS hi FROM read_parquet(${literal(file)})`,
        )
      ).getRowObjectsJS();
    } catch (err) {
      out.push(problem('unreadable', this.engineText(err)));
      return out;
    }
    const rows = Number(s?.n ?? 0);
    if (rows !== f.rows) out.push(problem('rows', `Recorded ${f.rows} rows, the file has ${rows}.`));
    const lo = s?.lo === null ? null : Number(s?.lo);
    const hi = s?.hi === null ? null : Number(s?.hi);
    if (lo !== f.minTs || hi !== f.maxTs)
      out.push(
        problem(
          'time_range',
          `Recorded ts from ${iso(f.minTs)} to ${iso(f.maxTs)}, the file's from ${iso(lo)} to ${iso(hi)}.`,
        ),
      );
    return out;
  }

  async import(req: ColdImport): Promise<ColdImportResult> {
    const target = this.inside(req.path);
    const st = await stat(target).catch(() => null);
    if (!st) throw notFound(`No ${req.path} under the cold directory.`);
    const rel = this.relative(target);
    const files = st.isDirectory() ? await this.parquetFiles(rel) : [rel];
    for (const f of files) this.inside(f);
    const out: ColdImportResult = { files: [], events: 0 };
    await this.withConnection(async (conn) => {
      for (const f of files) {
        const r = await this.importOne(conn, f, req);
        out.files.push(r);
        if (r.status === 'imported') out.events += r.events;
      }
    });
    return out;
  }

  /**
   * `p` (relative to the cold directory, or absolute) as an absolute path inside it, else
   * a 400: through `..`, or a symbolic link that leads out, or absolute elsewhere.
   */
  private inside(p: string): string {
    const base = this.cold.dir;
    const abs = path.resolve(base, p);
    const outside = () =>
      badRequest(`path ${p} is not inside the cold directory (neither through .. nor a symbolic link).`);
    if (abs !== base && !abs.startsWith(`${base}${path.sep}`)) throw outside();
    let real: string;
    try {
      real = realpathSync(abs);
    } catch {
      return abs; // absent: the caller answers 404
    }
    const realBase = realpathSync(base);
    if (real !== realBase && !real.startsWith(`${realBase}${path.sep}`)) throw outside();
    return abs;
  }

  private relative(abs: string): string {
    return path.relative(this.cold.dir, abs).split(path.sep).join('/');
  }

  private async importOne(conn: DuckDBConnection, rel: string, req: ColdImport): Promise<ImportedFile> {
    const recorded = this.cold.all().find((f) => f.path === rel);
    if (recorded) return { path: rel, status: 'present', events: recorded.rows, detail: 'Recorded already.' };
    const file = this.cold.absolute({ path: rel });
    const refused = (detail: string, events = 0): ImportedFile => ({
      path: rel,
      status: 'refused',
      events,
      detail,
    });
    if ((await lstat(file)).isSymbolicLink()) return refused('A symbolic link: copy the file itself in.');
    const src = `read_parquet(${literal(file)})`;
    let stats: Record<string, unknown>;
    try {
      const wrong = await this.columnsWrong(conn, src);
      if (wrong) return refused(wrong);
      const [s] = (
        await conn.runAndReadAll(
          `SELECT count(*) AS n, count(DISTINCT ev_id) AS ids, count(*) FILTER (WHERE ev_id IS NULL OR ts IS NULL) AS bad,
                  epoch_ms(min(ts)) AS lo, epoch_ms(max(ts)) AS hi, min(ev_id) AS a, max(ev_id) AS b FROM ${src}`,
        )
      ).getRowObjectsJS();
      stats = s ?? {};
    } catch (err) {
      return refused(`Unreadable: ${this.engineText(err)}`);
    }
    const rows = Number(stats.n ?? 0);
    if (rows === 0) return refused('The file holds no events.');
    if (Number(stats.bad) > 0) return refused('Some rows have no ev_id or no ts.');
    if (Number(stats.ids) !== rows) return refused('Some ev_id occurs more than once in the file.', rows);
    const lo = Number(stats.lo);
    const hi = Number(stats.hi);
    const day = new Date(lo).toISOString().slice(0, 10);
    if (new Date(hi).toISOString().slice(0, 10) !== day)
      return refused('Its rows span more than one UTC day; a file holds the events of one day.', rows);
    let known: number;
    try {
      known =
        (await this.knownHot(file)) + (await this.knownCold(conn, file, String(stats.a), String(stats.b)));
    } catch (err) {
      return refused(`Its ids could not be checked against the stored events: ${this.engineText(err)}`, rows);
    }
    if (known === rows)
      return { path: rel, status: 'present', events: rows, detail: 'Every event of it is stored already.' };
    if (known > 0) return refused(`${known} of its ${rows} events are stored already.`, rows);
    const exists = (id: number | undefined) =>
      id !== undefined && req.streamIds.includes(id) ? id : undefined;
    const streamId =
      req.streamId ??
      exists(streamOfPath(rel)) ??
      exists(await this.streamOfMetadata(conn, file)) ??
      req.defaultId;
    const filed = await this.file(conn, file, streamId, day, req.nowMs, {
      rows,
      minTs: lo,
      maxTs: hi,
      minEvId: String(stats.a),
      maxEvId: String(stats.b),
    });
    return {
      path: rel,
      status: 'imported',
      events: rows,
      detail: filed === rel ? `Filed under stream ${streamId}.` : `Filed as ${filed}.`,
    };
  }

  /** Why the file's columns are not those of the files (null: they are). */
  private async columnsWrong(conn: DuckDBConnection, src: string): Promise<string | null> {
    const rows = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`)).getRowObjectsJS();
    const types = new Map(rows.map((r) => [String(r.column_name), String(r.column_type)]));
    for (const c of EVENT_SCHEMA) {
      const want = COLUMN_TYPES[c.type];
      const has = types.get(c.name);
      if (has === undefined) return `It has no column ${c.name}.`;
      if (want && has !== want) return `Its column ${c.name} is ${has}, the files' is ${want}.`;
    }
    return null;
  }

  /** How many of the file's ids the hot table holds (read through the statement gate). */
  private async knownHot(file: string): Promise<number> {
    const [r] = (
      await this.reads.onReader(
        `SELECT count(*) AS n FROM events WHERE ev_id IN (SELECT ev_id FROM read_parquet(${literal(file)}))`,
      )
    ).getRowObjectsJS();
    return Number(r?.n ?? 0);
  }

  /** How many of the file's ids the recorded files hold (those whose id range meets it). */
  private async knownCold(conn: DuckDBConnection, file: string, lo: string, hi: string): Promise<number> {
    const meeting = this.cold.all().filter((f) => f.minEvId <= hi && f.maxEvId >= lo);
    if (!meeting.length) return 0;
    const list = meeting.map((f) => literal(this.cold.absolute(f))).join(', ');
    const [r] = (
      await conn.runAndReadAll(
        `SELECT count(DISTINCT ev_id) AS n FROM read_parquet([${list}]) WHERE ev_id IN (SELECT ev_id FROM read_parquet(${literal(file)}))`,
      )
    ).getRowObjectsJS();
    return Number(r?.n ?? 0);
  }

  /** The file's `logscope.stream_id` key-value metadata, when it holds a stream id. */
  private async streamOfMetadata(conn: DuckDBConnection, file: string): Promise<number | undefined> {
    const rows = (
      await conn.runAndReadAll(
        `SELECT decode(value) AS v FROM parquet_kv_metadata(${literal(file)}) WHERE decode(key) = 'logscope.stream_id'`,
      )
    ).getRowObjectsJS();
    const v = Number(rows[0]?.v);
    return Number.isSafeInteger(v) && v > 0 ? v : undefined;
  }

  /**
   * Files the checked file as the next part of its stream-day (renamed into place, modes
   * tightened, made durable), then records it in one transaction inside a gate write, as
   * a move commits. Returns its path; moved back where it was if the commit fails.
   */
  private async file(
    conn: DuckDBConnection,
    file: string,
    streamId: number,
    day: string,
    nowMs: number,
    figures: Pick<ColdFile, 'rows' | 'minTs' | 'maxTs' | 'minEvId' | 'maxEvId'>,
  ): Promise<string> {
    let part = this.cold.nextPart(streamId, day);
    let rel = `${streamId}/${day}/part-${part}.parquet`;
    let final = this.cold.absolute({ path: rel });
    while (final !== file && (await stat(final).catch(() => null))) {
      part++;
      rel = `${streamId}/${day}/part-${part}.parquet`;
      final = this.cold.absolute({ path: rel });
    }
    await this.folders(path.dirname(final));
    if (final !== file) await rename(file, final);
    try {
      await chmod(final, 0o600);
      await fsyncPath(final);
      await fsyncPath(path.dirname(final));
      const summary = await buildSummary(conn, final, this.db.words.lowering);
      const bytes = (await stat(final)).size;
      const sha256 = await fileSha256(final);
      const { gate, writer } = this.db;
      await gate.write(async () => {
        const record: ColdFile = {
          id: this.cold.nextId(),
          streamId,
          day,
          part,
          path: rel,
          bytes,
          sha256,
          createdAt: nowMs,
          summaryBytes: 0,
          ...figures,
        };
        await writer.run('BEGIN TRANSACTION');
        try {
          await ColdFiles.insert(writer, record, summary);
          await writer.run('COMMIT');
        } catch (err) {
          await writer.run('ROLLBACK').catch(() => undefined);
          throw err;
        }
        this.cold.committed(record, summary);
      });
    } catch (err) {
      if (final !== file) await rename(final, file).catch(() => undefined);
      throw err;
    }
    return rel;
  }

  /** Makes each folder from the cold directory down to `dir` exist, `0700`. */
  private async folders(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    for (let d = dir; d.startsWith(`${this.cold.dir}${path.sep}`); d = path.dirname(d)) await chmod(d, 0o700);
  }

  /** Every `*.parquet` under `rel` (a folder relative to the cold directory), by path. */
  private async parquetFiles(rel: string): Promise<string[]> {
    const found: string[] = [];
    const walk = async (at: string) => {
      let entries: Dirent[];
      try {
        entries = await readdir(path.join(this.cold.dir, ...at.split('/')), { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const child = at ? `${at}/${e.name}` : e.name;
        if (e.isDirectory()) await walk(child);
        else if (e.name.endsWith('.parquet')) found.push(child);
      }
    };
    await walk(rel);
    return found.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  }

  /** The engine's text, without the cold directory's absolute path. */
  private engineText(err: unknown): string {
    const text = err instanceof Error ? err.message : String(err);
    return text.split(`${this.cold.dir}${path.sep}`).join('').split('\n')[0] ?? '';
  }

  private async withConnection<T>(work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    const conn = await this.db.instance.connect();
    try {
      return await work(conn);
    } finally {
      conn.closeSync();
    }
  }
}

/** The stream a path names (`<stream id>/<day>/…`), if any. */
function streamOfPath(rel: string): number | undefined {
  const m = FILED.exec(rel);
  return m ? Number(m[1]) : undefined;
}

const iso = (ms: number | null) => (ms === null || Number.isNaN(ms) ? 'none' : new Date(ms).toISOString());
