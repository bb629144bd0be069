import { createClient, type RedisClientType } from '@redis/client';
import { parseBusUrl } from '../config/bus-url.js';
import { type Bus, LocalSubscribers } from '../core/bus.js';

/** What crosses Redis: the sender (so a node skips its own) and the message. */
interface Envelope {
  node: string;
  message: unknown;
}

export interface RedisBusOptions {
  /** This process's id in the cluster (its own messages come back and are skipped). */
  node: string;
  /** Told when the connection to Redis is lost or comes back (the log). */
  onState?: (connected: boolean, where: string) => void;
}

/**
 * The bus over Redis pub/sub: a message is delivered to this process's subscribers at once
 * and published on `<channel>:<topic>` for the other nodes. Redis pub/sub keeps nothing:
 * a node that was cut off misses what was said meanwhile, so every subscriber also
 * catches up by itself (the live hub polls the shared state while `connected` is false).
 * Publishing never waits on Redis and never fails a request: while Redis is away,
 * messages go to this process only.
 */
export class RedisBus<Topics extends Record<string, unknown>> implements Bus<Topics> {
  readonly kind = 'redis';
  private readonly local = new LocalSubscribers();
  private readonly topics = new Set<string>();
  private closed = false;

  private constructor(
    private readonly pub: RedisClientType,
    private readonly sub: RedisClientType,
    private readonly channel: string,
    private readonly where: string,
    private readonly opts: RedisBusOptions,
  ) {}

  /**
   * Connects in the background: a Redis that is down at start-up delays live updates
   * between nodes, never the start of the server.
   */
  static open<T extends Record<string, unknown>>(busUrl: string, opts: RedisBusOptions): RedisBus<T> {
    const { redisUrl, channel, where } = parseBusUrl(busUrl);
    const make = (publisher: boolean) =>
      createClient({
        url: redisUrl,
        // While Redis is away a publish fails at once instead of piling up in memory; a
        // subscription waits for the connection.
        disableOfflineQueue: publisher,
        socket: {
          connectTimeout: 5000,
          reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000),
        },
      }) as RedisClientType;
    const bus = new RedisBus<T>(make(true), make(false), channel, where, opts);
    bus.start();
    return bus;
  }

  private start() {
    for (const [client, role] of [
      [this.pub, 'pub'],
      [this.sub, 'sub'],
    ] as const) {
      // Errors are reported by the state changes below; an unhandled one would crash.
      client.on('error', () => undefined);
      client.on('ready', () => role === 'sub' && this.opts.onState?.(true, this.where));
      client.on('end', () => undefined);
      client.on('reconnecting', () => role === 'sub' && this.opts.onState?.(false, this.where));
      client.connect().catch(() => undefined);
    }
  }

  get connected(): boolean {
    return !this.closed && this.pub.isReady && this.sub.isReady;
  }

  publish<K extends keyof Topics>(topic: K, message: Topics[K]): void {
    this.local.deliver(topic, message, false);
    if (!this.pub.isReady) return;
    const envelope: Envelope = { node: this.opts.node, message };
    this.pub.publish(`${this.channel}:${String(topic)}`, JSON.stringify(envelope)).catch(() => undefined);
  }

  subscribe<K extends keyof Topics>(
    topic: K,
    handler: (message: Topics[K], remote: boolean) => void,
  ): () => void {
    const name = String(topic);
    if (!this.topics.has(name)) {
      this.topics.add(name);
      // node-redis subscribes again by itself after a reconnection.
      this.sub
        .subscribe(`${this.channel}:${name}`, (text) => this.receive(name, text))
        .catch(() => undefined);
    }
    return this.local.add(topic, handler as (message: never, remote: boolean) => void);
  }

  private receive(topic: string, text: string) {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(text) as Envelope;
    } catch {
      return;
    }
    if (envelope.node === this.opts.node) return;
    this.local.deliver(topic, envelope.message, true);
  }

  async check(): Promise<void> {
    if (!this.connected) throw new Error(`Redis at ${this.where} is unreachable`);
    await this.pub.ping();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const c of [this.pub, this.sub]) {
      if (c.isReady) await c.close().catch(() => c.destroy());
      else if (c.isOpen) c.destroy();
    }
  }
}
