import type { TimeWindow } from '../event-store/query-plan.js';

export type QueryStatus = 'PENDING' | 'IN_PROGRESS' | 'SUCCESS' | 'STOPPED' | 'ERROR';

/** A query's computed state as every node may read it. */
export interface JobState {
  status: QueryStatus;
  progress: number;
  error: string | null;
  baseMs: number;
  window: TimeWindow;
  updatedAt: string;
  /** Stopped by a user: nobody re-evaluates it until it is recalculated. */
  stopped: boolean;
  results: unknown;
  /**
   * The read scope's key the results were computed under (absent in states written
   * before it was kept): a copy whose scope is another one does not take them (a widget's
   * query shared by one read scope, read on another node by its owner whose rights changed).
   */
  scopeKey?: string;
}

/** What `load` finds: the state at `version`, or only its version when not newer. */
export interface StoredJob {
  version: number;
  /**
   * Null when the caller already holds this version (the results are not read again) or
   * when nothing was computed yet (version 0).
   */
  state: JobState | null;
  /** Somebody computes it now (its lease runs). */
  leased: boolean;
  stopRequested: boolean;
}

/**
 * Where the state of query jobs lives, and who computes each. In one process the
 * runner's own map is the state and this store only counts versions (`MemoryJobStore`);
 * in a cluster it is a table every node reads (`SqlJobStore`), and a node computes a
 * query only while it holds its lease, which it renews while it works and which expires
 * when it dies, so another node takes the work over.
 */
export interface JobStore {
  /** False for the memory store: nothing to load, nobody else to tell. */
  readonly shared: boolean;
  /**
   * Takes the lease of a query for this node: always with `force`, otherwise only when
   * nobody holds it or its holder's lease expired. Null when another node holds it.
   */
  claim(queryId: string, force: boolean): Promise<{ stopRequested: boolean } | null>;
  /**
   * Writes the state while this node holds the lease (`final` gives the lease up).
   * Returns the new version, or null when the lease was lost to another node.
   */
  save(queryId: string, state: JobState, final: boolean): Promise<number | null>;
  /** The stored state when newer than `version` (null: nothing stored). */
  load(queryId: string, version: number): Promise<StoredJob | null>;
  /** Gives up this node's lease without writing (a re-evaluation that changed nothing). */
  release(queryId: string): Promise<void>;
  /** Extends the leases this node holds on these queries. */
  renew(queryIds: readonly string[]): Promise<void>;
  /** Marks a query to be stopped by whoever computes it. */
  requestStop(queryId: string): Promise<void>;
  /** Queries left PENDING or IN_PROGRESS by a node whose lease expired. */
  orphans(): Promise<string[]>;
}

export class MemoryJobStore implements JobStore {
  readonly shared = false;
  private version = 0;

  async claim(): Promise<{ stopRequested: boolean }> {
    return { stopRequested: false };
  }

  async save(): Promise<number> {
    return ++this.version;
  }

  async load(): Promise<null> {
    return null;
  }

  async release(): Promise<void> {}

  async renew(): Promise<void> {}

  async requestStop(): Promise<void> {}

  async orphans(): Promise<string[]> {
    return [];
  }
}
