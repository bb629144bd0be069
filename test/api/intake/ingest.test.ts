import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { messageOf, storedEvents } from '../../helpers/events.js';

describe(`POST /api/ingest on ${BACKEND}`, () => {
  let t: TestApp;
  let ingestToken: string;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
    ingestToken = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'shipper' }))
      .secret_key;
  });
  afterAll(() => t.close());

  const send = (
    payload: string | Buffer | object,
    headers: Record<string, string> = {},
    token = ingestToken,
  ) => t.as(token, { method: 'POST', url: '/api/ingest', payload, headers });

  it('stores a JSON object, answering only once it is queryable', async () => {
    const res = await send({
      message: 'hello object',
      host: 'web-1',
      level: 'WARN',
      '@timestamp': '2026-11-20T10:00:00Z',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ accepted: 1, rejected: 0, errors: [] });
    const [row] = await storedEvents(t, (e) => e.message === 'hello object');
    expect(row).toMatchObject({ host: 'web-1', severity: 'warning' });
    expect(new Date(row?.ts as number).toISOString()).toBe('2026-11-20T10:00:00.000Z');
  });

  it('stores a JSON array and NDJSON, rejecting malformed records alone', async () => {
    const arr = await send([{ msg: 'arr 1' }, 'not an object', { log: 'arr 2' }, null, [1]]);
    expect(arr.json()).toMatchObject({ accepted: 2, rejected: 3 });
    expect(arr.json().errors.map((e: { index: number }) => e.index)).toEqual([1, 3, 4]);
    const nd = await send('{"message":"nd 1"}\n{broken\n\n{"message":"nd 2"}\r\n42\n', {
      'content-type': 'application/x-ndjson',
    });
    expect(nd.statusCode).toBe(200);
    expect(nd.json()).toMatchObject({ accepted: 2, rejected: 2 });
    expect(nd.json().errors[0]).toMatchObject({ index: 1 });
    expect(nd.json().errors[0].detail).toMatch(/line 2/);
    const rows = await storedEvents(t, (e) => ['arr 1', 'arr 2', 'nd 1', 'nd 2'].includes(messageOf(e)));
    expect(rows).toHaveLength(4);
  });

  it('accepts gzip-compressed bodies', async () => {
    const body = gzipSync(Buffer.from('{"message":"zipped 1"}\n{"message":"zipped 2"}\n'));
    const res = await send(body, { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' });
    expect(res.json()).toMatchObject({ accepted: 2, rejected: 0 });
    expect(await storedEvents(t, (e) => messageOf(e).startsWith('zipped'))).toHaveLength(2);
    const bad = await send(Buffer.from('not gzip'), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    expect(bad.statusCode).toBe(400);
    const br = await send('{}', { 'content-type': 'application/json', 'content-encoding': 'br' });
    expect(br.statusCode).toBe(415);
  });

  it('keeps receive time for an unparseable timestamp and says so in a field', async () => {
    const before = Date.now();
    const res = await send({ message: 'bad time', timestamp: 'yesterday-ish' });
    expect(res.json().accepted).toBe(1);
    const [row] = await storedEvents(t, (e) => e.message === 'bad time');
    const tsMs = new Date(row?.ts as number).getTime();
    expect(tsMs).toBeGreaterThanOrEqual(before - 5);
    expect(JSON.stringify(row?.fields)).toContain('yesterday-ish');
  });

  it('truncates a 10 MB message visibly and stores the rest of the request', async () => {
    const huge = 'x'.repeat(10 * 1024 * 1024);
    const res = await send(`{"message":"${huge}"}\n{"message":"small neighbour"}\n`, {
      'content-type': 'application/x-ndjson',
    });
    expect(res.json()).toMatchObject({ accepted: 2, rejected: 0 });
    const [row] = await storedEvents(t, (e) => messageOf(e).startsWith('xxxx'));
    expect(String(row?.message).length).toBeLessThanOrEqual(65536);
    expect(JSON.stringify(row?.fields)).toContain('_truncated');
    expect(await storedEvents(t, (e) => e.message === 'small neighbour')).toHaveLength(1);
  });

  it('rejects a line of invalid UTF-8 alone', async () => {
    const body = Buffer.concat([
      Buffer.from('{"message":"utf ok 1"}\n{"message":"bad '),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}\n{"message":"utf ok 2"}\n'),
    ]);
    const res = await send(body, { 'content-type': 'application/x-ndjson' });
    expect(res.json()).toMatchObject({ accepted: 2, rejected: 1 });
    expect(res.json().errors[0].detail).toMatch(/UTF-8/);
    const json = await send(Buffer.from([0x7b, 0xff, 0x7d]), { 'content-type': 'application/json' });
    expect(json.statusCode).toBe(400);
    expect(json.json().code).toBe('invalid_encoding');
  });

  it('answers 400 for an empty body, 415 for text/plain, 401/403 for bad tokens', async () => {
    expect((await send('', { 'content-type': 'application/json' })).statusCode).toBe(400);
    expect((await send('\n\n', { 'content-type': 'application/x-ndjson' })).statusCode).toBe(400);
    const plain = await send('{"message":"x"}', { 'content-type': 'text/plain; charset=utf-8' });
    expect(plain.statusCode).toBe(415);
    expect(plain.json()).toMatchObject({ code: 'unsupported_media_type' });
    expect(plain.json().detail).toBe(
      'Unsupported media type text/plain; /api/ingest takes application/json, application/x-ndjson, ' +
        'application/ndjson, application/jsonlines, application/x-jsonlines.',
    );
    const form = await send('message=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.statusCode).toBe(415);
    expect(form.json().detail).toMatch(
      /application\/x-www-form-urlencoded; \/api\/ingest takes application\/json/,
    );
    expect((await send({ message: 'x' }, {}, 'lsnope_nope')).statusCode).toBe(401);
    const noToken = await t.app.inject({ method: 'POST', url: '/api/ingest', payload: { message: 'x' } });
    expect(noToken.statusCode).toBe(401);
    // A USER token may ingest too; an INGEST token may not read.
    expect((await send({ message: 'by user token' }, {}, t.adminToken)).json().accepted).toBe(1);
    const [row] = await storedEvents(t, (e) => e.message === 'by user token');
    const read = await t.as(ingestToken, { method: 'GET', url: `/api/events/${row?.ev_id}` });
    expect(read.statusCode).toBe(403);
  });

  it('serves stored events with raw, timestamps and (empty) triggers', async () => {
    await send({
      message: 'full event',
      host: 'db-1',
      http: { method: 'GET', status: 200 },
      ts: 1795000000123,
    });
    const [row] = await storedEvents(t, (e) => e.message === 'full event');
    const id = row?.ev_id as string;
    const ev = (await t.as(t.adminToken, { method: 'GET', url: `/api/events/${id}` })).json();
    expect(ev).toMatchObject({
      ev_id: id,
      message: 'full event',
      host: 'db-1',
      'http.method': 'GET',
      ts: 1795000000.123,
    });
    expect(ev.raw).toMatchObject({
      message: 'full event',
      host: 'db-1',
      http: { method: 'GET', status: 200 },
    });
    const times = (await t.as(t.adminToken, { method: 'GET', url: `/api/events/${id}/timestamps` })).json();
    expect(times.event_time).toBe(1795000000.123);
    expect(times.received_time).toBeLessThanOrEqual(times.stored_time);
    expect(times.stored_time).toBeLessThanOrEqual(Date.now() / 1000);
    const trig = (await t.as(t.adminToken, { method: 'GET', url: `/api/events/${id}/triggers` })).json();
    expect(trig).toEqual({ ev_id: id, triggers: [] });
    for (const path of ['', '/timestamps', '/triggers']) {
      const missing = await t.as(t.adminToken, {
        method: 'GET',
        url: `/api/events/01KAAAAAAAAAAAAAAAAAAAAAAA${path}`,
      });
      expect(missing.statusCode).toBe(404);
      const garbage = await t.as(t.adminToken, { method: 'GET', url: `/api/events/not-an-id${path}` });
      expect(garbage.statusCode).toBe(404);
    }
  });
});
