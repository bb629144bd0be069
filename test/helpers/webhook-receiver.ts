/** A webhook receiver on loopback, for the alerting tests. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback that answers `status()` (200 unless told). */
export async function receiver(status: () => number = () => 200) {
  const got: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      got.push({ at: Date.now(), headers: req.headers, body });
      const code = status();
      res.writeHead(code).end(code === 200 ? 'ok' : 'not now');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { got, url, close: () => new Promise<void>((r) => server.close(() => r())) };
}
