import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../core/module-worker.js';

/** What the worker is given (metadata-snapshot-worker.ts). */
export interface SnapshotWorkerData {
  /** The server's `meta.sqlite`. */
  source: string;
  /** The backup's new SQLite file. */
  target: string;
  /** Tables copied without their rows (query jobs and leases: not in a backup). */
  withoutRows: readonly string[];
  /** Statements run on the copy (tables as `bk.<name>`) before the snapshot ends: their rows. */
  reads: Readonly<Record<string, string>>;
}

/** What a finished copy tells: each table's rows, and the answers to `reads`. */
export interface SnapshotCopied {
  counts: Record<string, number>;
  reads: Record<string, Array<Record<string, unknown>>>;
}

type SnapshotMessage = { pinned: true } | { done: SnapshotCopied } | { error: string };

/**
 * A copy of the SQLite metadata store as of one instant, made in a worker thread
 * (metadata-snapshot-worker.ts): `pin` resolves once the snapshot is fixed, `copied` once
 * every table is in the new file, with each table's rows.
 */
export class MetadataSnapshot {
  private constructor(
    private readonly worker: Worker,
    readonly copied: Promise<SnapshotCopied>,
  ) {}

  static pin(data: SnapshotWorkerData): Promise<MetadataSnapshot> {
    const worker = startModuleWorker(import.meta.url, './metadata-snapshot-worker', data);
    return new Promise((resolvePinned, rejectPinned) => {
      let pinned = false;
      const copied = new Promise<SnapshotCopied>((resolve, reject) => {
        const fail = (err: Error) => {
          if (!pinned) rejectPinned(err);
          reject(err);
        };
        worker.on('message', (m: SnapshotMessage) => {
          if ('pinned' in m) {
            pinned = true;
            resolvePinned(snapshot);
          } else if ('done' in m) resolve(m.done);
          else fail(new Error(`copying the metadata store failed: ${m.error}`));
        });
        worker.on('error', fail);
        worker.on('exit', (code) => fail(new Error(`the metadata copy's worker stopped (exit ${code})`)));
      });
      // Rejected before it is awaited (a failure to pin): not an unhandled rejection.
      copied.catch(() => undefined);
      const snapshot = new MetadataSnapshot(worker, copied);
    });
  }

  /** Stops the copy (a cancelled or failed job). */
  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}
