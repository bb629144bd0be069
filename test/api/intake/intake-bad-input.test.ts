import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { storedEvents } from '../../helpers/events.js';
import { journalExport } from '../../helpers/journal.js';

/**
 * Requests an intake cannot take, over a real socket as a shipper or a fuzzer sends them
 * (issue 54): no body at all, and tokens in the path that are no tokens. Each gets a 4xx
 * in its protocol's error shape, nothing is stored, and the intake keeps serving.
 */
const JOURNAL = 'application/vnd.fdo.journal';

/** Every intake endpoint that takes a body. */
const INTAKES = [
  '/api/ingest',
  '/api/ingest/gelf',
  '/upload',
  '/api/ingest/journald/upload',
  '/v1/logs',
  '/api/ingest/otlp/v1/logs',
  '/loki/api/v1/push',
  '/api/ingest/es/_bulk',
  '/api/ingest/es/logs/_bulk',
  '/api/ingest/es/logs/_doc',
  '/api/ingest/es/logs/_doc/1',
  '/api/ingest/es/logs/_create/1',
];

describe(`bad input at every intake on ${BACKEND}`, () => {
  let t: TestApp;
  let base: string;
  let ingestToken: string;

  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
    ingestToken = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'bad-input' }))
      .secret_key;
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => t.close());

  /**
   * A request sent with its path exactly as given (node:http does not resolve `%2e%2e`,
   * as fetch would) and, without `body`, no body at all: no Content-Length, no
   * Transfer-Encoding, no Content-Type.
   */
  const send = (path: string, headers: Record<string, string>, body?: Buffer) =>
    new Promise<{ status: number; type: string; text: string }>((resolve, reject) => {
      const req = http.request(`${base}${path}`, { method: 'POST', headers });
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('latin1');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), text }),
        );
      });
      req.on('error', reject);
      req.end(body);
    });

  it('answers a request without a body with a 4xx on every intake, never a 500', async () => {
    const before = (await storedEvents(t)).length;
    const paths = [...INTAKES, `/api/ingest/journald/${ingestToken}/upload`];
    for (const path of paths) {
      const res = await send(path, { authorization: `Bearer ${ingestToken}` });
      expect(res.status, `${path}: ${res.text}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${path}: ${res.text}`).toBeLessThan(500);
    }
    // The journal upload answers it as an upload of no entries; /api/ingest as a body of no records.
    const journal = await send('/upload', { authorization: `Bearer ${ingestToken}` });
    expect(journal.status).toBe(400);
    expect(JSON.parse(journal.text)).toMatchObject({
      code: 'parse_error',
      detail: expect.stringMatching(/no journal entries/),
    });
    const ingest = await send('/api/ingest', { authorization: `Bearer ${ingestToken}` });
    expect(ingest.status).toBe(400);
    expect(JSON.parse(ingest.text)).toMatchObject({ code: expect.any(String), detail: expect.any(String) });
    expect((await storedEvents(t)).length).toBe(before);
  });

  it('answers odd path tokens of the journal upload with a 4xx, with a body or without', async () => {
    const before = (await storedEvents(t)).length;
    const body = journalExport([{ __REALTIME_TIMESTAMP: '1700000000000000', MESSAGE: 'odd token' }]);
    // Dot segments are resolved by the router (`/api/ingest/upload`, no route): asked all the same.
    const dots = ['%2e%2e', '%2e'];
    const odd = ['2147483648', '-1', '0', '%00', '%20', 'a%0Ab', '__proto__'];
    let accepted = 0;
    for (const token of [...dots, ...odd, 'x'.repeat(257)]) {
      const path = `/api/ingest/journald/${token}/upload`;
      for (const withBody of [false, true]) {
        const headers: Record<string, string> = withBody ? { 'content-type': JOURNAL } : {};
        const res = await send(path, headers, withBody ? body : undefined);
        const what = `${path.slice(0, 60)} ${withBody ? 'with' : 'without'} a body: ${res.text}`;
        // Not a token: 401 (a segment over the router's length: 414), in the API's shape.
        expect([401, 414], what).toContain(res.status);
        expect(JSON.parse(res.text), what).toMatchObject({
          code: expect.any(String),
          detail: expect.any(String),
        });
        // With a valid token in the header (which wins), the odd segment changes nothing.
        const authorised = await send(
          path,
          { ...headers, authorization: `Bearer ${ingestToken}` },
          withBody ? body : undefined,
        );
        const where = `${what} → ${authorised.text}`;
        if (authorised.status === 202) accepted++;
        if (odd.includes(token)) expect(authorised.status, where).toBe(withBody ? 202 : 400);
        else expect(authorised.status, where).toBeLessThan(500);
      }
    }
    // Each upload answered 202 stored its entry; nothing else was stored.
    expect(accepted).toBeGreaterThanOrEqual(odd.length);
    expect((await storedEvents(t)).length - before).toBe(accepted);
  });
});
