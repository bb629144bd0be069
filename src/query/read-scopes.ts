import type { Identity } from '../core/identity.js';
import type { ReadScope } from '../event-store/read-scope.js';
import type { StreamChoice } from '../event-store/rollups/metric-store.js';
import type { FilterNode } from '../filter/ast.js';

/**
 * Who may read which events (ADR 0013): the streams component answers. Every service
 * that reads events asks it for the caller's (or a query's, report's or trigger's
 * owner's) scope and gives that scope to the event store with the read.
 */
export interface ReadScopes {
  /** The events `who` may read (administrators: every event). */
  of(who: Identity): Promise<ReadScope>;
  /** The same for a user known by id (a query's, report's or trigger's owner); none for a deleted user. */
  ofUser(userId: number): Promise<ReadScope>;
  /**
   * The streams a log metric's read is narrowed to (a series' `streams`, a Metric query's
   * `params.streams`), for the event store's set test (event-store/rollups/metric-store.ts
   * `setTest`, with the reader's scope); none when `streams` is. A stream they may not
   * read, or that does not exist, is a 400 on `field`.
   */
  streamChoice(
    userId: number,
    streams: readonly number[] | undefined,
    field: string,
  ): Promise<StreamChoice | undefined>;
  /**
   * A query's filter, for its owner, with its `stream:` conditions and `params.streams` turned into the
   * streams' rules; a stream the user may not read, or that does not exist, is a 400 on
   * `field` (`params.streams`, or `params.query` for `stream:`), so its existence does not leak.
   */
  narrow(
    userId: number,
    filter: FilterNode,
    streams: readonly number[] | undefined,
    field?: { streams: string; query: string },
  ): Promise<FilterNode>;
}
