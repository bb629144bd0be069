import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../../src/core/event.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { messageOf, storedEvents } from '../../helpers/events.js';

/**
 * Issue 12: one request cannot take the service down. A record cap (413, nothing stored),
 * large bodies stored in pieces while the server keeps answering, and a body that turns
 * out not to be JSON late in a large array refused whole.
 */
const CAP = 300_000;

interface Answer {
  code?: string;
  detail?: string;
  error?: { type: string };
  accepted?: number;
  rejected?: number;
  errors: Array<{ index: number; detail: string }>;
}
const answer = async (res: Response) => (await res.json()) as Answer;

describe(`ingest limits on ${BACKEND}`, () => {
  let t: TestApp;
  let url: string;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_INGEST_MAX_RECORDS: String(CAP), LOGSCOPE_INGEST_BATCH_MS: '5' });
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => t.close());

  const post = (path: string, body: string | Buffer, type: string) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `token ${t.adminToken}`, 'content-type': type },
      body,
    });
  const countOf = async (keep: (e: StoredEvent) => boolean) => (await storedEvents(t, keep)).length;
  const lines = (n: number, line: string) => `${line}\n`.repeat(n);

  it('refuses more records than ingestMaxRecords with 413, storing nothing (NDJSON, JSON, ES bulk)', async () => {
    const nd = await post('/api/ingest', lines(CAP + 1, '{"message":"over-cap-nd"}'), 'application/x-ndjson');
    expect(nd.status).toBe(413);
    const body = await answer(nd);
    expect(body).toMatchObject({ code: 'too_many_records' });
    expect(body.detail).toMatch(/300000 records/);

    const arr = `[${Array.from({ length: CAP + 1 }, () => '{"message":"over-cap-json"}').join(',')}]`;
    const json = await post('/api/ingest', arr, 'application/json');
    expect(json.status).toBe(413);
    expect((await answer(json)).code).toBe('too_many_records');

    const es = await post(
      '/api/ingest/es/_bulk',
      lines(CAP + 1, '{"index":{}}\n{"message":"over-cap-es"}'),
      'application/x-ndjson',
    );
    expect(es.status).toBe(413);
    expect((await answer(es)).error?.type).toBe('content_too_long_exception');

    expect(await countOf((e) => messageOf(e).startsWith('over-cap-'))).toBe(0);
  });

  it('numbers records and lines across pieces of a large NDJSON body', async () => {
    // More than one piece (5,000 records): the bad lines sit in later pieces.
    const rows = Array.from({ length: 12_000 }, (_, i) => `{"message":"pieces ${i}"}`);
    rows[7001] = '{broken';
    rows.splice(9000, 0, '', '   ');
    rows[11_000] = '42';
    const res = await post('/api/ingest', `${rows.join('\n')}\n`, 'application/x-ndjson');
    expect(res.status).toBe(200);
    const out = await answer(res);
    expect(out).toMatchObject({ accepted: 11_998, rejected: 2 });
    expect(out.errors.map((e) => e.index)).toEqual([7001, 10_998]);
    expect(out.errors[0]?.detail).toMatch(/^line 7002: invalid JSON/);
    expect(await countOf((e) => messageOf(e).startsWith('pieces '))).toBe(11_998);
    // 12,000 records in three pieces: 12 s alone on a slow day, past 20 s under CI's load.
  }, 60_000);

  it('refuses a large JSON array whose last element is not JSON, storing none of it', async () => {
    // ~2.5 MiB: several pieces; the broken element is in the last one.
    const pad = 'x'.repeat(1000);
    const elements = Array.from({ length: 2500 }, (_, i) => `{"message":"late-bad ${i}","pad":"${pad}"}`);
    elements[2499] = '{"message": "late-bad", nope}';
    const res = await post('/api/ingest', `[${elements.join(',')}]`, 'application/json');
    expect(res.status).toBe(400);
    expect((await answer(res)).code).toBe('parse_error');
    const trailing = await post('/api/ingest', `[${elements.slice(0, 2000).join(',')},]`, 'application/json');
    expect(trailing.status).toBe(400);
    expect(await countOf((e) => messageOf(e).startsWith('late-bad'))).toBe(0);
    // The same array without the broken element is stored whole, in order.
    const good = await post('/api/ingest', `[${elements.slice(0, 2499).join(',')}]`, 'application/json');
    expect(good.status).toBe(200);
    expect(await good.json()).toMatchObject({ accepted: 2499, rejected: 0 });
    expect(await countOf((e) => messageOf(e).startsWith('late-bad'))).toBe(2499);
    // Three arrays of 2.5 MiB stored and counted: under a full suite's load past 20 s.
  }, 60_000);

  // Last: the others count their events by reading every stored one, and this stores 300,000.
  it('stores a request of exactly the cap in pieces while /api/health keeps answering', async () => {
    const body = lines(CAP, '{}');
    // In-process server: a blocked event loop delays the polls themselves, so measure
    // the longest gap between two answers rather than each answer's latency.
    const answers: number[] = [];
    let done = false;
    const polling = (async () => {
      while (!done) {
        const res = await fetch(`${url}/api/health`);
        expect(res.status).toBe(200);
        await res.arrayBuffer();
        answers.push(performance.now());
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const started = performance.now();
    const res = await post('/api/ingest', body, 'application/x-ndjson');
    const finished = performance.now();
    done = true;
    await polling;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ accepted: CAP, rejected: 0, errors: [] });
    const during = [started, ...answers.filter((a) => a > started && a < finished), finished];
    const gaps = during.slice(1).map((a, i) => a - (during[i] as number));
    expect(during.length).toBeGreaterThan(4);
    expect(Math.max(...gaps)).toBeLessThan(1000);
  }, 60_000);
});
