import type { WebSocket } from 'ws';
import type { Identity } from '../../core/identity.js';
import type { Target } from './protocol.js';

/** One watched query of a subscription (a dashboard subscription watches several). */
export interface Watch {
  /** Subscription key as the client sent it (canonical JSON). */
  key: string;
  target: Target;
  widgetId: number | null;
  dashboardId: number | null;
  queryId: string;
  /**
   * A widget's query is shared by the viewers who may read the same events: the read
   * scope's key it was watched under (null for a query subscription: the caller's own).
   */
  scopeKey: string | null;
}

/** A connection: who it is and what it watches. */
export interface Client {
  socket: WebSocket;
  who: Identity;
  /** The client's address as the server saw it at the upgrade (its reads' audit records). */
  readonly address: string | null;
  watches: Watch[];
  alive: boolean;
}

/**
 * The subscription registry of the live hub: the connections of this node and, for each
 * watched query, the watches on it. Knows nothing of sockets' messages or of queries.
 */
export class SubscriptionRegistry {
  readonly clients = new Set<Client>();
  /** query id → the clients' watches on it. */
  private readonly byQuery = new Map<string, Set<{ client: Client; watch: Watch }>>();

  /** Called with a query id when its last watch ends. */
  constructor(private readonly unwatched: (queryId: string) => void) {}

  add(client: Client): void {
    this.clients.add(client);
  }

  /** A connection ends: every watch of it goes. */
  remove(client: Client): void {
    this.clients.delete(client);
    for (const w of client.watches) this.unwatch(client, w);
    client.watches = [];
  }

  watch(client: Client, watches: readonly Watch[]): void {
    client.watches.push(...watches);
    for (const w of watches) {
      let set = this.byQuery.get(w.queryId);
      if (!set) {
        set = new Set();
        this.byQuery.set(w.queryId, set);
      }
      set.add({ client, watch: w });
    }
  }

  /** Ends one watch (the client's list is the caller's to update). */
  unwatch(client: Client, watch: Watch): void {
    const set = this.byQuery.get(watch.queryId);
    if (!set) return;
    for (const entry of set) if (entry.client === client && entry.watch === watch) set.delete(entry);
    if (set.size === 0) {
      this.byQuery.delete(watch.queryId);
      this.unwatched(watch.queryId);
    }
  }

  /** Ends every watch of the client's subscription `key`. */
  unsubscribe(client: Client, key: string): void {
    for (const w of client.watches) if (w.key === key) this.unwatch(client, w);
    client.watches = client.watches.filter((w) => w.key !== key);
  }

  /** The watches on a query (a copy: sending may end some). */
  watchersOf(queryId: string): Array<{ client: Client; watch: Watch }> {
    return [...(this.byQuery.get(queryId) ?? [])];
  }

  watched(): IterableIterator<string> {
    return this.byQuery.keys();
  }

  has(queryId: string): boolean {
    return this.byQuery.has(queryId);
  }

  /** The client's subscriptions, each once. */
  targets(client: Client): Target[] {
    const seen = new Map<string, Target>();
    for (const w of client.watches) seen.set(w.key, w.target);
    return [...seen.values()];
  }

  stats() {
    let subscriptions = 0;
    for (const c of this.clients) subscriptions += c.watches.length;
    return { connections: this.clients.size, subscriptions, watchedQueries: this.byQuery.size };
  }
}
