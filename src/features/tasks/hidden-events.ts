import { decodeTime } from 'ulidx';
import type { EventStore } from '../../event-store/event-store.js';
import { inScope, type ReadScope, SYSTEM_SCOPE } from '../../event-store/read-scope.js';
import { and, cond } from '../../filter/ast.js';
import { MAX_TS_SECONDS, MIN_TS_SECONDS } from '../../query/time-range.js';

/** Event ids looked up by one search. */
const IDS_PER_SEARCH = 1000;
/** An event's `received_at` lies within this much before its id's time (as getById reads it; ms). */
const CLOCK_STEP_MS = 3_600_000;

/**
 * Which of these event ids name a stored event that `scope` may not read (docs/access.md). A
 * resource that carries event ids and is shown to people who may read different events
 * (a task, made by a user or a trigger) shows each reader its list without these. An id
 * that names no stored event tells nothing of one and is not hidden.
 *
 * One search a thousand ids, narrowed to the receive times the ids carry (as getById
 * narrows one), over every event: the events found are judged by the reader's scope in
 * the process, by the evaluator held equal to the stores' SQL (read-scope.ts `inScope`).
 */
export async function hiddenEventIds(
  store: EventStore,
  scope: ReadScope,
  evIds: readonly string[],
): Promise<Set<string>> {
  const hidden = new Set<string>();
  if (scope.filter === null) return hidden;
  const times = new Map<string, number>();
  for (const id of evIds) {
    try {
      times.set(id, decodeTime(id));
    } catch {
      // Not an event id: it names no event.
    }
  }
  const ids = [...times.keys()];
  for (let i = 0; i < ids.length; i += IDS_PER_SEARCH) {
    const chunk = ids.slice(i, i + IDS_PER_SEARCH);
    const at = chunk.map((id) => times.get(id) as number);
    const from = (Math.min(...at) - CLOCK_STEP_MS) / 1000;
    const to = (Math.max(...at) + 1000) / 1000;
    // Whether each event exists is read for no user; what the reader sees is judged below.
    const { events } = await store.execute({
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter: and(cond('ev_id', 'in', chunk), cond('received_at', 'between', [from, to])),
      range: { fromMs: MIN_TS_SECONDS * 1000, toMs: MAX_TS_SECONDS * 1000 },
      sort: [],
      limit: chunk.length,
      offset: 0,
      count: false,
    });
    for (const e of events) if (!inScope(scope, e)) hidden.add(e.ev_id);
  }
  return hidden;
}
