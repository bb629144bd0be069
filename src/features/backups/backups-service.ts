/**
 * Online backups (docs/api/backups.md): the refusals in their order, the snapshot instant
 * taken before the `202`, one job at a time written in the background, cancel, and what a
 * failed job leaves (nothing: its folder is removed). Administrators only.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Identity } from '../../core/identity.js';
import { newUlid } from '../../core/ids.js';
import type { Page, PageRequest } from '../../core/list.js';
import type { Log } from '../../core/log.js';
import { counter, gauge, type MetricDecl, type MetricsSource } from '../../core/metrics.js';
import {
  AppError,
  conflictWith,
  createError,
  fieldError,
  isNoSpaceError,
  notFound,
  permissionDenied,
  storageFull,
  unavailable,
} from '../../errors/errors.js';
import type { EventStore } from '../../event-store/event-store.js';
import type { AuditTrail } from '../audit/index.js';
import { checkPathShape, checkTarget, resolveExisting } from './backup-target.js';
import {
  type BackupProgress,
  BackupStopped,
  METADATA_FILE,
  METADATA_READS,
  WITHOUT_ROWS,
  writeBackup,
} from './backup-writer.js';
import type { BackupsRepository } from './backups-repository.js';
import type { BackupRow, BackupStatus } from './backups-table.js';
import { type BackupCounts, INCOMPLETE_MARK, type Manifest, readManifest } from './manifest.js';
import { MetadataSnapshot } from './metadata-snapshot.js';
import { readStoreFormat } from './store-format.js';

/** The longest the event store's write turn is held while the metadata's snapshot is pinned. */
const HOLD_MS = 5_000;
/** How often a running job's progress is written to its row (it is read live meanwhile). */
const SAVE_PROGRESS_MS = 1_000;

export interface BackupView {
  id: string;
  status: BackupStatus;
  kind: BackupRow['kind'];
  path: string;
  since: string | null;
  requested_by: { user_id: number | null; username: string | null };
  started_at: string;
  snapshot_at: string | null;
  finished_at: string | null;
  progress: BackupProgress;
  bytes: number | null;
  counts: BackupCounts | null;
  error: { code: string; detail: string } | null;
}

export interface BackupsOptions {
  dataDir: string;
  coldDir: string;
  backupRoot: string;
  /** PostgreSQL or ClickHouse: what stores are configured instead of the embedded ones (null: embedded). */
  foreignStore: string | null;
  log: Log;
}

/** An incremental's base, checked. */
type Base = { dir: string; manifest: Manifest };

/** What a job's writing is given once its instant is taken. */
interface JobWrite {
  dir: string;
  existed: boolean;
  startedAt: string;
  snapshot: NonNullable<Awaited<ReturnType<EventStore['openBackup']>>>;
  metadata: MetadataSnapshot;
  rate: number;
  base: Base | null;
}

interface Running {
  id: string;
  stop: BackupStopped | null;
  progress: BackupProgress;
  done: Promise<void>;
}

/** Why a backup could not begin, as the caller's error where it is theirs (a full disk, no permission). */
function beginError(err: unknown, dir: string): Error {
  if (err instanceof AppError) return err;
  if (isNoSpaceError(err)) return storageFull(`The disk holding ${dir} is full: the backup could not begin.`);
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS')
    return createError(400, 'path_not_writable', `The server may not write in ${dir} (${code}).`, {
      path: ['not writable by the server'],
    });
  return new Error(`The backup could not begin: ${(err as Error).message}`);
}

const NO_PROGRESS: BackupProgress = {
  files_done: 0,
  files_total: 0,
  bytes_done: 0,
  bytes_total: 0,
  fraction: 0,
};

export class BackupsService implements MetricsSource {
  private running: Running | null = null;
  private readonly figures = {
    ended: { DONE: 0, ERROR: 0, CANCELLED: 0 } as Record<string, number>,
    bytes: 0,
    lastSuccess: 0,
  };

  constructor(
    private readonly repo: BackupsRepository,
    private readonly events: EventStore,
    private readonly audit: AuditTrail,
    private readonly opts: BackupsOptions,
  ) {}

  /** `POST /api/admin/backups`: refused in the contract's order, else the job, its instant taken. */
  async start(who: Identity, body: Record<string, unknown>): Promise<BackupView> {
    this.admin(who);
    const { dataDir, coldDir, backupRoot } = this.opts;
    const dir = await checkTarget(body.path, { dataDir, coldDir, backupRoot });
    const base = body.since !== undefined && body.since !== null ? await this.checkSince(body.since) : null;
    const rate = body.max_bytes_per_second ?? 0;
    if (typeof rate !== 'number' || !Number.isSafeInteger(rate) || rate < 0)
      throw fieldError('max_bytes_per_second', 'must be an integer of at least 0 (0: unthrottled)');
    if (this.running)
      throw conflictWith(
        'backup_running',
        `Backup ${this.running.id} is running; one runs at a time.`,
        this.running.id,
      );
    if (this.opts.foreignStore)
      throw createError(
        400,
        'backup_needs_embedded_stores',
        `Online backups cover the embedded stores; this server keeps ${this.opts.foreignStore}: back it up with the engine's own tools, as docs/operations/backup.md shows.`,
      );
    return this.begin(who, dir, rate, base);
  }

  private async begin(who: Identity, dir: string, rate: number, base: Base | null): Promise<BackupView> {
    const id = newUlid();
    const existed = existsSync(dir);
    const startedAt = new Date().toISOString();
    // Taken before the first await: a second request meanwhile is refused backup_running.
    const running: Running = { id, stop: null, progress: { ...NO_PROGRESS }, done: Promise.resolve() };
    this.running = running;
    try {
      await this.prepare(who, id, dir, startedAt, base);
      // The metadata's worker ready first, so the event store's write turn waits only for
      // its pin (ADR 0036).
      const metadata = await MetadataSnapshot.start({
        source: path.join(this.opts.dataDir, 'meta.sqlite'),
        target: path.join(dir, ...METADATA_FILE.split('/')),
        withoutRows: WITHOUT_ROWS,
        reads: METADATA_READS,
      });
      let snapshot: Awaited<ReturnType<EventStore['openBackup']>>;
      try {
        // The instant: the event store's snapshot pinned in its write turn, and the
        // metadata's before that turn is let go.
        snapshot = await this.events.openBackup({ id, holdMs: HOLD_MS });
        if (!snapshot) throw new Error('the event store keeps no files of its own here');
        let held = false;
        try {
          await metadata.pin();
        } finally {
          held = await this.events.releaseBackup(id);
        }
        if (!held)
          throw unavailable(
            `The metadata store's snapshot took longer than ${HOLD_MS / 1000} s to take: no instant of both stores was taken. Try again.`,
            5,
          );
      } catch (err) {
        await metadata.stop().catch(() => undefined);
        throw err;
      }
      await this.repo.update(id, { snapshot_at: new Date(snapshot.snapshotAt).toISOString() });
      running.done = this.write(running, { dir, existed, startedAt, snapshot, metadata, rate, base });
    } catch (err) {
      await this.events.closeBackup(id).catch(() => undefined);
      await this.ended(running, dir, existed, err);
      throw beginError(err, dir);
    }
    return this.get(who, id);
  }

  /** The folder (0700), marked incomplete, and the job's row. */
  private async prepare(
    who: Identity,
    id: string,
    dir: string,
    startedAt: string,
    base: Base | null,
  ): Promise<void> {
    await mkdir(dir, { recursive: false, mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    await writeFile(path.join(dir, INCOMPLETE_MARK), 'A backup is being written here, or was cut short.\n', {
      mode: 0o600,
    });
    await mkdir(path.join(dir, 'metadata'), { mode: 0o700 });
    await this.repo.insert({
      id,
      status: 'RUNNING',
      kind: base ? 'incremental' : 'full',
      path: dir,
      since: base?.dir ?? null,
      requested_by_id: who.userId,
      requested_by_name: who.username,
      started_at: startedAt,
      snapshot_at: null,
      finished_at: null,
      progress: JSON.stringify(NO_PROGRESS),
      bytes: null,
      counts: null,
      error: null,
    });
  }

  private async write(running: Running, job: JobWrite): Promise<void> {
    const { dir, existed, startedAt, snapshot, metadata, rate, base } = job;
    let saved = 0;
    try {
      const manifest = await writeBackup({
        id: running.id,
        dir,
        startedAt,
        events: this.events,
        snapshot,
        metadata,
        dataDir: this.opts.dataDir,
        base,
        instanceId: readStoreFormat(this.opts.dataDir)?.instance_id ?? 'unknown',
        maxBytesPerSecond: rate,
        stopping: () => running.stop,
        onProgress: (p) => {
          running.progress = p;
          if (Date.now() - saved < SAVE_PROGRESS_MS) return;
          saved = Date.now();
          void this.repo.update(running.id, { progress: JSON.stringify(p) }).catch(() => undefined);
        },
      });
      running.progress = { ...running.progress, fraction: 1 };
      await this.repo.update(running.id, {
        status: 'DONE',
        finished_at: manifest.finished_at,
        progress: JSON.stringify(running.progress),
        bytes: manifest.bytes,
        counts: JSON.stringify(manifest.counts),
      });
      this.figures.ended.DONE = (this.figures.ended.DONE ?? 0) + 1;
      this.figures.bytes += manifest.bytes;
      this.figures.lastSuccess = Date.now() / 1000;
      this.finishAudit(
        running.id,
        'DONE',
        manifest.bytes,
        manifest.counts.events.hot + manifest.counts.events.cold,
        null,
      );
      this.running = null;
    } catch (err) {
      await metadata.stop().catch(() => undefined);
      await this.ended(running, dir, existed, err);
    } finally {
      await this.events.closeBackup(running.id).catch(() => undefined);
    }
  }

  /** A job that did not finish: its folder removed, its row ERROR or CANCELLED. */
  private async ended(running: Running, dir: string, existed: boolean, err: unknown): Promise<void> {
    // Asked to stop: whatever error the stop surfaced as (an interrupted copy), it is the stop.
    const stopped = err instanceof BackupStopped ? err : running.stop;
    let written = 0;
    try {
      written = running.progress.bytes_done;
      if (existed)
        for (const name of await readdir(dir))
          await rm(path.join(dir, name), { recursive: true, force: true });
      else await rm(dir, { recursive: true, force: true });
    } catch {
      // Left with BACKUP_INCOMPLETE in it: never taken for a backup.
    }
    const status: BackupStatus = stopped?.status ?? 'ERROR';
    const error = stopped
      ? { code: stopped.code, detail: stopped.message }
      : isNoSpaceError(err)
        ? {
            code: 'storage_full',
            detail: `The disk holding ${dir} is full; ${written} bytes were written before it filled. The folder was removed.`,
          }
        : { code: 'backup_failed', detail: `The backup failed: ${(err as Error)?.message ?? String(err)}` };
    await this.repo
      .update(running.id, {
        status,
        finished_at: new Date().toISOString(),
        progress: JSON.stringify(running.progress),
        error: JSON.stringify(error),
      })
      .catch(() => undefined);
    this.figures.ended[status] = (this.figures.ended[status] ?? 0) + 1;
    this.finishAudit(running.id, status, null, null, error);
    if (!stopped) this.opts.log.warn({ backup: running.id, err }, 'a backup failed');
    if (this.running === running) this.running = null;
  }

  private finishAudit(
    id: string,
    status: BackupStatus,
    bytes: number | null,
    events: number | null,
    error: { code: string; detail: string } | null,
  ): void {
    this.audit.record({
      at: new Date(),
      actor: { user_id: null, username: null, token_key_id: null, address: 'local' },
      action: 'backup.finish',
      target: { kind: 'backup', id },
      detail: { status, bytes, events, error },
      outcome: status === 'DONE' ? 'ok' : 'error',
    });
  }

  /** `since`: a complete backup of this data dir, the base of an incremental. */
  private async checkSince(value: unknown): Promise<Base> {
    const invalid = (why: string) => createError(400, 'since_invalid', `since: ${why}`, { since: [why] });
    let dir: string;
    try {
      dir = resolveExisting(checkPathShape(value, 'since'));
    } catch (err) {
      throw invalid(err instanceof Error ? err.message : String(err));
    }
    if (existsSync(path.join(dir, INCOMPLETE_MARK))) throw invalid(`${value} is an incomplete backup`);
    const read = await readManifest(dir);
    if ('problem' in read) throw invalid(`${value}: ${read.problem}`);
    const own = readStoreFormat(this.opts.dataDir)?.instance_id;
    if (read.manifest.instance_id !== own) throw invalid(`${value} is a backup of another data dir`);
    if (read.manifest.layout !== 'logical')
      throw invalid(`${value} is a ${read.manifest.kind} backup of the stores' files`);
    return { dir, manifest: read.manifest };
  }

  async get(who: Identity, id: string): Promise<BackupView> {
    this.admin(who);
    const row = await this.repo.byId(id);
    if (!row) throw notFound(`No backup job ${id}.`);
    return this.view(row);
  }

  async list(who: Identity, page: PageRequest): Promise<Page<BackupView>> {
    this.admin(who);
    const { count, rows } = await this.repo.list(page);
    return { count, rows: rows.map((r) => this.view(r)) };
  }

  /** `DELETE /api/admin/backups/{id}`: a running job stops CANCELLED (its folder removed). */
  async cancel(who: Identity, id: string): Promise<BackupView> {
    this.admin(who);
    const row = await this.repo.byId(id);
    if (!row) throw notFound(`No backup job ${id}.`);
    const running = this.running;
    if (row.status !== 'RUNNING' || running?.id !== id)
      throw createError(
        409,
        'backup_finished',
        `Backup ${id} has ended (${row.status}); a finished backup is the operator's to keep or delete.`,
      );
    running.stop ??= new BackupStopped('CANCELLED', 'cancelled', 'Cancelled by request.');
    // A copy under way stops now, not at its end (a day of events can take a while).
    await this.events.interruptBackup(id).catch(() => undefined);
    return this.view(row);
  }

  /** At start: a job RUNNING when the server stopped is ERROR (`interrupted`), its folder removed. */
  async recover(): Promise<void> {
    for (const row of await this.repo.interrupted(new Date().toISOString())) {
      const mark = path.join(row.path, INCOMPLETE_MARK);
      if (!existsSync(mark)) continue;
      try {
        for (const name of readdirSync(row.path))
          rmSync(path.join(row.path, name), { recursive: true, force: true });
      } catch {
        // Left as it is, marked incomplete.
      }
    }
  }

  /** At stop: the running job ends ERROR (`interrupted`), its folder removed. */
  async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    running.stop ??= new BackupStopped('ERROR', 'interrupted', 'The server stopped while the backup ran.');
    await this.events.interruptBackup(running.id).catch(() => undefined);
    await running.done;
  }

  private view(row: BackupRow): BackupView {
    const live = this.running?.id === row.id ? this.running.progress : null;
    return {
      id: row.id,
      status: row.status,
      kind: row.kind,
      path: row.path,
      since: row.since,
      requested_by: { user_id: row.requested_by_id, username: row.requested_by_name },
      started_at: row.started_at,
      snapshot_at: row.snapshot_at,
      finished_at: row.finished_at,
      progress: live ?? (JSON.parse(row.progress) as BackupProgress),
      bytes: row.bytes,
      counts: row.counts ? (JSON.parse(row.counts) as BackupCounts) : null,
      error: row.error ? (JSON.parse(row.error) as { code: string; detail: string }) : null,
    };
  }

  private admin(who: Identity): void {
    if (!who.isAdmin) throw permissionDenied('Only administrators take backups.');
  }

  metrics(): MetricDecl[] {
    return [
      gauge('logscope_backup_running', 'Whether a backup is being written (0 or 1).', () =>
        this.running ? 1 : 0,
      ),
      counter(
        'logscope_backups_total',
        'Backups ended, by how they ended.',
        () => ({ ...this.figures.ended }),
        'status',
      ),
      counter('logscope_backup_bytes_total', 'Bytes of the backups that finished.', () => this.figures.bytes),
      gauge(
        'logscope_backup_last_success_timestamp_seconds',
        'When the last backup finished (Unix seconds; 0: none since the server started).',
        () => this.figures.lastSuccess,
      ),
    ];
  }
}
