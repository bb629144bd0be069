import type { FilterNode } from '../filter/ast.js';

/**
 * What an event store does for an online backup (ADR 0036): a snapshot pinned in its write
 * turn, then written step by step from that snapshot. The embedded store only: a store
 * that keeps no files of its own here (ClickHouse) answers null.
 */
export interface BackupStore {
  /**
   * Takes the store's write turn, pins a snapshot and holds the cold files it records;
   * resolves with it while still holding the turn, until `releaseBackup` (or `holdMs`).
   */
  openBackup(req: BackupOpen): Promise<BackupSnapshot | null>;
  /**
   * Lets the store's writers go on; the snapshot stays pinned until `closeBackup`. False
   * when `holdMs` had let them go already (what the caller pinned meanwhile is not of the instant).
   */
  releaseBackup(id: string): Promise<boolean>;
  backupStep(id: string, step: BackupStep): Promise<BackupStepResult>;
  /** Stops the statement a step runs now (a cancel): that step fails; the snapshot stays open. */
  interruptBackup(id: string): Promise<void>;
  /** Ends the snapshot and lets the held cold files go (a job that failed too). */
  closeBackup(id: string): Promise<void>;
}

export interface BackupOpen {
  id: string;
  /** The longest the write turn is held waiting for `releaseBackup`. */
  holdMs: number;
}

export interface HeldColdFile {
  id: number;
  streamId: number;
  /** Relative to the cold directory, `/`-separated. */
  path: string;
  rows: number;
  bytes: number;
  sha256: string;
  /** Where the file is held for the backup (a hard link), absolute. */
  held: string;
}

export interface BackupSnapshot {
  /** When the snapshot was pinned (ms). */
  snapshotAt: number;
  coldDir: string | null;
  coldFiles: HeldColdFile[];
}

export interface BackupPlan {
  /** The hot events by UTC day of `ts` (`YYYY-MM-DD`). */
  days: Array<{ day: string; rows: number }>;
  /** The store's tables but `events`, with their estimated rows. */
  tables: Array<{ name: string; rows: number }>;
  /** Every table's (and index's) CREATE statement, each ending with `;`. */
  schema: string;
}

export type BackupStep =
  /** `since` (ms): only the events stored, or changed in place, at or after it (an incremental). */
  | { kind: 'plan'; since?: number }
  /** The hot events of one UTC day into a Parquet file, sorted by `ts`, `ev_id` (`since`: as in plan). */
  | { kind: 'hot'; day: string; file: string; backupId: string; since?: number }
  /** Every hot event's id, one column `ev_id` (an incremental's `hot/ids.parquet`). */
  | { kind: 'ids'; file: string }
  /** One of the store's other tables into a Parquet file. */
  | { kind: 'table'; table: string; file: string }
  /** The hot events in all, and those each filter matches (streams' rules). */
  | { kind: 'counts'; filters: readonly FilterNode[] };

export type BackupStepResult =
  | { kind: 'plan'; plan: BackupPlan }
  | { kind: 'rows'; rows: number }
  | { kind: 'counts'; total: number; hot: number[] };
