import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { storedEvents } from '../../helpers/events.js';
import { journalExport } from '../../helpers/journal.js';

// The journal upload through HTTP as any client sends it: both paths, both ways to give
// the token, and malformed streams.

const TYPE = 'application/vnd.fdo.journal';

describe(`journal upload (/upload, /api/ingest/journald) on ${BACKEND}`, () => {
  let t: TestApp;
  let ingestToken: string;
  const nowUs = () => String(BigInt(Date.now()) * 1000n);

  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
    ingestToken = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'journal' }))
      .secret_key;
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (url: string, payload: Buffer, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url, payload, headers: { 'content-type': TYPE, ...headers } });
  const withMarker = async (marker: string) =>
    (await storedEvents(t, (e) => (e.message ?? '').includes(marker))).map((e) => e.message);
  const entry = (message: string) => ({
    __REALTIME_TIMESTAMP: nowUs(),
    _HOSTNAME: 'h1',
    SYSLOG_IDENTIFIER: 'app',
    MESSAGE: message,
  });

  it('takes the token in the Authorization header on /upload and /api/ingest/journald/upload, and answers 202 OK.', async () => {
    for (const url of ['/upload', '/api/ingest/journald/upload']) {
      const marker = `hdr${url.length}`;
      const res = await post(url, journalExport([entry(`${marker} a`), entry(`${marker} b`)]), {
        authorization: `Bearer ${ingestToken}`,
      });
      expect(res.statusCode, res.body).toBe(202);
      expect(res.body).toBe('OK.\n');
      expect(await withMarker(marker)).toEqual([`${marker} a`, `${marker} b`]);
    }
  });

  it('takes the token as the path segment before /upload, and a gzip body', async () => {
    const res = await post(
      `/api/ingest/journald/${ingestToken}/upload`,
      gzipSync(journalExport([entry('pathtok one')])),
      {
        'content-encoding': 'gzip',
      },
    );
    expect(res.statusCode, res.body).toBe(202);
    expect(await withMarker('pathtok')).toEqual(['pathtok one']);
  });

  it("runs the pipelines on journal entries: a PAM line's rhost fills src_ip when an address, src_host otherwise", async () => {
    const pam = (rhost: string) => ({
      ...entry(
        `pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=${rhost}  user=root`,
      ),
      SYSLOG_IDENTIFIER: 'sshd',
      PRIORITY: '5',
    });
    const res = await post(
      '/upload',
      journalExport([pam('198.51.100.7'), pam('2001:db8::7'), pam('gw.example.net')]),
      {
        authorization: `Bearer ${ingestToken}`,
      },
    );
    expect(res.statusCode, res.body).toBe(202);
    const events = await storedEvents(t, (e) =>
      (e.message ?? '').includes('authentication failure; logname'),
    );
    expect(events.map((e) => [e.action, e.user, e.src_ip, e.fields.src_host ?? null])).toEqual([
      ['auth_failure', 'root', '198.51.100.7', null],
      ['auth_failure', 'root', '2001:db8::7', null],
      ['auth_failure', 'root', null, 'gw.example.net'],
    ]);
  });

  it("takes the app from _COMM when an entry has no SYSLOG_IDENTIFIER (a service's stdout)", async () => {
    const { SYSLOG_IDENTIFIER: _, ...noIdentifier } = entry('comm-only line');
    const res = await post('/upload', journalExport([{ ...noIdentifier, _COMM: 'nginx' }]), {
      authorization: `Bearer ${ingestToken}`,
    });
    expect(res.statusCode, res.body).toBe(202);
    const [event] = await storedEvents(t, (e) => e.message === 'comm-only line');
    expect(event?.app).toBe('nginx');
  });

  it('refuses a wrong or missing token with 401 in the API shape, storing nothing', async () => {
    const body = journalExport([entry('unauthorised')]);
    for (const res of [
      await post('/api/ingest/journald/ls-not-a-token/upload', body),
      await post('/upload', body),
      await post('/upload', body, { authorization: 'Bearer nope' }),
    ]) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: expect.any(String), detail: expect.any(String) });
    }
    expect(await withMarker('unauthorised')).toEqual([]);
  });

  it('refuses another media type with 415 and an empty stream with 400', async () => {
    const auth = { authorization: `Bearer ${ingestToken}` };
    const json = await post('/upload', Buffer.from('{"message":"x"}'), {
      ...auth,
      'content-type': 'application/json',
    });
    expect(json.statusCode).toBe(415);
    expect(json.json().detail).toContain(TYPE);
    const empty = await post('/upload', Buffer.from('\n\n'), auth);
    expect(empty.statusCode).toBe(400);
  });

  const lengthOf = (n: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(n);
    return b;
  };
  const malformed: Array<[string, Buffer]> = [
    [
      'a length prefix past the end',
      Buffer.concat([Buffer.from('MESSAGE\n'), lengthOf(500n), Buffer.from('bad1 short\n\n')]),
    ],
    ['a field without =', Buffer.from('MESSAGE=bad2 broken\nthis line has no equals sign\n\n')],
    [
      '1 GiB of one field',
      Buffer.concat([Buffer.from('MESSAGE\n'), lengthOf(1n << 30n), Buffer.from('bad3 ')]),
    ],
    [
      'a corrupt gzip body',
      Buffer.concat([gzipSync(Buffer.from('MESSAGE=bad4\n\n')).subarray(0, 12), Buffer.alloc(20, 7)]),
    ],
  ];
  for (const [what, broken] of malformed) {
    it(`refuses ${what} with 400: the entries before it stored, nothing from it on`, async () => {
      const marker = `mal${what.length}`;
      const body = what.includes('gzip')
        ? broken
        : Buffer.concat([journalExport([entry(`${marker} before`)]), broken]);
      const started = Date.now();
      const res = await post('/upload', body, {
        authorization: `Bearer ${ingestToken}`,
        ...(what.includes('gzip') ? { 'content-encoding': 'gzip' } : {}),
      });
      expect(Date.now() - started).toBeLessThan(2000);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ code: 'parse_error' });
      const stored = await storedEvents(
        t,
        (e) => /\bbad\d\b/.test(e.message ?? '') || (e.message ?? '').includes(marker),
      );
      expect(stored.map((e) => e.message)).toEqual(what.includes('gzip') ? [] : [`${marker} before`]);
      // The server keeps serving.
      expect((await t.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
    });
  }
});
