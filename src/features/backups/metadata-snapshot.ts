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

type SnapshotMessage = { ready: true } | { pinned: true } | { done: SnapshotCopied } | { error: string };

/**
 * A copy of the SQLite metadata store as of one instant, made in a worker thread
 * (metadata-snapshot-worker.ts): `start` resolves once the worker has the stores open,
 * `pin` once the snapshot is fixed (a message and one statement: what the event store's
 * write turn waits for), `copied` once every table is in the new file, with each table's rows.
 */
export class MetadataSnapshot {
  private readonly pinned: Promise<void>;
  readonly copied: Promise<SnapshotCopied>;

  private constructor(
    private readonly worker: Worker,
    ready: (err?: Error) => void,
  ) {
    let pinned!: (err?: Error) => void;
    this.pinned = new Promise<void>((resolve, reject) => {
      pinned = (err) => (err ? reject(err) : resolve());
    });
    this.pinned.catch(() => undefined);
    this.copied = new Promise<SnapshotCopied>((resolve, reject) => {
      const fail = (err: Error) => {
        ready(err);
        pinned(err);
        reject(err);
      };
      worker.on('message', (m: SnapshotMessage) => {
        if ('ready' in m) ready();
        else if ('pinned' in m) pinned();
        else if ('done' in m) resolve(m.done);
        else fail(new Error(`copying the metadata store failed: ${m.error}`));
      });
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`the metadata copy's worker stopped (exit ${code})`)));
    });
    // Rejected before it is awaited (a failure before the pin): not an unhandled rejection.
    this.copied.catch(() => undefined);
  }

  /** The worker started, the store open and the backup's file attached. */
  static start(data: SnapshotWorkerData): Promise<MetadataSnapshot> {
    return new Promise((resolve, reject) => {
      const snapshot: MetadataSnapshot = new MetadataSnapshot(
        startModuleWorker(import.meta.url, './metadata-snapshot-worker', data),
        (err) => (err ? reject(err) : resolve(snapshot)),
      );
    });
  }

  /** Fixes the snapshot now. */
  pin(): Promise<void> {
    this.worker.postMessage({ pin: true });
    return this.pinned;
  }

  /** Stops the copy (a cancelled or failed job). */
  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}
