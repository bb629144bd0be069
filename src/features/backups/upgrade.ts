/**
 * Upgrading a data dir's stores to this release's store format (docs/operations/upgrade.md),
 * at `serve` and `migrate`, before anything opens them for writing: a newer format refuses
 * to start; an older one (0: written before store formats) gets a backup of the stores'
 * own files first (`pre-upgrade`, layout `files`), then its migrations, then its record. A
 * failure, or a crash (found at the next start by `upgrade-in-progress.json`), puts the
 * stores back from that backup, so the earlier release starts on them as before.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, linkSync, readdirSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rm, stat, statfs, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Config } from '../../config/config.js';
import { StartupError } from '../../errors/startup.js';
import type { MigrationOf } from '../../metadata/migrator.js';
import { openSqliteDatabase } from '../../metadata/sqlite-driver.js';
import { COMMIT, STORE_FORMAT, VERSION } from '../../version.js';
import { recordLocally } from './local-audit.js';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  type BackupFileKind,
  hashFile,
  INCOMPLETE_MARK,
  MANIFEST,
  type Manifest,
  type ManifestFile,
  METADATA_TABLES,
  type MetadataCounts,
  writeFileAtomic,
} from './manifest.js';
import {
  readStoreFormat,
  STORE_FORMAT_FILE,
  type StoreFormatRecord,
  writeStoreFormat,
} from './store-format.js';

export const UPGRADE_MARKER = 'upgrade-in-progress.json';

export interface UpgradeOptions {
  /** Every metadata migration (`migrationsOf(COMPONENTS)`). */
  migrations: Readonly<Record<string, MigrationOf>>;
  /** Opens the event store and closes it again (its own upgrades run as it opens). */
  openEvents: () => Promise<{ close(): Promise<void> }>;
  /** False: no automatic backup (`migrate --no-backup`), whatever `upgradeBackup` says. */
  backup: boolean;
  /** One line of the log per step. */
  say: (line: string) => void;
  /** `LOGSCOPE_UPGRADE_FAIL_AFTER` (never for production): fail after this many steps. */
  failAfter?: number;
}

export interface UpgradeDone {
  from: number;
  to: number;
  backup: string | null;
  migrations: string[];
}

/** The stores' own files in a data dir, and their place in a `files` backup. */
const STORE_FILES: Array<[name: string, rel: string, kind: BackupFileKind]> = [
  ['meta.sqlite', 'metadata/meta.sqlite', 'metadata'],
  ['events.duckdb', 'events/events.duckdb', 'events_store'],
  ['events.duckdb.wal', 'events/events.duckdb.wal', 'events_store'],
  [STORE_FORMAT_FILE, STORE_FORMAT_FILE, 'store_format'],
  ['admin-token', 'admin-token', 'admin_token'],
];

/**
 * Brings an embedded data dir to this release's store format, or refuses to start (a
 * StartupError with one line). Null when nothing was to be done.
 */
export async function upgradeDataDir(config: Config, o: UpgradeOptions): Promise<UpgradeDone | null> {
  if (config.databaseUrl || config.eventStoreUrl) return null;
  const { dataDir } = config;
  const marker = path.join(dataDir, UPGRADE_MARKER);
  if (existsSync(marker)) {
    const cut = JSON.parse(readFileSync(marker, 'utf8')) as { backup: string | null; from: number };
    if (cut.backup) {
      o.say(`an upgrade was cut short: putting the stores back from ${cut.backup}, then trying again`);
      await putBack(cut.backup, config);
    }
    await rm(marker, { force: true });
  }
  if (!existsSync(path.join(dataDir, 'meta.sqlite')) && !existsSync(path.join(dataDir, 'events.duckdb')))
    return null;
  const record = readStoreFormat(dataDir);
  const from = record?.store_format ?? 0;
  if (from === STORE_FORMAT) return null;
  if (from > STORE_FORMAT)
    throw new StartupError(
      `Cannot start: the data dir ${dataDir} is store format ${from} (release ${record?.release ?? 'unknown'}); this release (${VERSION}) reads up to store format ${STORE_FORMAT}: restore the pre-upgrade backup, or run ${record?.release ?? 'that release'} or later.`,
    );
  o.say(`the data dir is store format ${from}; upgrading it to ${STORE_FORMAT}`);
  const instanceId = record?.instance_id ?? randomUUID();
  let backup: string | null = null;
  if (o.backup && config.upgradeBackup === 'on') {
    backup = await preUpgradeBackup(config, from, record, instanceId);
    o.say(`pre-upgrade backup written to ${backup}`);
  } else o.say('warning: upgrading without a backup (upgradeBackup off, or migrate --no-backup)');
  await writeFileAtomic(
    marker,
    `${JSON.stringify({ from, to: STORE_FORMAT, backup, started_at: new Date().toISOString() })}\n`,
  );
  const steps: string[] = [];
  const step = (name: string) => {
    steps.push(name);
    o.say(`upgrade step ${steps.length}: ${name}`);
    if (o.failAfter !== undefined && steps.length >= o.failAfter)
      throw new Error(
        `LOGSCOPE_UPGRADE_FAIL_AFTER=${o.failAfter}: failing after step ${steps.length} (${name}), as rehearsed`,
      );
  };
  try {
    await migrateStores(config, o, step);
  } catch (err) {
    const at = steps.length ? `after step ${steps.length} (${steps[steps.length - 1]})` : 'at its first step';
    if (backup) {
      await putBack(backup, config);
      await rm(marker, { force: true });
      throw new StartupError(
        `Cannot start: the upgrade from store format ${from} to ${STORE_FORMAT} failed ${at}: ${(err as Error).message}. The stores were put back from ${backup}; the earlier release starts on them.`,
      );
    }
    await rm(marker, { force: true });
    throw new StartupError(
      `Cannot start: the upgrade from store format ${from} to ${STORE_FORMAT} failed ${at}: ${(err as Error).message}. No backup was taken (upgradeBackup off): restore your own copy.`,
    );
  }
  const now = new Date().toISOString();
  const next: StoreFormatRecord = {
    store_format: STORE_FORMAT,
    release: VERSION,
    commit: COMMIT,
    instance_id: instanceId,
    created_at: record?.created_at ?? now,
    migrated_at: now,
    upgrade_backup: backup,
    history: [...(record?.history ?? []), { from, to: STORE_FORMAT, release: VERSION, at: now, backup }],
  };
  await writeStoreFormat(dataDir, next);
  await recordLocally(path.join(dataDir, 'meta.sqlite'), {
    action: 'store.upgrade',
    target: null,
    detail: { from, to: STORE_FORMAT, release: VERSION, backup, migrations: steps },
  });
  await rm(marker, { force: true });
  o.say(`upgraded to store format ${STORE_FORMAT} (${steps.length} steps)`);
  return { from, to: STORE_FORMAT, backup, migrations: steps };
}

/** Every pending metadata migration, one step each; then the event store's own upgrades. */
async function migrateStores(config: Config, o: UpgradeOptions, step: (name: string) => void): Promise<void> {
  const { openMetadataDb } = await import('../../metadata/database.js');
  const counted = Object.fromEntries(
    Object.entries(o.migrations).map(([name, make]): [string, MigrationOf] => [
      name,
      (dialect) => {
        const m = make(dialect);
        return {
          ...m,
          async up(db) {
            await m.up(db);
            step(`metadata migration ${name}`);
          },
        };
      },
    ]),
  );
  const meta = await openMetadataDb({ databaseUrl: '', dataDir: config.dataDir, migrations: counted });
  await meta.close();
  if (existsSync(path.join(config.dataDir, 'events.duckdb'))) {
    const events = await o.openEvents();
    await events.close();
    step('event store');
  }
}

/**
 * The stores' own files copied while no process has them open, with a manifest
 * (`kind: "pre-upgrade"`, `layout: "files"`): `backup verify` checks it and `restore` puts
 * the data dir back with it. Cold files are hard-linked when on the same filesystem (none
 * is ever changed in place), else copied. Refuses to start without the room for it.
 */
async function preUpgradeBackup(
  config: Config,
  from: number,
  record: StoreFormatRecord | null,
  instanceId: string,
): Promise<string> {
  const { dataDir, coldDir, upgradeBackupDir } = config;
  const started = new Date();
  const stamp = started
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const dir = path.join(upgradeBackupDir, `pre-upgrade-${from}-to-${STORE_FORMAT}-${stamp}`);
  // The stores brought to rest first: their logs written into their files, as a clean stop leaves them.
  const metadata = await metadataCounts(path.join(dataDir, 'meta.sqlite'));
  const events = await eventCounts(path.join(dataDir, 'events.duckdb'));
  const plain = STORE_FILES.map(([name, rel, kind]) => ({
    from: path.join(dataDir, name),
    rel,
    kind,
  })).filter((f) => existsSync(f.from));
  for (const name of await readdir(path.join(dataDir, 'reports')).catch(() => [] as string[]))
    plain.push({ from: path.join(dataDir, 'reports', name), rel: `reports/${name}`, kind: 'report' });
  const cold = coldFilesUnder(coldDir);
  await mkdir(upgradeBackupDir, { recursive: true, mode: 0o700 });
  const sameDevice = (await stat(upgradeBackupDir)).dev === (await stat(coldDir).catch(() => null))?.dev;
  let needed = 0;
  for (const f of plain) needed += (await stat(f.from)).size;
  if (!sameDevice) for (const rel of cold) needed += (await stat(path.join(coldDir, rel))).size;
  const fs = await statfs(upgradeBackupDir);
  const free = fs.bavail * fs.bsize;
  if (needed + (1 << 20) > free)
    throw new StartupError(
      `Cannot start: upgrading the data dir to store format ${STORE_FORMAT} takes a backup of its stores first, which needs ${needed} bytes in ${upgradeBackupDir}, and ${free} are free. Free some space, or set LOGSCOPE_UPGRADE_BACKUP_DIR to a folder with room (or upgradeBackup off to upgrade without one). Nothing was changed.`,
    );
  await mkdir(dir, { mode: 0o700 });
  await writeFile(path.join(dir, INCOMPLETE_MARK), 'A pre-upgrade backup is being written here.\n', {
    mode: 0o600,
  });
  const files: ManifestFile[] = [];
  const listed = async (rel: string, kind: BackupFileKind, rows?: number) => {
    const { sha256, bytes } = await hashFile(path.join(dir, ...rel.split('/')));
    files.push({ path: rel, kind, bytes, sha256, ...(rows === undefined ? {} : { rows }) });
  };
  for (const f of plain) {
    const to = path.join(dir, ...f.rel.split('/'));
    await mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
    await copyFile(f.from, to);
    await listed(f.rel, f.kind);
  }
  for (const rel of cold) {
    const to = path.join(dir, 'cold', ...rel.split('/'));
    await mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
    try {
      linkSync(path.join(coldDir, rel), to);
    } catch {
      await copyFile(path.join(coldDir, rel), to);
    }
    await listed(`cold/${rel}`, 'cold', events.coldRows.get(rel) ?? 0);
  }
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    format_version: BACKUP_FORMAT_VERSION,
    id: `pre-upgrade-${from}-to-${STORE_FORMAT}-${stamp}`,
    kind: 'pre-upgrade',
    layout: 'files',
    instance_id: instanceId,
    release: record?.release ?? 'unknown',
    commit: record?.commit ?? 'unknown',
    store_format: from,
    base: null,
    started_at: started.toISOString(),
    snapshot_at: started.toISOString(),
    finished_at: new Date().toISOString(),
    counts: { events: { hot: events.hot, cold: events.cold }, streams: [], metadata },
    bytes: files.reduce((n, f) => n + f.bytes, 0),
    files,
    inherited: [],
  };
  await writeFileAtomic(path.join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  await rm(path.join(dir, INCOMPLETE_MARK), { force: true });
  return dir;
}

/** The metadata objects a manifest counts (a table an older store lacks counts 0). */
async function metadataCounts(file: string): Promise<MetadataCounts> {
  const counts = Object.fromEntries(Object.keys(METADATA_TABLES).map((k) => [k, 0])) as MetadataCounts;
  if (!existsSync(file)) return counts;
  const sqlite = await openSqliteDatabase(file);
  try {
    const tables = new Set(
      (
        sqlite.database.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all([]) as Array<{
          name: string;
        }>
      ).map((r) => r.name),
    );
    for (const [name, table] of Object.entries(METADATA_TABLES))
      if (tables.has(table))
        counts[name as keyof MetadataCounts] = Number(
          (sqlite.database.prepare(`SELECT count(*) AS n FROM "${table}"`).all([])[0] as { n: number }).n,
        );
    // Its write-ahead log into the file, and one file again: what is copied is whole.
    sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    sqlite.exec('PRAGMA journal_mode = DELETE');
  } finally {
    sqlite.database.close();
  }
  return counts;
}

/** The events by tier, and each cold file's rows by its path, from the store at rest. */
async function eventCounts(
  file: string,
): Promise<{ hot: number; cold: number; coldRows: Map<string, number> }> {
  const coldRows = new Map<string, number>();
  if (!existsSync(file)) return { hot: 0, cold: 0, coldRows };
  const db = await DuckDBInstance.create(file);
  const conn = await db.connect();
  try {
    const tables = new Set(
      (await conn.runAndReadAll('SELECT table_name FROM duckdb_tables()'))
        .getRowObjectsJS()
        .map((r) => String(r.table_name)),
    );
    const hot = tables.has('events')
      ? Number((await conn.runAndReadAll('SELECT count(*) AS n FROM events')).getRowObjectsJS()[0]?.n ?? 0)
      : 0;
    if (tables.has('cold_files'))
      for (const r of (await conn.runAndReadAll('SELECT path, rows FROM cold_files')).getRowObjectsJS())
        coldRows.set(String(r.path), Number(r.rows));
    await conn.run('CHECKPOINT');
    return { hot, cold: [...coldRows.values()].reduce((a, b) => a + b, 0), coldRows };
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** The cold tier's Parquet files, relative to its folder (the backups' holds left out). */
function coldFilesUnder(coldDir: string, rel = ''): string[] {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(path.join(coldDir, rel), { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.name.startsWith('.')) continue;
    const child = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...coldFilesUnder(coldDir, child));
    else if (e.name.endsWith('.parquet')) out.push(child);
  }
  return out;
}

/** The stores put back as the pre-upgrade backup holds them (what it lacks, removed). */
async function putBack(backup: string, config: Config): Promise<void> {
  const manifest = JSON.parse(readFileSync(path.join(backup, MANIFEST), 'utf8')) as Manifest;
  const held = new Set(manifest.files.map((f) => f.path));
  for (const [name, rel] of STORE_FILES) {
    const to = path.join(config.dataDir, name);
    if (held.has(rel)) {
      await copyFile(path.join(backup, ...rel.split('/')), `${to}.put-back`);
      await rename(`${to}.put-back`, to);
    } else await rm(to, { force: true });
  }
  // What SQLite kept beside its file belongs to the store being replaced.
  for (const extra of ['meta.sqlite-wal', 'meta.sqlite-shm', 'meta.sqlite-journal'])
    await rm(path.join(config.dataDir, extra), { force: true });
}
