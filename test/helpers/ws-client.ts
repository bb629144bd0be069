import WebSocket from 'ws';

export type Msg = [string, Record<string, unknown>];

/** A websocket client keeping every message and its close code. */
export class Client {
  readonly messages: Msg[] = [];
  readonly closed: Promise<number>;
  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => this.messages.push(JSON.parse(String(data)) as Msg));
    this.closed = new Promise((resolve) => ws.on('close', (code) => resolve(code)));
  }
  static async open(url: string): Promise<Client> {
    const ws = new WebSocket(url);
    const c = new Client(ws);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return c;
  }
  send(m: unknown) {
    this.ws.send(JSON.stringify(m));
  }
  async next(pred: (m: Msg) => boolean, ms = 5000): Promise<Msg> {
    const end = Date.now() + ms;
    for (;;) {
      const i = this.messages.findIndex(pred);
      if (i >= 0) return this.messages.splice(i, 1)[0] as Msg;
      if (Date.now() > end) throw new Error(`timed out; got ${JSON.stringify(this.messages.slice(-3))}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

export const is = (cmd: string) => (m: Msg) => m[0] === cmd;

/** Resolves with the close code, or rejects after `ms`. */
export const closedWithin = (c: Client, ms: number) =>
  Promise.race([
    c.closed,
    new Promise<number>((_, reject) => setTimeout(() => reject(new Error(`still open after ${ms} ms`)), ms)),
  ]);
