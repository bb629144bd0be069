/**
 * A backup folder's manifest (docs/api/backups.md, ADR 0036): what it holds, file by file,
 * with sizes and SHA-256 hashes, so that verify and restore need neither the server nor the
 * data dir. Shared by the writer (backup-writer.ts), verify and restore.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, rename } from 'node:fs/promises';
import path from 'node:path';

export const BACKUP_FORMAT = 'logscope-backup';
export const BACKUP_FORMAT_VERSION = 1;
/** Present from a job's first write until its last; never in a finished backup. */
export const INCOMPLETE_MARK = 'BACKUP_INCOMPLETE';
export const MANIFEST = 'manifest.json';

export type BackupKind = 'full' | 'incremental' | 'pre-upgrade';
export type BackupLayout = 'logical' | 'files';
export type BackupFileKind =
  | 'metadata'
  | 'hot'
  | 'hot_ids'
  | 'cold'
  | 'report'
  | 'admin_token'
  | 'events_store'
  | 'store_format';

export interface ManifestFile {
  /** Relative to the folder, `/`-separated. */
  path: string;
  kind: BackupFileKind;
  bytes: number;
  sha256: string;
  /** Parquet files: their rows (from the footer). */
  rows?: number;
}

export interface ManifestStream {
  id: number;
  title: string;
  hot: number;
  cold: number;
  cold_files: number;
}

/** The metadata objects a manifest counts, and the table each is counted in. */
export const METADATA_TABLES = {
  users: 'users',
  teams: 'teams',
  streams: 'streams',
  tokens: 'auth_tokens',
  dashboards: 'dashboards',
  widgets: 'widgets',
  saved_searches: 'saved_searches',
  triggers: 'triggers',
  channels: 'channels',
  schedules: 'schedules',
  reports: 'reports',
  tasks: 'tasks',
  pipelines: 'pipelines',
  patterns: 'patterns',
  audit: 'audit_events',
} as const;
export type MetadataCounts = Record<keyof typeof METADATA_TABLES, number>;

export interface BackupCounts {
  /** The data dir's events at the instant, by tier (an incremental: the whole chain's). */
  events: { hot: number; cold: number };
  streams: ManifestStream[];
  metadata: MetadataCounts;
}

export interface Manifest {
  format: typeof BACKUP_FORMAT;
  format_version: number;
  id: string;
  kind: BackupKind;
  layout: BackupLayout;
  instance_id: string;
  release: string;
  commit: string;
  store_format: number;
  base: { id: string; path: string; snapshot_at: string } | null;
  started_at: string;
  snapshot_at: string;
  finished_at: string;
  counts: BackupCounts;
  /** The sum of `files`' bytes. */
  bytes: number;
  /** Every file of the folder but the manifest, and only those. */
  files: ManifestFile[];
  inherited: Array<{ path: string; sha256: string; bytes: number; from: string }>;
}

/** A file's SHA-256 (hex) and size, read as a stream. */
export async function hashFile(file: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** Writes `data` to `file` through a temporary name, synced, then renamed (atomic). */
export async function writeFileAtomic(file: string, data: string): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  const handle = await open(tmp, 'w', 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
  await syncFolder(path.dirname(file));
}

/** Makes a folder's entries (a rename, a new file) durable. */
export async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export type ManifestRead = { manifest: Manifest } | { problem: string };

/** The manifest of a folder, or why it cannot be read as one. */
export async function readManifest(dir: string): Promise<ManifestRead> {
  let text: string;
  try {
    text = await readFile(path.join(dir, MANIFEST), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { problem: code === 'ENOENT' ? 'no manifest.json' : `cannot read manifest.json (${code})` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'manifest.json is not JSON (cut short or altered)' };
  }
  const m = value as Partial<Manifest> | null;
  if (!m || typeof m !== 'object' || m.format !== BACKUP_FORMAT)
    return { problem: `manifest.json is not a Logscope backup manifest (format is not "${BACKUP_FORMAT}")` };
  if (m.format_version !== BACKUP_FORMAT_VERSION)
    return {
      problem: `manifest.json has format_version ${String(m.format_version)}; this release reads ${BACKUP_FORMAT_VERSION}`,
    };
  if (!Array.isArray(m.files) || !m.counts || typeof m.id !== 'string' || !Array.isArray(m.inherited))
    return { problem: 'manifest.json lacks files, counts, inherited or id' };
  return { manifest: m as Manifest };
}
