import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import gelfPro, { type Adapter, type Logger, type Settings } from 'gelf-pro';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GelfListener,
  startGelfListener,
} from '../../../src/features/intake/protocols/gelf-listener.js';
import { BACKEND } from '../../helpers/app.js';
import { storedEvents } from '../../helpers/events.js';
import { eventually } from '../../helpers/eventually.js';
import {
  awaitEvents,
  type FoundEvent,
  type Logscope,
  searchEvents,
  startLogscope,
} from '../../helpers/shippers.js';

type Level = 'emergency' | 'alert' | 'critical' | 'error' | 'warning' | 'notice' | 'info' | 'debug';
type Callback = (err?: Error | null, bytes?: number) => void;
/** A gelf-pro logger of its own (the module is a singleton: each client is a child of it). */
type GelfClient = Logger & { adapter?: Adapter } & Record<
    Level,
    (message: string, extra?: object, cb?: Callback) => void
  >;

function gelfClient(settings: Partial<Settings>): GelfClient {
  const client = Object.create(gelfPro) as GelfClient;
  client.setConfig(settings);
  return client;
}

const sendWith = (client: GelfClient, level: Level, message: string, extra: object) =>
  new Promise<number>((resolve, reject) =>
    client[level](message, extra, (err, bytes) => (err ? reject(err) : resolve(bytes ?? 0))),
  );

/**
 * gelf-pro has adapters for UDP, TCP and TLS only; its README's way to add one is an
 * object with setOptions and send. This one POSTs like Graylog's GELF HTTP clients and
 * wants Graylog's answer: 202 with an empty body.
 */
function httpAdapter(url: string, token: string, gzip = false): Adapter {
  return {
    setOptions() {
      return this;
    },
    send(message, cb) {
      const body = gzip ? gzipSync(String(message)) : String(message);
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `token ${token}`,
          ...(gzip ? { 'content-encoding': 'gzip' } : {}),
        },
        body,
      }).then(
        async (res) => {
          const text = await res.text();
          if (res.status === 202 && text === '') cb(undefined, body.length);
          else cb(new Error(`HTTP ${res.status} ${text}`));
        },
        (err: Error) => cb(err),
      );
    },
  };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Each of `n` numbered messages `${marker} ${i}` arrived exactly once. */
function expectOnceEach(events: FoundEvent[], marker: string, n: number) {
  const counts = new Map<string, number>();
  for (const e of events) counts.set(e.message ?? '', (counts.get(e.message ?? '') ?? 0) + 1);
  for (let i = 0; i < n; i++) expect(counts.get(`${marker} ${i}`), `${marker} ${i}`).toBe(1);
  expect(events).toHaveLength(n);
}

const until = (check: () => boolean, withinMs = 5000) =>
  eventually('the listener to count it', check, { withinMs, everyMs: 20 });

describe(`GELF intake on ${BACKEND}`, () => {
  let ls: Logscope;
  let gelf: GelfListener;
  let udp: GelfClient;
  let tcp: GelfClient;
  const datagrams = createSocket('udp4');
  const sendDatagram = (msg: Buffer, port = ls.gelfPort) =>
    new Promise<void>((resolve, reject) =>
      datagrams.send(msg, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())),
    );
  const anyContains = async (marker: string) =>
    (await storedEvents(ls.t, (e) => JSON.stringify(e).includes(marker))).length;

  beforeAll(async () => {
    ls = await startLogscope();
    gelf = ls.gelfListener;
    udp = gelfClient({ adapterName: 'udp', adapterOptions: { host: '127.0.0.1', port: ls.gelfPort } });
    tcp = gelfClient({ adapterName: 'tcp', adapterOptions: { host: '127.0.0.1', port: ls.gelfPort } });
  });
  afterAll(async () => {
    datagrams.close();
    await ls.close();
  });

  it('takes gelf-pro over UDP (zlib, chunked), each message once with its fields', async () => {
    const marker = `udp-${randomBytes(4).toString('hex')}`;
    const ts = nowSeconds() - 60;
    const blob = randomBytes(15_000).toString('base64'); // incompressible: ~15 chunks
    const n = 20;
    const datagramsBefore = gelf.stats().udpReceived;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        sendWith(udp, i % 2 ? 'warning' : 'info', `${marker} ${i}`, {
          host: 'gelf-udp-host',
          timestamp: ts + i + 0.123,
          full_message: `${marker} ${i}\nsecond line`,
          user_id: `u-${i}`,
          src_ip: '10.1.2.3',
          request: { id: i },
          ...(i === 0 ? { blob } : {}),
        }),
      ),
    );
    const events = await awaitEvents(ls, marker, n);
    expectOnceEach(events, marker, n);
    for (const e of events) {
      const i = Number(e.message?.split(' ')[1]);
      expect(e).toMatchObject({
        host: 'gelf-udp-host',
        severity: i % 2 ? 'warning' : 'info',
        ts: ts + i + 0.123,
        src_ip: '10.1.2.3',
        user_id: `u-${i}`,
        request_id: i,
        full_message: `${marker} ${i}\nsecond line`,
        intake: 'gelf:127.0.0.1',
      });
    }
    expect(events.find((e) => e.message === `${marker} 0`)?.blob).toBe(blob);
    // gelf-pro sends every message as chunks; the one with the blob took several.
    expect(gelf.stats().udpReceived - datagramsBefore).toBeGreaterThan(n + 5);
  });

  it('takes gelf-pro over TCP, each message once with its fields', async () => {
    const marker = `tcp-${randomBytes(4).toString('hex')}`;
    const ts = nowSeconds() - 120;
    const n = 10;
    for (let i = 0; i < n; i++) {
      await sendWith(tcp, 'error', `${marker} ${i}`, {
        host: 'gelf-tcp-host',
        timestamp: ts + i + 0.5,
        full_message: 'trace',
        order_id: 1000 + i,
        ...(i === 0 ? { blob: 'x'.repeat(200_000) } : {}),
      });
    }
    const events = await awaitEvents(ls, marker, n);
    expectOnceEach(events, marker, n);
    for (const e of events) {
      const i = Number(e.message?.split(' ')[1]);
      expect(e).toMatchObject({
        host: 'gelf-tcp-host',
        severity: 'error',
        ts: ts + i + 0.5,
        order_id: 1000 + i,
        full_message: 'trace',
        intake: 'gelf:127.0.0.1',
      });
    }
  });

  it('takes gelf-pro over HTTP (plain and gzip), answered 202 with an empty body once stored', async () => {
    const marker = `http-${randomBytes(4).toString('hex')}`;
    const ts = nowSeconds() - 180;
    const url = `${ls.url}/api/ingest/gelf`;
    const n = 6;
    for (let i = 0; i < n; i++) {
      const client = gelfClient({});
      client.adapter = httpAdapter(url, ls.ingestToken, i % 2 === 1);
      await sendWith(client, 'notice', `${marker} ${i}`, {
        host: 'gelf-http-host',
        timestamp: ts + i + 0.25,
        full_message: 'full',
        tenant: 'acme',
      });
      // Durable before the answer: readable at once, no polling.
      expect((await searchEvents(ls, `${marker} ${i}`)).length).toBe(1);
    }
    const events = await searchEvents(ls, marker);
    expectOnceEach(events, marker, n);
    for (const e of events) {
      const i = Number(e.message?.split(' ')[1]);
      expect(e).toMatchObject({
        host: 'gelf-http-host',
        severity: 'notice',
        ts: ts + i + 0.25,
        full_message: 'full',
        tenant: 'acme',
        intake: 'gelf:admin',
      });
    }
  });

  it('keeps a GELF timestamp exact, finer than milliseconds included, in raw', async () => {
    const marker = `exact-${randomBytes(4).toString('hex')}`;
    const timestamp = nowSeconds() - 30 + 0.123456;
    await sendWith(tcp, 'info', marker, { timestamp });
    const [event] = await awaitEvents(ls, marker, 1, 5000, 0);
    expect(event?.ts).toBe(Math.floor(timestamp * 1000) / 1000);
    const full = await ls.t.as(ls.t.adminToken, { method: 'GET', url: `/api/events/${event?.ev_id}` });
    expect(full.json().raw).toMatchObject({ message: marker, ts: timestamp });
  });

  describe('hand-made datagrams and frames', () => {
    const gelfJson = (marker: string, extra: object = {}) =>
      JSON.stringify({ version: '1.1', host: 'hand', short_message: marker, ...extra });
    const chunks = (payload: Buffer, parts: number, id = randomBytes(8)) => {
      const size = Math.ceil(payload.length / parts);
      return Array.from({ length: parts }, (_, i) =>
        Buffer.concat([
          Buffer.from([0x1e, 0x0f]),
          id,
          Buffer.from([i, parts]),
          payload.subarray(i * size, (i + 1) * size),
        ]),
      );
    };

    it('reassembles chunks out of order and ignores a duplicated chunk', async () => {
      const marker = `ooo-${randomBytes(4).toString('hex')}`;
      const payload = deflateSync(gelfJson(marker, { _pad: randomBytes(3000).toString('hex') }));
      const parts = chunks(payload, 4);
      for (const i of [2, 0, 2, 3, 1, 1]) await sendDatagram(parts[i]!);
      const events = await awaitEvents(ls, marker, 1);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ host: 'hand', message: marker });
    });

    it('takes whole zlib, gzip and uncompressed datagrams', async () => {
      const marker = `whole-${randomBytes(4).toString('hex')}`;
      await sendDatagram(deflateSync(gelfJson(`${marker} 0`)));
      await sendDatagram(gzipSync(gelfJson(`${marker} 1`)));
      await sendDatagram(Buffer.from(gelfJson(`${marker} 2`, { level: 2, _app: 'hand-app' })));
      const events = await awaitEvents(ls, marker, 3);
      expectOnceEach(events, marker, 3);
      expect(events.find((e) => e.message === `${marker} 2`)).toMatchObject({
        severity: 'critical',
        app: 'hand-app',
      });
    });

    it('counts malformed datagrams and stores nothing of them', async () => {
      const marker = `bad-${randomBytes(4).toString('hex')}`;
      const before = gelf.stats().malformed;
      await sendDatagram(Buffer.from(`{"short_message": "${marker}", `)); // not JSON
      await sendDatagram(Buffer.from(JSON.stringify({ host: marker }))); // no short_message
      await sendDatagram(Buffer.from(gelfJson(marker, { version: '2.0' })));
      await sendDatagram(deflateSync(`[${gelfJson(marker)}]`));
      await sendDatagram(Buffer.from([0x1e, 0x0f, 1, 2, 3])); // a chunk without its header
      await until(() => gelf.stats().malformed >= before + 5);
      expect(gelf.stats().malformed).toBe(before + 5);
      expect(await anyContains(marker)).toBe(0);
    });

    it('refuses a zip bomb without storing it', async () => {
      const marker = `bomb-${randomBytes(4).toString('hex')}`;
      const bomb = deflateSync(gelfJson(marker, { _pad: ' '.repeat(50 * 1024 * 1024) }));
      expect(bomb.length).toBeLessThan(65_000);
      const before = gelf.stats().tooLarge;
      await sendDatagram(bomb);
      await until(() => gelf.stats().tooLarge > before);
      expect(gelf.stats().tooLarge).toBe(before + 1);
      expect(await anyContains(marker)).toBe(0);
    });

    it('drops and counts a chunked message whose chunks do not all arrive in time', async () => {
      const short = await startGelfListener(ls.t.rt.services.ingest, {
        host: '127.0.0.1',
        port: 0,
        chunkTimeoutMs: 200,
        log: { warn: () => undefined },
      });
      const unwatch = ls.t.app.watchMetrics(short);
      try {
        const marker = `partial-${randomBytes(4).toString('hex')}`;
        const parts = chunks(deflateSync(gelfJson(marker, { _pad: randomBytes(3000).toString('hex') })), 3);
        await sendDatagram(parts[0]!, short.port);
        await sendDatagram(parts[2]!, short.port);
        await until(() => short.stats().incomplete > 0);
        expect(short.stats()).toMatchObject({ udpReceived: 2, incomplete: 1 });
        // The missing chunk arriving late does not complete (or reopen) the message.
        await sendDatagram(parts[1]!, short.port);
        await new Promise((r) => setTimeout(r, 500));
        expect(short.stats().incomplete).toBe(1);
        expect(await anyContains(marker)).toBe(0);

        const text = (await ls.t.app.inject({ method: 'GET', url: '/metrics' })).body;
        const metric = (name: string) => {
          const line = text.split('\n').find((l) => l.startsWith(`${name} `));
          return line === undefined ? undefined : Number(line.slice(name.length + 1));
        };
        const sum = (key: 'incomplete' | 'malformed' | 'tooLarge' | 'udpReceived' | 'tcpReceived') =>
          short.stats()[key] + gelf.stats()[key];
        expect(metric('logscope_gelf_dropped_total{reason="incomplete"}')).toBe(sum('incomplete'));
        expect(metric('logscope_gelf_dropped_total{reason="malformed"}')).toBe(sum('malformed'));
        expect(metric('logscope_gelf_dropped_total{reason="too_large"}')).toBe(sum('tooLarge'));
        expect(metric('logscope_gelf_dropped_total{reason="refused"}')).toBe(0);
        expect(metric('logscope_gelf_received_total{transport="udp"}')).toBe(sum('udpReceived'));
        expect(metric('logscope_gelf_received_total{transport="tcp"}')).toBe(sum('tcpReceived'));
      } finally {
        unwatch();
        await short.close();
      }
    });

    it('splits a raw TCP stream at NUL across writes, with a last frame at close', async () => {
      const marker = `raw-${randomBytes(4).toString('hex')}`;
      const stream = `${gelfJson(`${marker} 0`)}\0${gelfJson(`${marker} 1`)}\n\0\0${gelfJson(`${marker} 2`)}\0`;
      const before = gelf.stats().tooLarge;
      const sock = connect(ls.gelfPort, '127.0.0.1');
      await new Promise((r) => sock.once('connect', r));
      for (let i = 0; i < stream.length; i += 9) sock.write(stream.slice(i, i + 9));
      sock.write(`${'y'.repeat(2 * 1024 * 1024)}\0`); // over the frame cap: skipped, counted
      sock.end(gelfJson(`${marker} 3`));
      const events = await awaitEvents(ls, marker, 4);
      expectOnceEach(events, marker, 4);
      expect(gelf.stats().tooLarge).toBe(before + 1);
    });
  });

  describe('POST /api/ingest/gelf', () => {
    const post = (token: string | null, payload: string | Buffer, headers: Record<string, string> = {}) =>
      ls.t.as(token, {
        method: 'POST',
        url: '/api/ingest/gelf',
        headers: { 'content-type': 'application/json', ...headers },
        payload,
      });

    it('takes NDJSON of several messages and a pretty-printed one', async () => {
      const marker = `ndjson-${randomBytes(4).toString('hex')}`;
      const lines = [0, 1, 2].map((i) => JSON.stringify({ short_message: `${marker} ${i}`, _k: i }));
      const res = await post(ls.ingestToken, `${lines.join('\n')}\n`, {
        'content-type': 'application/x-ndjson',
      });
      expect(res.statusCode).toBe(202);
      expect(res.body).toBe('');
      const pretty = await post(ls.ingestToken, JSON.stringify({ short_message: `${marker} 3` }, null, 2));
      expect(pretty.statusCode).toBe(202);
      expectOnceEach(await searchEvents(ls, marker), marker, 4);
    });

    it('answers 400 for a malformed message and stores nothing of the request', async () => {
      const marker = `http-bad-${randomBytes(4).toString('hex')}`;
      const good = JSON.stringify({ short_message: `${marker} good`, host: 'h' });
      for (const [body, detail] of [
        [`${good}\n${JSON.stringify({ host: marker })}\n`, /line 2: GELF message has no short_message/],
        [`${good}\n${JSON.stringify({ version: '2.0', short_message: marker })}`, /line 2: GELF version/],
        [`${good}\n{"short_message": "${marker}"`, /line 2: invalid JSON/],
        [`[${good}]`, /JSON object, got an array/],
        [JSON.stringify({ short_message: '', host: marker }), /non-empty string/],
        [
          `${good}\n${JSON.stringify({ short_message: marker, [`_${'n'.repeat(300)}`]: 1 })}`,
          /line 2: field name/,
        ],
      ] as const) {
        const res = await post(ls.ingestToken, body);
        expect(res.statusCode, body.slice(0, 80)).toBe(400);
        expect(res.json()).toEqual({ detail: expect.stringMatching(detail), code: expect.any(String) });
        expect(res.json().detail).toMatch(/Nothing was stored/);
      }
      expect(await anyContains(marker)).toBe(0);
    });

    it('answers 401 without a token and 415 for another media type', async () => {
      const body = JSON.stringify({ short_message: 'no token' });
      const res = await post(null, body);
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Token');
      expect(res.json()).toMatchObject({ code: 'not_authenticated' });
      const text = await post(ls.ingestToken, body, { 'content-type': 'text/csv' });
      expect(text.statusCode).toBe(415);
    });
  });
});
