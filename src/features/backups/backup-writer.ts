/**
 * Writes a backup's folder from a pinned snapshot of both stores (ADR 0036), file by file:
 * the metadata copy, the hot events by day, the event store's other tables and schema, the
 * held cold files, the reports' files and `admin-token`; then the manifest, last. After each
 * file it reports progress; after each file, and each 1 MiB piece of a file it copies, it
 * keeps to the write rate asked for and stops when cancelled (a Parquet part the store
 * writes is one step, which a cancel interrupts).
 */
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { chmod, mkdir, open, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BackupSnapshot } from '../../event-store/backup-store.js';
import type { EventStore } from '../../event-store/event-store.js';
import { VERSION } from '../../version.js';
import { membership, type StreamRow } from '../streams/index.js';
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
  syncFolder,
  writeFileAtomic,
} from './manifest.js';
import type { MetadataSnapshot } from './metadata-snapshot.js';
import { COMMIT, STORE_FORMAT } from './store-format.js';

export interface BackupProgress {
  files_done: number;
  files_total: number;
  bytes_done: number;
  bytes_total: number;
  fraction: number;
}

/** Why a job stopped before its end: asked to (cancel, a server stopping). */
export class BackupStopped extends Error {
  constructor(
    readonly status: 'CANCELLED' | 'ERROR',
    readonly code: string,
    detail: string,
  ) {
    super(detail);
  }
}

export interface BackupWrite {
  id: string;
  /** The backup's folder (exists, holds BACKUP_INCOMPLETE and the metadata copy under way). */
  dir: string;
  startedAt: string;
  events: EventStore;
  snapshot: BackupSnapshot;
  metadata: MetadataSnapshot;
  dataDir: string;
  instanceId: string;
  /** An incremental's base: its folder and manifest (its own files and what it inherits). */
  base: { dir: string; manifest: Manifest } | null;
  /** 0: unthrottled. */
  maxBytesPerSecond: number;
  /** Set when the job must stop (cancel, the server stopping). */
  stopping: () => BackupStopped | null;
  onProgress: (p: BackupProgress) => void;
}

/** Bytes an event takes in a hot part, for the progress estimate before it is written. */
const HOT_BYTES_PER_EVENT = 60;
const TABLE_BYTES_PER_ROW = 40;
const PIECE = 1 << 20;

/** The folder's metadata copy, relative to it. */
export const METADATA_FILE = 'metadata/meta.sqlite';
/** Tables a backup copies without their rows. */
export const WITHOUT_ROWS = ['query_jobs', 'leases', 'backups'] as const;
/** What the writer reads from the metadata copy (as of the instant). */
export const METADATA_READS = {
  streams: 'SELECT * FROM bk.streams ORDER BY id',
  reports: 'SELECT id FROM bk.reports',
};

export async function writeBackup(w: BackupWrite): Promise<Manifest> {
  const began = Date.now();
  const files: ManifestFile[] = [];
  const progress: BackupProgress = {
    files_done: 0,
    files_total: 1,
    bytes_done: 0,
    bytes_total: 1,
    fraction: 0,
  };
  // Written so far, for the throttle; and what a copy in pieces accounted already.
  let written = 0;
  const throttled = new Set<string>();
  const report = () => {
    const estimate = Math.max(progress.bytes_total, progress.bytes_done + 1);
    const byBytes = progress.bytes_done / estimate;
    progress.fraction = Math.max(progress.fraction, Math.min(0.99, byBytes));
    w.onProgress({ ...progress });
  };
  const checkStop = () => {
    const stop = w.stopping();
    if (stop) throw stop;
  };
  /** Waits until `bytes` more keep the job's average write rate within its cap. */
  const throttle = async (bytes: number) => {
    written += bytes;
    if (!w.maxBytesPerSecond) return;
    const due = began + (written / w.maxBytesPerSecond) * 1000;
    while (Date.now() < due) {
      checkStop();
      await new Promise((r) => setTimeout(r, Math.min(250, due - Date.now())));
    }
  };
  /** A file of the folder, once written: hashed and listed. */
  const listed = async (rel: string, kind: BackupFileKind, estimate: number, rows?: number) => {
    const abs = path.join(w.dir, ...rel.split('/'));
    await chmod(abs, 0o600);
    const handle = await open(abs, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    const { sha256, bytes } = await hashFile(abs);
    files.push({ path: rel, kind, bytes, sha256, ...(rows === undefined ? {} : { rows }) });
    progress.files_done++;
    progress.bytes_done += bytes;
    progress.bytes_total += bytes - estimate;
    report();
    if (!throttled.delete(rel)) await throttle(bytes);
    checkStop();
  };
  /** Copies a file in pieces, throttled and stoppable between pieces. */
  const copy = async (from: string, rel: string) => {
    const to = path.join(w.dir, ...rel.split('/'));
    await mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
    throttled.add(rel);
    await pipeline(
      createReadStream(from, { highWaterMark: PIECE }),
      async function* (source: AsyncIterable<Buffer>) {
        for await (const piece of source) {
          checkStop();
          await throttle(piece.length);
          yield piece;
        }
      },
      createWriteStream(to, { mode: 0o600 }),
    );
  };
  const folder = (name: string) => mkdir(path.join(w.dir, name), { recursive: true, mode: 0o700 });

  // 1. The metadata, as of the instant (copied by its worker meanwhile).
  const meta = await w.metadata.copied;
  checkStop();
  const metadataCounts = Object.fromEntries(
    Object.entries(METADATA_TABLES).map(([name, table]) => [name, meta.counts[table] ?? 0]),
  ) as MetadataCounts;
  const streams = (meta.reads.streams ?? []) as unknown as StreamRow[];
  const reportIds = new Set((meta.reads.reports ?? []).map((r) => Number(r.id)));

  // 2. What the event store holds at the instant, and the sizes to expect.
  // An incremental: the hot events stored (or changed in place) since the base's instant.
  const since = w.base ? Date.parse(w.base.manifest.snapshot_at) : undefined;
  const delta = since === undefined ? {} : { since };
  const planned = await w.events.backupStep(w.id, { kind: 'plan', ...delta });
  if (planned.kind !== 'plan') throw new Error('the event store answered a plan with something else');
  const { plan } = planned;
  const reportFiles = await reportFilesOf(path.join(w.dataDir, 'reports'), reportIds);
  const adminToken = path.join(w.dataDir, 'admin-token');
  const hasToken = existsSync(adminToken);
  // The chain's cold files by hash, with the backup that holds each: not copied again.
  const chain = new Map<string, { path: string; from: string }>();
  if (w.base) {
    const b = w.base.manifest;
    for (const f of b.inherited) chain.set(f.sha256, { path: f.path, from: f.from });
    for (const f of b.files) if (f.kind === 'cold') chain.set(f.sha256, { path: f.path, from: b.id });
  }
  const coldToCopy = w.snapshot.coldFiles.filter((f) => !chain.has(f.sha256));
  const inherited: Manifest['inherited'] = w.snapshot.coldFiles
    .filter((f) => chain.has(f.sha256))
    .map((f) => {
      const held = chain.get(f.sha256) as { path: string; from: string };
      return { path: held.path, sha256: f.sha256, bytes: f.bytes, from: held.from };
    });
  progress.files_total =
    1 +
    plan.days.length +
    (w.base ? 1 : 0) +
    plan.tables.length +
    1 +
    coldToCopy.length +
    reportFiles.length +
    (hasToken ? 1 : 0);
  progress.bytes_total =
    plan.days.reduce((n, d) => n + d.rows * HOT_BYTES_PER_EVENT, 0) +
    plan.tables.reduce((n, t) => n + t.rows * TABLE_BYTES_PER_ROW, 0) +
    coldToCopy.reduce((n, f) => n + f.bytes, 0) +
    reportFiles.reduce((n, f) => n + f.bytes, 0);
  await listed(METADATA_FILE, 'metadata', 0);

  // 3. The hot events, a part per UTC day.
  await folder('hot');
  let part = 0;
  for (const day of plan.days) {
    const rel = `hot/part-${++part}.parquet`;
    const wrote = await w.events.backupStep(w.id, {
      kind: 'hot',
      day: day.day,
      file: path.join(w.dir, 'hot', `part-${part}.parquet`),
      backupId: w.id,
      ...delta,
    });
    await listed(rel, 'hot', day.rows * HOT_BYTES_PER_EVENT, wrote.kind === 'rows' ? wrote.rows : undefined);
  }

  if (w.base) {
    // Every hot event's id at the instant: a restore drops what the chain holds and this lacks.
    const wrote = await w.events.backupStep(w.id, {
      kind: 'ids',
      file: path.join(w.dir, 'hot', 'ids.parquet'),
    });
    await listed('hot/ids.parquet', 'hot_ids', 0, wrote.kind === 'rows' ? wrote.rows : undefined);
  }

  // 4. The event store's other tables, and the schema that makes them again.
  await folder('store');
  for (const table of plan.tables) {
    const rel = `store/${table.name}.parquet`;
    const wrote = await w.events.backupStep(w.id, {
      kind: 'table',
      table: table.name,
      file: path.join(w.dir, 'store', `${table.name}.parquet`),
    });
    await listed(
      rel,
      'events_store',
      table.rows * TABLE_BYTES_PER_ROW,
      wrote.kind === 'rows' ? wrote.rows : undefined,
    );
  }
  await writeFile(path.join(w.dir, 'store', 'schema.sql'), `${plan.schema}\n`, { mode: 0o600 });
  await listed('store/schema.sql', 'events_store', 0);

  // 5. The cold files recorded at the instant, from their held links (an incremental: those
  // its chain lacks).
  for (const f of coldToCopy) {
    const rel = `cold/${f.path}`;
    await copy(f.held, rel);
    await listed(rel, 'cold', f.bytes, f.rows);
  }

  // 6. The reports' files and the first admin's token.
  for (const r of reportFiles) {
    await copy(r.file, `reports/${r.name}`);
    await listed(`reports/${r.name}`, 'report', r.bytes);
  }
  if (hasToken) {
    await copy(adminToken, 'admin-token');
    await listed('admin-token', 'admin_token', 0);
  }

  // 7. The counts at the instant, then the manifest, last.
  const filters = membership(streams);
  const ids = streams.map((s) => s.id).filter((id) => filters.has(id));
  const counted = await w.events.backupStep(w.id, {
    kind: 'counts',
    filters: ids.map((id) => filters.get(id) as NonNullable<ReturnType<typeof filters.get>>),
  });
  const hot = counted.kind === 'counts' ? counted : { total: 0, hot: [] };
  const cold = w.snapshot.coldFiles;
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    format_version: BACKUP_FORMAT_VERSION,
    id: w.id,
    kind: w.base ? 'incremental' : 'full',
    layout: 'logical',
    instance_id: w.instanceId,
    release: VERSION,
    commit: COMMIT,
    store_format: STORE_FORMAT,
    base: w.base
      ? { id: w.base.manifest.id, path: w.base.dir, snapshot_at: w.base.manifest.snapshot_at }
      : null,
    started_at: w.startedAt,
    snapshot_at: new Date(w.snapshot.snapshotAt).toISOString(),
    finished_at: new Date().toISOString(),
    counts: {
      events: { hot: hot.total, cold: cold.reduce((n, f) => n + f.rows, 0) },
      streams: ids.map((id, i) => {
        const own = cold.filter((f) => f.streamId === id);
        return {
          id,
          title: String(streams.find((s) => s.id === id)?.title ?? ''),
          hot: hot.hot[i] ?? 0,
          cold: own.reduce((n, f) => n + f.rows, 0),
          cold_files: own.length,
        };
      }),
      metadata: metadataCounts,
    },
    bytes: files.reduce((n, f) => n + f.bytes, 0),
    files,
    inherited,
  };
  checkStop();
  for (const sub of ['metadata', 'hot', 'store', 'cold', 'reports'])
    if (existsSync(path.join(w.dir, sub))) await syncTree(path.join(w.dir, sub));
  await writeFileAtomic(path.join(w.dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  await rm(path.join(w.dir, INCOMPLETE_MARK), { force: true });
  await syncFolder(w.dir);
  // `fraction` becomes 1 with the job's DONE (the service's), never before.
  return manifest;
}

/** The files of the reports the snapshot records (`<id>.<ext>`), with their sizes. */
async function reportFilesOf(
  dir: string,
  ids: ReadonlySet<number>,
): Promise<Array<{ name: string; file: string; bytes: number }>> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: Array<{ name: string; file: string; bytes: number }> = [];
  for (const name of names.sort()) {
    const m = /^(\d+)\.[a-z0-9]+$/.exec(name);
    if (!m || !ids.has(Number(m[1]))) continue;
    const file = path.join(dir, name);
    try {
      const { size } = await stat(file);
      out.push({ name, file, bytes: size });
    } catch {
      // Deleted since: its record is in the snapshot, its file is not (a report deleted meanwhile).
    }
  }
  return out;
}

/** Makes a folder's files and folders durable. */
async function syncTree(dir: string): Promise<void> {
  for (const e of await readdir(dir, { withFileTypes: true }))
    if (e.isDirectory()) await syncTree(path.join(dir, e.name));
  await syncFolder(dir);
}
