import type { Client, SubscriptionRegistry, Watch } from './subscriptions.js';

/**
 * What the live hub sends to its connections: text frames through bounded send buffers (a
 * client that cannot keep up is closed with 1013), replies and errors, and the end of a
 * watch as the client is told it. Counts what it sent and refused.
 */
export class Outbox {
  readonly counts = { messagesSent: 0, slowClientsClosed: 0, updatesRefused: 0 };

  constructor(
    private readonly registry: SubscriptionRegistry,
    /** Bytes a connection may have waiting to be sent before it is closed with 1013. */
    private readonly maxBufferedBytes: number,
  ) {}

  /** A text frame; a Buffer is sent as it is (encoded once for all its subscribers). */
  send(client: Client, text: string | Buffer): void {
    if (client.socket.readyState !== client.socket.OPEN) return;
    // What is still waiting from earlier messages decides: a large update alone is fine.
    if (client.socket.bufferedAmount > this.maxBufferedBytes) {
      // A client that cannot keep up is dropped; the others go on.
      client.socket.close(1013, 'Too slow: send buffer full');
      this.counts.slowClientsClosed++;
      // A stalled peer may never answer the close handshake: cut it after a second.
      const socket = client.socket;
      setTimeout(() => socket.terminate(), 1000).unref();
      this.registry.remove(client);
      return;
    }
    client.socket.send(text, { binary: false });
    this.counts.messagesSent++;
  }

  reply(client: Client, command: string, params: unknown): void {
    this.send(client, JSON.stringify([command, params]));
  }

  error(client: Client, detail: string, command: unknown): void {
    this.reply(client, 'error', { detail, command: command ?? null });
  }

  /**
   * Ends one subscription: with an `error` naming why (`detail`), or silently when its
   * query is gone; then `unsubscribed`, as when the client asks.
   */
  endWatch(client: Client, watch: Watch, detail: string | null): void {
    if (!client.watches.includes(watch)) return;
    client.watches = client.watches.filter((w) => w !== watch);
    this.registry.unwatch(client, watch);
    if (detail !== null) {
      this.counts.updatesRefused++;
      this.reply(client, 'error', {
        detail: `Subscription ended. ${detail}`,
        command: 'subscribe',
        target: watch.target,
      });
    }
    this.reply(client, 'unsubscribed', {
      target: watch.target,
      subscriptions: this.registry.targets(client),
    });
  }
}
