import net from 'node:net';

/**
 * A TCP relay in front of a real server, on a loopback port of its own: a test points a
 * client at it, then cuts it (every connection dropped, new ones refused) and opens it
 * again on the same port, to play an outage of the server without touching it.
 */
export class Relay {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(
    private readonly upstreamHost: string,
    private readonly upstreamPort: number,
  ) {}

  open(): Promise<void> {
    if (this.server) return Promise.resolve();
    return new Promise((resolve) => {
      const server = net.createServer((client) => {
        const upstream = net.connect(this.upstreamPort, this.upstreamHost);
        for (const s of [client, upstream]) {
          this.sockets.add(s);
          s.on('close', () => this.sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      this.server = server;
      server.listen(this.port, '127.0.0.1', () => {
        this.port = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  }

  cut(): Promise<void> {
    return new Promise((resolve) => {
      const server = this.server;
      this.server = null;
      for (const s of this.sockets) s.destroy();
      if (!server) return resolve();
      server.close(() => resolve());
    });
  }
}
