import type { EventStore } from '../../event-store/event-store.js';
import { type ReadScope, SYSTEM_SCOPE } from '../../event-store/read-scope.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import type { UsersRepository } from '../identity/index.js';

/**
 * Something about to leave the service without a caller's own request (a trigger's
 * notification, a scheduled report and its link, a report link being followed): who
 * decided it leaves, and what it holds.
 */
export interface Release {
  /** Whose rights it was read with: a trigger's `run_as`, a report's owner (null: a deleted user). */
  principal: number | null;
  /** Who else decided where it goes: whoever last set a channel's destination (null: deleted). */
  deciders?: ReadonlyArray<number | null>;
  /** It holds everything the principal may read (a report): every decider must read all of that. */
  wholeScope?: boolean;
  /** Events it names (a notification's samples): every decider and the principal must read each now. */
  events?: readonly string[];
}

/**
 * The one place that decides whether data may leave the service (ADR 0034): every path that
 * sends or exposes event data outside a caller's own request asks it, at the moment of
 * sending, never from a decision cached earlier. It refuses when anyone who decided it is
 * deleted or disabled, when a decider may not read all a report holds, or when anyone who
 * decided it may no longer read one of the events it names. The answer is the reason, said
 * as a delivery's `last_error` says it, or null.
 */
export class ReleaseGate {
  constructor(
    private readonly users: UsersRepository,
    private readonly scopes: ReadScopes,
    private readonly events: EventStore,
  ) {}

  async refusal(r: Release): Promise<string | null> {
    const people = [...new Set([r.principal, ...(r.deciders ?? [])])];
    const names = new Map<number, string>();
    for (const id of people) {
      if (id === null) return 'not sent: a user who decided it was deleted';
      const user = await this.users.byId(id);
      if (!user) return `not sent: user ${id}, who decided it, was deleted`;
      if (user.disabled === 1) return `not sent: user ${user.username}, who decided it, is disabled`;
      names.set(id, user.username);
    }
    const scopes = new Map<number, ReadScope>();
    for (const id of names.keys()) scopes.set(id, await this.scopes.ofUser(id));
    const principal = r.principal as number;
    if (r.wholeScope)
      for (const [id, scope] of scopes)
        if (id !== principal && !covers(scope, scopes.get(principal) as ReadScope))
          return `not sent: user ${names.get(id)}, who set where it goes, may not read everything it holds`;
    for (const evId of r.events ?? [])
      for (const [id, scope] of scopes) {
        if (await this.events.getById(evId, scope)) continue;
        // An event deleted since (retention) is no one's to refuse.
        if (!(await this.events.getById(evId, SYSTEM_SCOPE))) continue;
        return `not sent: user ${names.get(id)}, who decided it, may no longer read an event it names`;
      }
    return null;
  }
}

/**
 * Whether every event of `b` is in `a`. Sure, never guessed: every event; no event; the same
 * set; or the same streams' rules with `b`'s streams among `a`'s. Anything else is false.
 */
export function covers(a: ReadScope, b: ReadScope): boolean {
  if (a.filter === null || b.key === 'none' || a.key === b.key) return true;
  if (!a.streams || !b.streams || a.streams.rules !== b.streams.rules) return false;
  const mine = new Set(a.streams.ids);
  return b.streams.ids.every((id) => mine.has(id)) && (!b.streams.unclaimed || a.streams.unclaimed);
}
