/**
 * `logscope backup verify` (docs/api/backups.md, ADR 0036): a backup folder checked alone,
 * with neither the server nor the data dir: its manifest, every listed file (present, size,
 * sha256, Parquet rows from the footer), no unlisted file, the metadata database (SQLite's
 * integrity check, its tables' counts), the event counts against the rows, and for an
 * incremental every base of its chain. Reads only: nothing in the folder changes.
 */

import { readdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as DuckDB from '@duckdb/node-api';
import { openSqliteDatabase } from '../../metadata/sqlite-driver.js';
import {
  type BackupKind,
  hashFile,
  INCOMPLETE_MARK,
  MANIFEST,
  type Manifest,
  type ManifestFile,
  METADATA_TABLES,
  readManifest,
} from './manifest.js';

export type VerifyProblemWord =
  | 'manifest'
  | 'incomplete'
  | 'missing'
  | 'size'
  | 'checksum'
  | 'rows'
  | 'unreadable'
  | 'not_listed'
  | 'counts'
  | 'base';

export interface VerifyProblem {
  /** Relative to the folder, `/`-separated (a base's problem: the base's folder). */
  path: string;
  problem: VerifyProblemWord;
  detail: string;
}

export interface VerifyReport {
  ok: boolean;
  /** In the manifest's file order: the first names the first bad file. */
  problems: VerifyProblem[];
  kind: BackupKind | null;
  /** Hot and cold, as the manifest counts them (an incremental: the whole chain's). */
  events: number;
  files: number;
  bytes: number;
}

/** The folder to verify is not a folder (the CLI's exit code 2). */
export class NotABackupFolder extends Error {}

/** DuckDB's values, required as the CommonJS package it is (as the event store does). */
const duckdb = () => createRequire(import.meta.url)('@duckdb/node-api') as typeof DuckDB;

/** A folder checked, and its manifest when it had a readable one. */
export interface CheckedFolder {
  dir: string;
  manifest: Manifest | null;
  problems: VerifyProblem[];
}

/** Checks a backup folder and, for an incremental, its chain (`base` problems). */
export async function verifyBackup(dir: string): Promise<VerifyReport> {
  return (await verifyWithChain(dir)).report;
}

/** The report, and the chain it checked (oldest first, the folder itself last). */
export async function verifyWithChain(
  dir: string,
): Promise<{ report: VerifyReport; chain: CheckedFolder[] }> {
  const chain = await verifyChain(dir);
  const own = chain[chain.length - 1] as CheckedFolder;
  const problems = [...own.problems];
  for (const base of chain.slice(0, -1))
    for (const p of base.problems)
      problems.push({ path: base.dir, problem: 'base', detail: `${p.path}: ${p.problem}: ${p.detail}` });
  problems.push(...(await chainProblems(chain)));
  const m = own.manifest;
  const report: VerifyReport = {
    ok: problems.length === 0,
    problems,
    kind: m?.kind ?? null,
    events: m ? Number(m.counts.events.hot) + Number(m.counts.events.cold) : 0,
    files: m?.files.length ?? 0,
    bytes: m?.bytes ?? 0,
  };
  return { report, chain };
}

/**
 * The folder and its bases, oldest first (the folder itself last), each checked. A base
 * that cannot be found or is not the one recorded ends the chain with a `base` problem.
 */
async function verifyChain(dir: string): Promise<CheckedFolder[]> {
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) throw new NotABackupFolder(`${dir} is not a folder`);
  const instance = await duckdb().DuckDBInstance.create(':memory:');
  const duck = await instance.connect();
  try {
    const chain: CheckedFolder[] = [await checkFolder(dir, duck)];
    const seen = new Set([path.resolve(dir)]);
    for (;;) {
      const child = chain[0] as CheckedFolder;
      const base = child.manifest?.base;
      if (!base) break;
      const baseDir = path.resolve(child.dir, base.path);
      const baseInfo = await stat(baseDir).catch(() => null);
      const fail = (detail: string) => child.problems.push({ path: MANIFEST, problem: 'base', detail });
      if (seen.has(baseDir)) {
        fail(`the chain comes back to ${baseDir}`);
        break;
      }
      seen.add(baseDir);
      if (!baseInfo?.isDirectory()) {
        fail(
          `its base ${base.id} is not at ${baseDir} (an incremental needs its chain at the recorded paths)`,
        );
        break;
      }
      const checked = await checkFolder(baseDir, duck);
      const found = checked.manifest;
      if (found && (found.id !== base.id || found.instance_id !== child.manifest?.instance_id)) {
        fail(`${baseDir} holds backup ${found.id} of instance ${found.instance_id}, not its base ${base.id}`);
        break;
      }
      chain.unshift(checked);
      if (!found) break;
    }
    return chain;
  } finally {
    duck.closeSync();
    instance.closeSync();
  }
}

/**
 * An incremental's chain: every inherited file is held, with its hash, by the backup of the
 * chain it names, and the cold events it counts are the rows of its own cold files and of
 * those it inherits.
 */
async function chainProblems(chain: CheckedFolder[]): Promise<VerifyProblem[]> {
  const own = chain[chain.length - 1]?.manifest;
  if (!own?.base) return [];
  const held = new Map<string, Manifest>();
  for (const c of chain) if (c.manifest) held.set(c.manifest.id, c.manifest);
  const problems: VerifyProblem[] = [];
  let cold = own.files.filter((f) => f.kind === 'cold').reduce((sum, f) => sum + Number(f.rows ?? 0), 0);
  for (const f of own.inherited) {
    const there = held.get(f.from)?.files.find((x) => x.path === f.path);
    if (!there || there.sha256 !== f.sha256)
      problems.push({
        path: f.path,
        problem: 'base',
        detail: `backup ${f.from} of its chain does not hold this file`,
      });
    else cold += Number(there.rows ?? 0);
  }
  if (chain.every((c) => c.manifest) && Number(own.counts.events.cold) !== cold)
    problems.push({
      path: MANIFEST,
      problem: 'counts',
      detail: `counts.events.cold is ${own.counts.events.cold}, the chain's cold files hold ${cold} rows`,
    });
  return problems;
}

/** One folder's own checks (its chain aside). */
async function checkFolder(dir: string, duck: DuckDB.DuckDBConnection): Promise<CheckedFolder> {
  const problems: VerifyProblem[] = [];
  const incomplete = await stat(path.join(dir, INCOMPLETE_MARK)).catch(() => null);
  if (incomplete)
    problems.push({
      path: INCOMPLETE_MARK,
      problem: 'incomplete',
      detail: 'the job that wrote this folder did not finish (or is still running)',
    });
  const read = await readManifest(dir);
  if ('problem' in read) {
    problems.push({ path: MANIFEST, problem: 'manifest', detail: read.problem });
    return { dir, manifest: null, problems };
  }
  const m = read.manifest;
  const listed = new Set<string>();
  for (const f of m.files) {
    listed.add(f.path);
    const problem = await checkFile(dir, f, m, duck);
    if (problem) problems.push({ path: f.path, ...problem });
  }
  for (const rel of await filesUnder(dir))
    if (!listed.has(rel) && rel !== MANIFEST && rel !== INCOMPLETE_MARK)
      problems.push({ path: rel, problem: 'not_listed', detail: 'in the folder but not in the manifest' });
  const storeHot = m.layout === 'files' ? await storeEvents(duck, dir, m, problems) : null;
  problems.push(...eventCounts(m, storeHot));
  return { dir, manifest: m, problems };
}

type Found = Omit<VerifyProblem, 'path'> | null;

/** A listed file's first problem, or null when it is whole. */
async function checkFile(
  dir: string,
  f: ManifestFile,
  m: Manifest,
  duck: DuckDB.DuckDBConnection,
): Promise<Found> {
  if (typeof f.path !== 'string' || !safeRelative(f.path))
    return { problem: 'manifest', detail: 'the manifest names a path outside the folder' };
  const file = path.join(dir, ...f.path.split('/'));
  const info = await stat(file).catch(() => null);
  if (!info) return { problem: 'missing', detail: `listed (${f.bytes} bytes) but not in the folder` };
  if (!info.isFile()) return { problem: 'unreadable', detail: 'not a file' };
  if (info.size !== f.bytes)
    return { problem: 'size', detail: `${info.size} bytes, the manifest says ${f.bytes}` };
  let sha256: string;
  try {
    ({ sha256 } = await hashFile(file));
  } catch (err) {
    return {
      problem: 'unreadable',
      detail: `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    };
  }
  if (sha256 !== f.sha256)
    return { problem: 'checksum', detail: `sha256 ${sha256}, the manifest says ${f.sha256} (altered)` };
  if (f.path.endsWith('.parquet')) {
    const rows = await parquetRows(duck, file);
    if (rows === null) return { problem: 'unreadable', detail: 'not a readable Parquet file (its footer)' };
    if (f.rows !== undefined && rows !== f.rows)
      return { problem: 'rows', detail: `${rows} rows in its footer, the manifest says ${f.rows}` };
  }
  if (f.kind === 'metadata') return checkMetadata(file, m.counts.metadata);
  return null;
}

/** A relative `/`-separated path that stays inside the folder. */
export function safeRelative(rel: string): boolean {
  return (
    rel.length > 0 &&
    !rel.startsWith('/') &&
    !rel.includes('\\') &&
    !rel.includes('\0') &&
    rel.split('/').every((part) => part !== '' && part !== '.' && part !== '..')
  );
}

/** The rows a Parquet file's footer records, or null when it has no readable footer. */
export async function parquetRows(duck: DuckDB.DuckDBConnection, file: string): Promise<number | null> {
  try {
    const reader = await duck.runAndReadAll(
      `SELECT sum(num_rows) AS n FROM parquet_file_metadata(${sqlString(file)})`,
    );
    const n = reader.getRowObjectsJS()[0]?.n;
    return n === null || n === undefined ? null : Number(n);
  } catch {
    return null;
  }
}

export const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** The metadata database: SQLite's integrity check, then each counted table's rows. */
async function checkMetadata(file: string, counts: Manifest['counts']['metadata']): Promise<Found> {
  let opened: Awaited<ReturnType<typeof openSqliteDatabase>>;
  try {
    opened = await openSqliteDatabase(file, { readOnly: true });
  } catch {
    return { problem: 'unreadable', detail: 'not a SQLite database that can be opened' };
  }
  const db = opened.database;
  try {
    const one = (sql: string) => db.prepare(sql).all([]) as Array<Record<string, unknown>>;
    let check: Array<Record<string, unknown>>;
    try {
      check = one('PRAGMA integrity_check');
    } catch {
      return { problem: 'unreadable', detail: 'not a SQLite database (or damaged past reading)' };
    }
    const said = check.map((r) => String(Object.values(r)[0]));
    if (said.length !== 1 || said[0] !== 'ok')
      return {
        problem: 'unreadable',
        detail: `SQLite's integrity check fails: ${said.slice(0, 3).join('; ')}`,
      };
    const wrong: string[] = [];
    for (const [name, table] of Object.entries(METADATA_TABLES)) {
      const expected = (counts as Record<string, number | undefined>)?.[name];
      let rows: number;
      try {
        rows = Number(one(`SELECT count(*) AS n FROM "${table}"`)[0]?.n);
      } catch {
        wrong.push(`no table ${table}`);
        continue;
      }
      if (expected !== undefined && rows !== Number(expected))
        wrong.push(`${name}: ${rows} rows, the manifest says ${expected}`);
    }
    return wrong.length ? { problem: 'counts', detail: wrong.join('; ') } : null;
  } finally {
    db.close();
  }
}

/**
 * The manifest's event counts against its files' rows: a full backup's hot events are its
 * hot parts' rows, an incremental's the rows of `hot/ids.parquet`; the cold events are the
 * rows of the cold files, its own and those it inherits (counted by the base that holds them,
 * which is checked with the chain).
 */
function eventCounts(m: Manifest, storeHot: number | null): VerifyProblem[] {
  const rowsOf = (kind: ManifestFile['kind']) =>
    m.files.filter((f) => f.kind === kind).reduce((sum, f) => sum + Number(f.rows ?? 0), 0);
  const problems: VerifyProblem[] = [];
  // A `files` backup's hot events are in its copy of the event store (when that is whole).
  const hot = m.layout === 'files' ? storeHot : m.base === null ? rowsOf('hot') : rowsOf('hot_ids');
  const holder = m.layout === 'files' ? "event store's file" : m.base === null ? 'hot parts' : 'hot ids';
  if (hot !== null && Number(m.counts.events.hot) !== hot)
    problems.push({
      path: MANIFEST,
      problem: 'counts',
      detail: `counts.events.hot is ${m.counts.events.hot}, the ${holder} holds ${hot} rows`,
    });
  if (m.base === null) {
    const cold = rowsOf('cold');
    if (Number(m.counts.events.cold) !== cold)
      problems.push({
        path: MANIFEST,
        problem: 'counts',
        detail: `counts.events.cold is ${m.counts.events.cold}, the cold files hold ${cold} rows`,
      });
  }
  return problems;
}

/**
 * The events in a `files` backup's copy of the event store, opened read-only; null when
 * that file has a problem already (or there is none).
 */
async function storeEvents(
  duck: DuckDB.DuckDBConnection,
  dir: string,
  m: Manifest,
  problems: VerifyProblem[],
): Promise<number | null> {
  const rel = 'events/events.duckdb';
  if (!m.files.some((f) => f.path === rel) || problems.some((p) => p.path.startsWith('events/'))) return null;
  const file = path.join(dir, 'events', 'events.duckdb').replaceAll("'", "''");
  try {
    await duck.run(`ATTACH '${file}' AS pre_upgrade (READ_ONLY)`);
    try {
      const rows = (
        await duck.runAndReadAll('SELECT count(*) AS n FROM pre_upgrade.events')
      ).getRowObjectsJS();
      return Number(rows[0]?.n ?? 0);
    } finally {
      await duck.run('DETACH pre_upgrade');
    }
  } catch {
    problems.push({
      path: rel,
      problem: 'unreadable',
      detail: 'not a readable DuckDB file with an events table',
    });
    return null;
  }
}

/** Every file under a folder, relative and `/`-separated, sorted. */
async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(path.join(dir, prefix), { withFileTypes: true });
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await filesUnder(dir, rel)));
    else out.push(rel);
  }
  return out;
}
