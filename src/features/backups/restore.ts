/**
 * `logscope restore` (docs/api/backups.md, ADR 0036): a data dir made from a backup folder
 * (and its chain), with no server running on it. Every refusal is checked before anything is
 * written; the data dir is built in a new folder beside the target and renamed into place
 * once whole, so a failure leaves the target as it was.
 */
import { randomBytes } from 'node:crypto';
import { chmod, copyFile, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as DuckDB from '@duckdb/node-api';
import { isDataDirLocked } from '../../errors/startup.js';
import { recordLocally } from './local-audit.js';
import type { Manifest, ManifestFile } from './manifest.js';
import { newStoreFormat, STORE_FORMAT, STORE_FORMAT_FILE, writeStoreFormat } from './store-format.js';
import { type CheckedFolder, NotABackupFolder, sqlString, verifyWithChain } from './verify.js';

export interface RestoreOptions {
  /** The backup folder. */
  dir: string;
  /** The data dir to make. */
  dataDir: string;
  /** Where the cold files go (default `<dataDir>/cold`). */
  coldDir?: string;
  /** Replace a target that holds anything. */
  force: boolean;
  /** The stores the server is configured with: a restore is for the embedded ones. */
  stores?: { databaseUrl?: string; eventStoreUrl?: string };
}

export interface RestoreSummary {
  backup_id: string;
  kind: Manifest['kind'];
  snapshot_at: string;
  data_dir: string;
  cold_dir: string;
  /** Whether the cold files are outside the data dir (the server needs that coldDir). */
  cold_dir_given: boolean;
  events: { hot: number; cold: number };
  users: number;
  files: number;
  store_format: number;
  instance_id: string;
}

/** A restore that was refused or failed; its message is the line(s) to print. */
export class RestoreError extends Error {}

const duckdb = () => createRequire(import.meta.url)('@duckdb/node-api') as typeof DuckDB;

export async function restoreBackup(o: RestoreOptions): Promise<RestoreSummary> {
  const dir = path.resolve(o.dir);
  const target = path.resolve(o.dataDir);
  const coldTarget = o.coldDir ? path.resolve(o.coldDir) : path.join(target, 'cold');
  // A cold dir inside the data dir is built with it; one elsewhere beside itself.
  const coldInside = path.relative(target, coldTarget);
  const apart = coldInside.startsWith('..') || path.isAbsolute(coldInside);
  const chain = await checkedChain(dir);
  const m = (chain[chain.length - 1] as CheckedFolder).manifest as Manifest;
  if (m.store_format > STORE_FORMAT)
    throw new RestoreError(
      `backup ${dir} is store format ${m.store_format} (release ${m.release}); this release reads up to ${STORE_FORMAT}: restore it with ${m.release} or later`,
    );
  await mustBeFree(target, o.force, 'the data dir');
  if (coldInside === '') throw new RestoreError('--cold-dir must not be the data dir itself');
  if (apart) await mustBeFree(coldTarget, o.force, 'the cold dir');
  await mustNotBeServed(target);
  if (o.stores?.databaseUrl || o.stores?.eventStoreUrl)
    throw new RestoreError(
      `restore makes a data dir of the embedded stores, and the server is configured with ${o.stores.databaseUrl ? 'PostgreSQL (databaseUrl)' : 'ClickHouse (eventStoreUrl)'}: restore those with their own tools (docs/operations/backup.md)`,
    );
  if (m.layout !== 'logical' && m.base !== null)
    throw new RestoreError(`backup ${dir} has layout ${m.layout} and a base: this release cannot restore it`);

  const tag = randomBytes(6).toString('hex');
  const build = `${target}.restore-${tag}`;
  const coldBuild = apart ? `${coldTarget}.restore-${tag}` : path.join(build, coldInside);
  await mkdir(path.dirname(target), { recursive: true });
  if (apart) await mkdir(path.dirname(coldTarget), { recursive: true });
  let hot: number;
  try {
    await mkdir(build, { mode: 0o700 });
    await mkdir(coldBuild, { recursive: true, mode: 0o700 });
    hot =
      m.layout === 'logical'
        ? await buildLogical(chain, build, coldBuild)
        : await buildFiles(dir, m, build, coldBuild);
    const record = {
      ...newStoreFormat(),
      store_format: m.store_format,
      release: m.release,
      commit: m.commit,
    };
    if (m.layout === 'logical' || m.files.some((f) => f.kind === 'store_format'))
      await writeStoreFormat(build, record);
    await auditRestore(path.join(build, 'meta.sqlite'), dir, m);
    await privateModes(build);
    if (apart) await privateModes(coldBuild);
  } catch (err) {
    await rm(build, { recursive: true, force: true });
    if (apart) await rm(coldBuild, { recursive: true, force: true });
    if (err instanceof RestoreError) throw err;
    throw new RestoreError(`restore of ${dir} failed (${describe(err)}); ${target} is as it was`);
  }
  await moveIntoPlace(build, target, tag);
  if (apart) await moveIntoPlace(coldBuild, coldTarget, tag);
  const format = JSON.parse(
    await readFile(path.join(target, STORE_FORMAT_FILE), 'utf8').catch(() => '{}'),
  ) as {
    instance_id?: string;
  };
  return {
    backup_id: m.id,
    kind: m.kind,
    snapshot_at: m.snapshot_at,
    data_dir: target,
    cold_dir: coldTarget,
    cold_dir_given: coldTarget !== path.join(target, 'cold'),
    events: { hot, cold: Number(m.counts.events.cold) },
    users: Number(m.counts.metadata.users),
    files: m.files.length + m.inherited.length,
    store_format: m.store_format,
    instance_id: format.instance_id ?? '',
  };
}

/** The backup's chain, refused unless every folder of it verifies (verify's lines first). */
async function checkedChain(dir: string): Promise<CheckedFolder[]> {
  let checked: Awaited<ReturnType<typeof verifyWithChain>>;
  try {
    checked = await verifyWithChain(dir);
  } catch (err) {
    if (err instanceof NotABackupFolder) throw new RestoreError(`backup ${dir} is not a folder`);
    throw err;
  }
  const { report, chain } = checked;
  if (!report.ok)
    throw new RestoreError(
      [
        ...report.problems.map((p) => `${p.path}: ${p.problem}: ${p.detail}`),
        `backup ${dir} does not verify (${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}): nothing restored`,
      ].join('\n'),
    );
  return chain;
}

/** A target that exists must be an empty folder, or any folder with `force`. */
async function mustBeFree(folder: string, force: boolean, what: string): Promise<void> {
  const info = await stat(folder).catch(() => null);
  if (!info) return;
  if (!info.isDirectory()) throw new RestoreError(`${what} ${folder} exists and is not a folder`);
  if (!force && (await readdir(folder)).length > 0)
    throw new RestoreError(
      `${what} ${folder} is not empty: restore into a new folder, or give --force to replace it`,
    );
}

/** A running server holds its data dir's DuckDB file: refused, even with `force`. */
async function mustNotBeServed(target: string): Promise<void> {
  const file = path.join(target, 'events.duckdb');
  if (!(await stat(file).catch(() => null))) return;
  try {
    const instance = await duckdb().DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
    instance.closeSync();
  } catch (err) {
    if (isDataDirLocked(err))
      throw new RestoreError(
        `a running Logscope server holds ${target}: stop it first (nothing was restored)`,
      );
  }
}

/** Layout `logical`: the stores made anew from the chain's files. Answers the hot events. */
async function buildLogical(chain: CheckedFolder[], build: string, coldBuild: string): Promise<number> {
  const last = chain[chain.length - 1] as CheckedFolder & { manifest: Manifest };
  const files = (c: CheckedFolder, kind: ManifestFile['kind']) =>
    (c.manifest as Manifest).files.filter((f) => f.kind === kind);
  const at = (c: CheckedFolder, f: { path: string }) => path.join(c.dir, ...f.path.split('/'));
  const metadata = files(last, 'metadata')[0];
  const schema = files(last, 'events_store').find((f) => f.path === 'store/schema.sql');
  if (!metadata || !schema)
    throw new RestoreError(
      `backup ${last.dir} lacks metadata/meta.sqlite or store/schema.sql: it cannot be restored`,
    );
  await copyFile(at(last, metadata), path.join(build, 'meta.sqlite'));

  const instance = await duckdb().DuckDBInstance.create(path.join(build, 'events.duckdb'));
  const db = await instance.connect();
  let hot: number;
  try {
    await db.run(await readFile(at(last, schema), 'utf8'));
    const list = (paths: string[]) => `[${paths.map(sqlString).join(', ')}]`;
    for (const [i, c] of chain.entries()) {
      const parts = files(c, 'hot').map((f) => at(c, f));
      if (i > 0 && parts.length)
        await db.run(`DELETE FROM events WHERE ev_id IN (SELECT ev_id FROM read_parquet(${list(parts)}))`);
      if (parts.length) await db.run(`INSERT INTO events BY NAME SELECT * FROM read_parquet(${list(parts)})`);
      const ids = files(c, 'hot_ids')[0];
      if (i > 0 && ids)
        await db.run(
          `DELETE FROM events WHERE ev_id NOT IN (SELECT ev_id FROM read_parquet(${sqlString(at(c, ids))}))`,
        );
    }
    for (const f of files(last, 'events_store').filter((x) => x.path.endsWith('.parquet'))) {
      const table = path.posix.basename(f.path, '.parquet');
      await db.run(
        `INSERT INTO "${table.replace(/"/g, '""')}" BY NAME SELECT * FROM read_parquet(${sqlString(at(last, f))})`,
      );
    }
    await db.run('CHECKPOINT');
    hot = Number((await db.runAndReadAll('SELECT count(*) AS n FROM events')).getRowObjectsJS()[0]?.n ?? 0);
  } finally {
    db.closeSync();
    instance.closeSync();
  }

  // Cold files: each backup's own, at their paths under the cold dir.
  for (const c of chain)
    for (const f of files(c, 'cold')) await copyInto(at(c, f), coldBuild, f.path.slice('cold/'.length));
  for (const f of files(last, 'report')) await copyInto(at(last, f), build, f.path);
  for (const f of files(last, 'admin_token')) await copyInto(at(last, f), build, 'admin-token');
  return hot;
}

/** Layout `files` (a pre-upgrade backup): the stores' own files put back. */
async function buildFiles(dir: string, m: Manifest, build: string, coldBuild: string): Promise<number> {
  for (const f of m.files) {
    const from = path.join(dir, ...f.path.split('/'));
    if (f.kind === 'metadata') await copyInto(from, build, 'meta.sqlite');
    else if (f.kind === 'events_store') await copyInto(from, build, path.posix.basename(f.path));
    else if (f.kind === 'cold') await copyInto(from, coldBuild, f.path.slice('cold/'.length));
    else if (f.kind === 'admin_token') await copyInto(from, build, 'admin-token');
    else if (f.kind === 'report') await copyInto(from, build, f.path);
  }
  return Number(m.counts.events.hot);
}

async function copyInto(from: string, root: string, rel: string): Promise<void> {
  const to = path.join(root, ...rel.split('/'));
  await mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
  await copyFile(from, to);
}

/** The audit record of the restore, in the restored metadata store. */
function auditRestore(file: string, dir: string, m: Manifest): Promise<void> {
  return recordLocally(
    file,
    {
      action: 'backup.restore',
      target: { kind: 'backup', id: m.id },
      detail: { backup_id: m.id, path: dir, kind: m.kind, snapshot_at: m.snapshot_at, release: m.release },
    },
    true,
  );
}

/** Folders 0700, files 0600: the data dir holds token hashes and channel secrets. */
async function privateModes(folder: string): Promise<void> {
  await chmod(folder, 0o700);
  for (const e of await readdir(folder, { withFileTypes: true })) {
    const p = path.join(folder, e.name);
    if (e.isDirectory()) await privateModes(p);
    else await chmod(p, 0o600);
  }
}

/** The built folder renamed to the target; a target there is moved aside, then removed. */
async function moveIntoPlace(build: string, target: string, tag: string): Promise<void> {
  const aside = `${target}.replaced-${tag}`;
  const there = await stat(target).catch(() => null);
  if (there) await rename(target, aside);
  try {
    await rename(build, target);
  } catch (err) {
    if (there) await rename(aside, target);
    throw new RestoreError(
      `cannot move the restored data into ${target} (${describe(err)}); it is as it was`,
    );
  }
  if (there) await rm(aside, { recursive: true, force: true });
}

/** An error in a word or two a user can act on, never an engine's text. */
function describe(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC') return 'no space left on the disk';
  if (code === 'EACCES' || code === 'EPERM') return 'no permission to write there';
  if (typeof code === 'string') return code;
  return "the backup's files could not be loaded into a new store";
}
