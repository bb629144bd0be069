/**
 * Publish/subscribe between the parts that must not import each other (ingest, query
 * runner, live hub) and, in cluster mode, between the nodes of one service. Messages are
 * plain data (they cross a process boundary as JSON): never objects holding promises,
 * controllers or sockets.
 */
export interface Bus<Topics extends Record<string, unknown>> {
  /** Delivers to this process's subscribers at once and to the other nodes' (cluster). */
  publish<K extends keyof Topics>(topic: K, message: Topics[K]): void;
  /** Returns the function that unsubscribes; `remote` is true for another node's message. */
  subscribe<K extends keyof Topics>(
    topic: K,
    handler: (message: Topics[K], remote: boolean) => void,
  ): () => void;
  /** `in-process` or `redis`, for /api/health. */
  readonly kind: string;
  /** Throws when messages cannot reach the other nodes now (health). */
  check(): Promise<void>;
  /** True while messages reach the other nodes (always, in process). */
  readonly connected: boolean;
  close(): Promise<void>;
}

/** The topics every node exchanges (see ARCHITECTURE: state that can cross a process). */
export interface ClusterTopics extends Record<string, unknown> {
  /** A query's shared state changed to `version` (or the query was removed). */
  'query-changed': { queryId: string; version: number; removed: boolean };
  /** A node committed `count` events with times in [fromMs, toMs]: watched queries may change. */
  'events-committed': { count: number; fromMs: number; toMs: number };
  /** Somebody asked to stop a query: the node computing it interrupts the engine. */
  'stop-query': { queryId: string };
  /** A token (`keyId`) or users and rights (null) changed: caches forget, live connections re-check. */
  'rights-changed': { keyId: string | null };
  /** Triggers were created, changed or deleted: every node reloads its matcher. */
  'triggers-changed': Record<string, never>;
  /** Where a channel sends was set by someone, or a channel went: every node reloads its triggers' rights. */
  'channels-changed': Record<string, never>;
  /** Pipelines were created, changed or deleted: every node reloads the set intake runs. */
  'pipelines-changed': Record<string, never>;
  /**
   * Templates a node's miner made or generalised (patterns): every other node takes them
   * up, so a kind of message gets one id whichever node takes it in.
   */
  'patterns-made': {
    templates: Array<{ id: string; app: string; tokens: string[]; firstSeen: number }>;
    /** Templates merged into another (a slot's third word): the others' miners follow. */
    merged?: Array<{ into: string; ids: string[] }>;
  };
  /**
   * A node's trigger matches of the last moments, per epoch second `s`, trigger (at the
   * `version` the node counted for) and group key with the newest samples: every node
   * counts them in its alert windows.
   */
  'alert-counts': {
    counts: Array<{
      s: number;
      trigger: number;
      version: string;
      groups: Array<
        [group: string, count: number, samples: Array<{ ev_id: string; ts: number; message: string | null }>]
      >;
    }>;
  };
}

type Handler = (message: never, remote: boolean) => void;

/** Subscribers of one process by topic: the local half of every bus. */
export class LocalSubscribers {
  private readonly handlers = new Map<PropertyKey, Set<Handler>>();

  deliver(topic: PropertyKey, message: unknown, remote: boolean): void {
    for (const h of this.handlers.get(topic) ?? []) {
      try {
        (h as (m: unknown, r: boolean) => void)(message, remote);
      } catch {
        // One subscriber's failure never stops the others' delivery.
      }
    }
  }

  add(topic: PropertyKey, handler: Handler): () => void {
    let set = this.handlers.get(topic);
    if (!set) {
      set = new Set();
      this.handlers.set(topic, set);
    }
    set.add(handler);
    return () => set.delete(handler);
  }
}

export class InProcessBus<Topics extends Record<string, unknown>> implements Bus<Topics> {
  readonly kind = 'in-process';
  readonly connected = true;
  private readonly local = new LocalSubscribers();

  publish<K extends keyof Topics>(topic: K, message: Topics[K]): void {
    this.local.deliver(topic, message, false);
  }

  subscribe<K extends keyof Topics>(
    topic: K,
    handler: (message: Topics[K], remote: boolean) => void,
  ): () => void {
    return this.local.add(topic, handler as Handler);
  }

  async check(): Promise<void> {}

  async close(): Promise<void> {}
}
