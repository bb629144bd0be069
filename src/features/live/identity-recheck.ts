import type { Identity } from '../../core/identity.js';
import type { Outbox } from './outbox.js';
import { CLOSE_TOKEN_INVALID, targetKey } from './protocol.js';
import type { HeldQuerySource, IdentitySource, WidgetSource } from './sources.js';
import type { Client, SubscriptionRegistry } from './subscriptions.js';

/**
 * Re-checks of who each live connection is: every `recheckMs`, and soon after this process
 * hints that tokens or rights changed. A connection whose token or user is gone is closed
 * with 4401; widget, dashboard and query subscriptions its user may no longer see end.
 */
export class IdentityRechecker {
  private readonly timer: NodeJS.Timeout | null;
  private readonly offIdentities: () => void;
  private rechecking: Promise<void> | null = null;
  private recheckAgain = false;
  private recheckSoon: NodeJS.Timeout | null = null;

  constructor(
    private readonly registry: SubscriptionRegistry,
    private readonly widgets: WidgetSource | null,
    private readonly queries: HeldQuerySource,
    private readonly out: Outbox,
    private readonly identities: IdentitySource | undefined,
    recheckMs = 10_000,
  ) {
    this.timer = identities ? setInterval(() => void this.recheck(), recheckMs).unref() : null;
    this.offIdentities = identities?.onInvalidate?.(() => this.scheduleRecheck()) ?? (() => undefined);
  }

  /** Rights changed somewhere (streams, teams, users, tokens): re-check soon. */
  scheduleRecheck() {
    if (this.recheckSoon) return;
    this.recheckSoon = setTimeout(() => {
      this.recheckSoon = null;
      void this.recheck();
    }, 20).unref();
  }

  /**
   * Re-checks every connection against the metadata store: its token (deleted, expired, user deleted: closed with 4401) and its
   * current rights (widget and dashboard subscriptions it may no longer see end, each
   * named by an `error` message; the connection stays). One pass at a time.
   */
  recheck(): Promise<void> {
    if (this.rechecking) {
      this.recheckAgain = true;
      return this.rechecking;
    }
    this.rechecking = this.recheckAll()
      .catch(() => undefined)
      .finally(() => {
        this.rechecking = null;
        if (this.recheckAgain) {
          this.recheckAgain = false;
          void this.recheck();
        }
      });
    return this.rechecking;
  }

  private async recheckAll(): Promise<void> {
    const identities = this.identities;
    if (!identities) return;
    // Connections sharing a token (tabs) cost one lookup.
    const byKey = new Map<string, Client[]>();
    for (const c of this.registry.clients) {
      const list = byKey.get(c.who.keyId);
      if (list) list.push(c);
      else byKey.set(c.who.keyId, [c]);
    }
    for (const [keyId, clients] of byKey) {
      let who: Identity | null;
      try {
        who = await identities.current(keyId);
      } catch {
        // The store cannot tell now: keep the connections, ask again next time.
        continue;
      }
      for (const client of clients) {
        if (!this.registry.clients.has(client)) continue;
        if (!who) {
          this.revoke(client);
          continue;
        }
        const changed = !sameRights(client.who, who);
        client.who = who;
        // Rights unchanged: what the client may see is unchanged too.
        if (changed) await this.recheckWatches(client);
        await this.recheckScopes(client);
        await this.recheckQueries(client);
      }
    }
  }

  /** The token is no longer valid: close with 4401 (cut if the peer does not answer). */
  private revoke(client: Client) {
    const socket = client.socket;
    socket.close(CLOSE_TOKEN_INVALID, 'Token is no longer valid.');
    setTimeout(() => socket.terminate(), 1000).unref();
    this.registry.remove(client);
  }

  /**
   * Ends the widget and dashboard subscriptions watched under a read scope that is no
   * longer the user's (streams, teams or readers changed): their shared queries read
   * what other viewers may read. Subscribing again gives the user's own.
   */
  private async recheckScopes(client: Client) {
    const widgets = this.widgets;
    if (!widgets || !client.watches.some((w) => w.scopeKey !== null)) return;
    let key: string;
    try {
      key = await widgets.scopeKey(client.who);
    } catch {
      return;
    }
    const stale = new Map(
      client.watches.filter((w) => w.scopeKey !== null && w.scopeKey !== key).map((w) => [w.key, w]),
    );
    for (const [k, w] of stale) {
      if (!this.registry.clients.has(client)) return;
      this.registry.unsubscribe(client, k);
      this.out.reply(client, 'error', {
        detail: 'Subscription ended: what you may read changed. Subscribe again.',
        command: 'subscribe',
        target: w.target,
      });
    }
  }

  /**
   * Ends the subscriptions by `query_id` whose query the user may no longer read, checked
   * as every read of a held query is (QueriesService.readable): a widget's query shared by
   * a read scope that is no longer theirs (a query of their own is read under their rights
   * now instead). Cheap when nothing changed: the query held here, the cached scope.
   */
  private async recheckQueries(client: Client) {
    for (const target of this.registry.targets(client)) {
      if (!('query_id' in target)) continue;
      let ok: boolean;
      try {
        ok = await this.queries.readable(client.who, target.query_id);
      } catch {
        continue;
      }
      const key = targetKey(target);
      if (ok || !this.registry.clients.has(client) || !client.watches.some((w) => w.key === key)) continue;
      this.registry.unsubscribe(client, key);
      this.out.reply(client, 'error', {
        detail: `Subscription to query ${target.query_id} ended: you may no longer read it.`,
        command: 'subscribe',
        target,
      });
      this.out.reply(client, 'unsubscribed', { target, subscriptions: this.registry.targets(client) });
    }
  }

  /** Ends the widget and dashboard subscriptions the connection's user may no longer see. */
  private async recheckWatches(client: Client) {
    const widgets = this.widgets;
    if (!widgets) return;
    // Query subscriptions are the owner's own queries: a token's user never changes.
    for (const target of this.registry.targets(client)) {
      if ('query_id' in target) continue;
      let ok: boolean;
      try {
        ok = await widgets.visible(client.who, target);
      } catch {
        continue;
      }
      const key = targetKey(target);
      if (ok || !this.registry.clients.has(client) || !client.watches.some((w) => w.key === key)) continue;
      this.registry.unsubscribe(client, key);
      const what = 'widget_id' in target ? `widget ${target.widget_id}` : `dashboard ${target.dashboard_id}`;
      this.out.reply(client, 'error', {
        detail: `Subscription to ${what} ended: you may no longer see it.`,
        command: 'subscribe',
        target,
      });
      this.out.reply(client, 'unsubscribed', { target, subscriptions: this.registry.targets(client) });
    }
  }

  /** Stops the timers and the hint. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.recheckSoon) clearTimeout(this.recheckSoon);
    this.offIdentities();
  }
}

/** Whether two identities of one token grant the same (rights may only have changed). */
function sameRights(a: Identity, b: Identity): boolean {
  return (
    a.userId === b.userId &&
    a.isAdmin === b.isAdmin &&
    a.permissions.size === b.permissions.size &&
    [...a.permissions].every((p) => b.permissions.has(p))
  );
}
