import type { Identity } from '../../core/identity.js';
import type { ReadOrigin } from '../../query/read-audit.js';

/** A widget's running query, as a subscription watches it. */
export interface ResolvedWidget {
  widgetId: number;
  queryId: string;
  refreshMs: number | null;
  geo: boolean;
  scopeKey: string;
}

/** A dashboard's widget whose query the caller may not run, and why. */
export interface RefusedWidget {
  widgetId: number;
  refused: string;
}

/** The widgets behind a widget or dashboard subscription (from the dashboards service). */
export interface WidgetSource {
  /**
   * The caller's visible widgets of the target with their query ids, started if needed;
   * each widget's read is recorded as coming from `origin`. A dashboard's widget whose
   * query the caller may not run (a Metric query's metric they may not see) comes as
   * `refused` with the reason, so the others still show; a widget target is refused whole.
   */
  resolve(
    who: Identity,
    target: { widget_id: number } | { dashboard_id: number },
    origin: ReadOrigin,
  ): Promise<Array<ResolvedWidget | RefusedWidget>>;
  /**
   * The key of what the caller may read now (ADR 0013): a widget's query is shared by the
   * viewers with the same key, and a viewer whose key changed no longer gets its updates.
   */
  scopeKey(who: Identity): Promise<string>;
  /**
   * Whether the caller may (still) see the target; false when it is gone or invisible.
   * Throws when that cannot be told now (a store is down): the subscription then stays.
   */
  visible(who: Identity, target: { widget_id: number } | { dashboard_id: number }): Promise<boolean>;
}

/** Who a connection is, re-checked while it lives (the tokens service). */
export interface IdentitySource {
  /** The token's identity now; null once the token is deleted or expired or its user deleted. */
  current(keyId: string): Promise<Identity | null>;
  /** A hint that this process changed tokens or rights: re-check at once. Returns `off`. */
  onInvalidate?(listener: () => void): () => void;
}

/** The queries behind subscriptions by `query_id` (the queries service). */
export interface HeldQuerySource {
  /**
   * Whether the caller may read the query now, checked as every read of a held query is
   * (false: not theirs, gone, or a shared widget query of a read scope no longer theirs).
   * Throws when that cannot be told now: the subscription then stays.
   */
  readable(who: Identity, queryId: string): Promise<boolean>;
}
