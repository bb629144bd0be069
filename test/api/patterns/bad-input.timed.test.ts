import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SyslogListener } from '../../../src/features/intake/protocols/syslog-listener.js';
import {
  MAX_TEMPLATES,
  MAX_TEMPLATES_PER_APP,
  TemplateMiner,
} from '../../../src/ingest/patterns/template-miner.js';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { syslogOnLoopback } from '../../helpers/listeners.js';

type Ev = { ev_id: string; message: string | null; app: string | null; pattern_id: string | null };

const ID = /^[A-Za-z0-9]{12,16}$/;

/** A word of `n` random lowercase letters: never masked, so each one is a distinct token. */
function word(n = 8): string {
  let w = '';
  for (const b of randomBytes(n)) w += String.fromCharCode(97 + (b % 26));
  return w;
}

// A full collection before each heap reading, as the patterns bench does.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heap = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

/** The service's miner (private: the test reads how many templates it holds, nothing else). */
const minerOf = (t: TestApp) => (t.rt.services.patterns as unknown as { miner: TemplateMiner }).miner;

/**
 * Patterns under bad input (docs/api/patterns.md, "Lines the miner was not made for"): a
 * 64 KB message, a line of 10,000 tokens, binary garbage (escaped in JSON, invalid UTF-8 in
 * the body, raw bytes over syslog TCP) and a flood of a million distinct tokens are each
 * stored, readable and given a pattern, within the miner's caps and in bounded time and
 * heap.
 */
describe(`patterns under bad input (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  let syslog: SyslogListener;
  const T = Date.now() - 600_000;
  const ingest = (payload: string) =>
    t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload,
    });
  const send = async (records: object[]) => {
    const res = await ingest(records.map((r) => JSON.stringify(r)).join('\n'));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ accepted: records.length, rejected: 0 });
  };
  const search = async (query: string, pageSize = 100): Promise<{ total: number; events: Ev[] }> => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: {
        type: 'Search',
        params: { query, time_range: { preset: 'last_hour' }, page_size: pageSize },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results;
  };
  const pattern = async (id: string) => {
    const res = await t.as(t.adminToken, { method: 'GET', url: `/api/patterns/${id}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { template: string; count: number };
  };

  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
    syslog = await syslogOnLoopback(t);
  });
  afterAll(async () => {
    await syslog.close();
    await t.close();
  });

  it('stores 64 KB messages whole, each with a pattern; what lies past 4,096 characters is one variable', async () => {
    const head = Array.from({ length: 600 }, (_, i) => `field${i % 7} ${word(5)}`).join(' ');
    const big = (tail: string) => `${head} ${tail.repeat(65_536)}`.slice(0, 65_536);
    await send([
      { app: 'big', host: 'h', ts: T, message: big('a') },
      { app: 'big', host: 'h', ts: T + 1, message: big('b ') },
    ]);
    const { events } = await search('app:big');
    expect(events).toHaveLength(2);
    for (const e of events) {
      expect(e.message).toHaveLength(65_536);
      expect(e.pattern_id).toMatch(ID);
    }
    // The two differ only past the miner's 4,096 characters: one template.
    expect(events[0]?.pattern_id).toBe(events[1]?.pattern_id);
    const { template, count } = await pattern(events[0]?.pattern_id as string);
    expect(count).toBe(2);
    expect(template.length).toBeLessThanOrEqual(4_096 + 64);
  });

  it('stores a line of 10,000 tokens with a template of at most 64 tokens and one variable for the rest', async () => {
    const line = (k: number) =>
      Array.from({ length: 10_000 }, (_, i) => (i === 5_000 ? `v${k}x${k}` : `w${i % 50}z`)).join(' ');
    await send([
      { app: 'long', host: 'h', ts: T + 2, message: line(1) },
      { app: 'long', host: 'h', ts: T + 3, message: line(2) },
    ]);
    const { events } = await search('app:long');
    expect(events).toHaveLength(2);
    expect(events[0]?.message?.split(' ')).toHaveLength(10_000);
    expect(events[0]?.pattern_id).toMatch(ID);
    expect(events[0]?.pattern_id).toBe(events[1]?.pattern_id);
    const { template } = await pattern(events[0]?.pattern_id as string);
    expect(template.split(' ').length).toBeLessThanOrEqual(65);
    expect(template.endsWith('<*>')).toBe(true);
  });

  it('stores binary garbage escaped in JSON (NULs, control characters, lone surrogates), each with a pattern', async () => {
    const garbage = Array.from({ length: 20 }, (_, k) => {
      // Bytes read as Latin-1: every code 0-255, NULs among them, escaped by JSON.stringify.
      const bytes = randomBytes(512);
      bytes[0] = 0;
      bytes[100] = 0;
      return `garbage ${k} ${bytes.toString('latin1')}\ud800 \udfff`;
    });
    await send(garbage.map((message, k) => ({ app: 'binary', host: 'h', ts: T + 10 + k, message })));
    const { events } = await search('app:binary');
    expect(events).toHaveLength(20);
    for (const e of events) {
      expect(e.pattern_id, JSON.stringify(e.message)).toMatch(ID);
      // A lone surrogate is stored as U+FFFD, on every event store alike.
      expect(e.message?.endsWith('\ufffd \ufffd')).toBe(true);
      const one = await t.as(t.adminToken, { method: 'GET', url: `/api/events/${e.ev_id}` });
      expect(one.statusCode).toBe(200);
      expect(one.json().pattern_id).toBe(e.pattern_id);
    }
    // Each pattern is shown: its template written to the metadata store, a NUL as U+FFFD
    // (PostgreSQL's text holds none; one such row once failed every write after it).
    for (const id of new Set(events.map((e) => e.pattern_id as string))) {
      const shown = await eventually(`pattern ${id} shown`, async () => {
        const res = await t.as(t.adminToken, { method: 'GET', url: `/api/patterns/${id}` });
        return res.statusCode === 200 && (res.json() as { template: string });
      });
      expect(shown.template).not.toContain('\u0000');
    }
  });

  it('refuses a record that is not UTF-8 alone, naming why, and stores the valid one beside it', async () => {
    const records = Array.from({ length: 10 }, (_, k) =>
      Buffer.concat([
        Buffer.from(`{"app":"raw-json","host":"h","ts":${T + 40 + k},"message":"invalid `),
        Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x28, 0x8c, 0xbc, 0x80 + k]),
        Buffer.from(` utf8 ${k}"}\n`),
      ]),
    );
    const valid = Buffer.from(`{"app":"raw-json","host":"h","ts":${T + 50},"message":"valid beside them"}\n`);
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: Buffer.concat([...records, valid]),
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { accepted: number; rejected: number; errors: Array<{ detail: string }> };
    expect(body).toMatchObject({ accepted: 1, rejected: 10 });
    for (const e of body.errors) expect(e.detail).toMatch(/UTF-8/);
    const { events } = await search('app:raw-json');
    expect(events.map((e) => e.message)).toEqual(['valid beside them']);
    expect(events[0]?.pattern_id).toMatch(ID);
  });

  it('stores raw binary lines sent over syslog TCP, each with a pattern', async () => {
    const lines = Array.from({ length: 20 }, (_, k) => {
      const junk = randomBytes(300);
      // Newlines would split a frame; NULs and bytes that are not UTF-8 stay.
      for (let i = 0; i < junk.length; i++) if (junk[i] === 10 || junk[i] === 13) junk[i] = 0;
      junk[5] = 0;
      junk[6] = 0xff;
      return Buffer.concat([
        Buffer.from(`<13>Nov 21 10:00:${String(k).padStart(2, '0')} rawhost rawbin: junk ${k} `),
        junk,
      ]);
    });
    await new Promise<void>((resolve, reject) => {
      const socket = connect(syslog.port, '127.0.0.1', () => {
        socket.end(Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])), () => resolve());
      });
      socket.on('error', reject);
    });
    const got = await eventually('20 raw syslog lines stored', async () => {
      const res = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/query',
        payload: {
          type: 'Search',
          params: { query: 'app:rawbin', time_range: { preset: 'last_30_days' }, page_size: 100 },
        },
      });
      const events = res.json().results?.events as Ev[] | undefined;
      return events && events.length >= 20 ? events : undefined;
    });
    expect(got).toHaveLength(20);
    for (const e of got) expect(e.pattern_id, JSON.stringify(e.message)).toMatch(ID);
  });

  it('takes a million distinct tokens (200,000 events of 5 fresh words each) within its caps, in bounded time and heap', async () => {
    const total = 200_000;
    const batch = 500;
    const held = minerOf(t).size;
    const before = heap();
    const started = performance.now();
    let slowest = 0;
    for (let at = 0; at < total; at += batch) {
      const body = Array.from({ length: batch }, (_, i) =>
        JSON.stringify({
          app: 'flood',
          host: 'h',
          ts: T + 100 + ((at + i) % 60_000),
          // Every word fresh, or fresh words after shared leading ones (one group of the miner).
          message: `${i % 2 ? 'user login ' : ''}${word()} ${word()} ${word()} ${word()} ${word()}`,
        }),
      ).join('\n');
      const t0 = performance.now();
      const res = await ingest(body);
      slowest = Math.max(slowest, performance.now() - t0);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().accepted).toBe(batch);
      // Bounded: a request held seconds, or a run past a minute, is the miner failing its bound.
      expect(slowest, `a request of ${batch} took ${Math.round(slowest)} ms`).toBeLessThan(5_000);
      expect(performance.now() - started, `${at + batch} events`).toBeLessThan(90_000);
    }
    const grew = heap() - before;
    const miner = minerOf(t);
    expect(miner.size).toBeLessThanOrEqual(MAX_TEMPLATES);
    // 'flood' holds at most its cap.
    expect(miner.size - held).toBeLessThanOrEqual(MAX_TEMPLATES_PER_APP);
    // The miner's own budget is 64 MiB for 100,000 templates; the stored events are the store's.
    expect(grew / 2 ** 20, 'MiB of heap grown').toBeLessThan(64);
    const all = await search('app:flood', 1);
    expect(all.total).toBe(total);
    const unmined = await search('app:flood AND NOT _exists_:pattern_id', 1);
    expect(unmined.total).toBe(0);
    // The newest event's pattern is written and shown (a second of new templates is one write).
    const [newest] = (await search('app:flood', 1)).events;
    await eventually('the newest flood pattern shown', async () => {
      const res = await t.as(t.adminToken, { method: 'GET', url: `/api/patterns/${newest?.pattern_id}` });
      return res.statusCode === 200;
    });
  }, 150_000);

  /**
   * µs a message for a fresh miner taking 20,000 of `make`'s messages: the least of three
   * runs, each after a full collection, so a loaded machine's pauses fall on one run, not on
   * all. About 20-30 µs on a quiet machine; CI's full suite once took the least of two to
   * 114. The bound is what the miner's design promises, not its speed: a message is compared
   * with the at most `MAX_TEMPLATES_PER_GROUP` (50) templates of its group, never with all
   * 5,000 of its app, which would cost a hundred times more.
   */
  const leastPerMessage = (make: () => string) => {
    let least = Number.POSITIVE_INFINITY;
    for (let run = 0; run < 3; run++) {
      const messages = Array.from({ length: 20_000 }, make);
      const miner = new TemplateMiner();
      heap();
      const t0 = performance.now();
      for (const m of messages) miner.match('flood', m);
      least = Math.min(least, ((performance.now() - t0) * 1000) / messages.length);
      expect(miner.size).toBeLessThanOrEqual(MAX_TEMPLATES_PER_APP);
    }
    return least;
  };

  it('mines a message of fresh words in bounded time (≤ 250 µs a message, the ordinary goal being 5)', () => {
    const perMessage = leastPerMessage(() => `${word()} ${word()} ${word()} ${word()} ${word()}`);
    expect(perMessage, 'µs a message').toBeLessThan(250);
  });

  it('mines fresh words after shared leading words in bounded time (≤ 250 µs a message)', () => {
    const perMessage = leastPerMessage(() => `user login ${word()} ${word()} ${word()} ${word()} ${word()}`);
    expect(perMessage, 'µs a message').toBeLessThan(250);
  });
});
