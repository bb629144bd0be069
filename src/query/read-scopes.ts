import type { Identity } from '../core/identity.js';
import type { ReadScope } from '../event-store/read-scope.js';
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
   * A query's filter, for its owner, with its `stream:` conditions and `params.streams` turned into the
   * streams' rules; a stream the user may not read, or that does not exist, is a 400 on
   * `field` (`params.streams`, or `params.query` for `stream:`), so its existence does not leak.
   */
  /**
   * Which stream sets (a log metric's buckets', event-store/rollups/metric-store.ts) count
   * for `who`: a set counts when they may read a stream in it, or the built-in stream for
   * the built-in set (a set naming only deleted streams reads as the built-in one); with
   * `streams`, only sets holding one of those. A stream they may not read, or that does not
   * exist, is a 400 on `field`.
   */
  setTest(
    who: Identity,
    streams: readonly number[] | undefined,
    field: string,
  ): Promise<(set: string) => boolean>;
  narrow(
    userId: number,
    filter: FilterNode,
    streams: readonly number[] | undefined,
    field?: { streams: string; query: string },
  ): Promise<FilterNode>;
}
