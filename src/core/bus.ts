/**
 * Publish/subscribe between the parts that must not import each other (ingest, query
 * runner, live hub). In process now; a Redis implementation will carry the same topics
 * between API instances in cluster mode.
 */
export interface Bus<Topics extends Record<string, unknown>> {
  publish<K extends keyof Topics>(topic: K, message: Topics[K]): void;
  /** Returns the function that unsubscribes. */
  subscribe<K extends keyof Topics>(topic: K, handler: (message: Topics[K]) => void): () => void;
}

export class InProcessBus<Topics extends Record<string, unknown>> implements Bus<Topics> {
  private readonly handlers = new Map<keyof Topics, Set<(message: never) => void>>();

  publish<K extends keyof Topics>(topic: K, message: Topics[K]): void {
    for (const h of this.handlers.get(topic) ?? []) (h as (m: Topics[K]) => void)(message);
  }

  subscribe<K extends keyof Topics>(topic: K, handler: (message: Topics[K]) => void): () => void {
    let set = this.handlers.get(topic);
    if (!set) {
      set = new Set();
      this.handlers.set(topic, set);
    }
    set.add(handler as (message: never) => void);
    return () => set.delete(handler as (message: never) => void);
  }
}
