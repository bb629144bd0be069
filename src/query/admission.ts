import { type AppError, outOfMemory, tooManyRequests } from '../errors/errors.js';
import type { QueryJob } from './job.js';

export interface AdmissionLimits {
  /** Live queries (running, or watched by a live subscription) a user may have at once. */
  maxLivePerUser?: number;
  /** Bytes (estimated) the results of all queries may hold together. */
  resultsBudgetBytes?: number;
}

/**
 * Why a query of `ownerId` may not become live now, or null: the owner already has
 * `maxLivePerUser` running or watched queries (429), or the results of running and
 * watched queries, which cannot be dropped, fill the results budget (503). `except`: the
 * job itself (a restart or a pin), not counted.
 */
export function refusal(
  jobs: Iterable<QueryJob>,
  watched: (id: string) => boolean,
  limits: AdmissionLimits,
  ownerId: number,
  except?: QueryJob,
): AppError | null {
  // Watching a query that already counts (running, or watched elsewhere) adds nothing.
  if (except && (except.running || watched(except.id))) return null;
  const max = limits.maxLivePerUser ?? Number.POSITIVE_INFINITY;
  const budget = limits.resultsBudgetBytes ?? Number.POSITIVE_INFINITY;
  let live = 0;
  let kept = 0;
  for (const job of jobs) {
    if (job === except || !(job.running || watched(job.id))) continue;
    kept += job.resultBytes;
    if (job.ownerId === ownerId && !job.internal) live++;
  }
  if (live >= max)
    return tooManyRequests(
      2,
      `You have ${live} queries running or watched (at most ${max}); wait for one to finish, or stop or remove one.`,
    );
  if (kept >= budget)
    return outOfMemory(
      'The results of running and watched queries fill the memory kept for query results; retry later, or stop or unsubscribe from some.',
    );
  return null;
}
