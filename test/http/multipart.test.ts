import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../helpers/app.js';

/**
 * multipart/form-data (docs/api/conventions.md) within the body limit like any body (issue 12): 413 at
 * the limit without reading the rest, file parts refused at once, malformed bodies 400.
 */
const LIMIT = 256 * 1024;
const MiB = 1024 * 1024;

describe(`multipart bodies on ${BACKEND}`, () => {
  let t: TestApp;
  let url: string;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_BODY_LIMIT: String(LIMIT) });
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => t.close());

  /**
   * Streams a multipart body of `head` then up to `total` bytes (chunked, no
   * Content-Length), stopping once the answer arrives: how far it got, and the answer.
   */
  const flood = (head: string, total: number) =>
    new Promise<{ status: number; body: Record<string, unknown>; sent: number }>((resolve, reject) => {
      let sent = 0;
      let answered = false;
      const req = http.request(`${url}/api/tasks`, {
        method: 'POST',
        headers: {
          authorization: `token ${t.adminToken}`,
          'content-type': 'multipart/form-data; boundary=XyZ',
        },
      });
      req.on('response', (res) => {
        answered = true;
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
        });
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), sent });
        });
      });
      req.on('error', (err) => {
        if (!answered) reject(err);
      });
      req.write(head);
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (!answered && sent < total) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (!answered) req.end('\r\n--XyZ--\r\n');
      };
      pump();
    });

  const multipart = (payload: string, contentType = 'multipart/form-data; boundary=XyZ') =>
    t.as(t.adminToken, {
      method: 'POST',
      url: '/api/tasks',
      headers: { 'content-type': contentType },
      payload,
    });

  it('answers 413 at the body limit without reading the rest of the body', async () => {
    const res = await flood('--XyZ\r\nContent-Disposition: form-data; name="title"\r\n\r\n', 200 * MiB);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large', detail: 'Request body is too large.' });
    // The answer came at the limit, not after 200 MiB.
    expect(res.sent).toBeLessThan(20 * MiB);
  }, 20_000);

  it('answers 413 from Content-Length alone, as for JSON', async () => {
    const big = `--XyZ\r\nContent-Disposition: form-data; name="title"\r\n\r\n${'a'.repeat(LIMIT)}\r\n--XyZ--\r\n`;
    const res = await multipart(big);
    expect(res.statusCode).toBe(413);
    const json = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/tasks',
      payload: { title: 'a'.repeat(LIMIT) },
    });
    expect(json.statusCode).toBe(413);
    expect(res.json()).toEqual(json.json());
  });

  it('refuses a file part as soon as it starts', async () => {
    const res = await flood(
      '--XyZ\r\nContent-Disposition: form-data; name="title"\r\n\r\nhello\r\n' +
        '--XyZ\r\nContent-Disposition: form-data; name="upload"; filename="a.bin"\r\n' +
        'Content-Type: application/octet-stream\r\n\r\n',
      100 * MiB,
    );
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('unsupported_media_type');
    expect(res.sent).toBeLessThan(10 * MiB);
    // Small ones too, whatever their size.
    const small = await multipart(
      '--XyZ\r\nContent-Disposition: form-data; name="f"; filename="x.txt"\r\n\r\nhi\r\n--XyZ--\r\n',
    );
    expect(small.statusCode).toBe(415);
  }, 20_000);

  it.each([
    [
      'no boundary',
      'multipart/form-data',
      '--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--XyZ--\r\n',
    ],
    ['unterminated', undefined, '--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated'],
    ['not form-data', undefined, '--XyZ\r\nContent-Type: text/plain\r\n\r\nb\r\n--XyZ--\r\n'],
    ['no field name', undefined, '--XyZ\r\nContent-Disposition: form-data\r\n\r\nb\r\n--XyZ--\r\n'],
    ['garbage header', undefined, '--XyZ\r\nthis is not a header\r\n\r\nb\r\n--XyZ--\r\n'],
    ['no delimiter at all', undefined, 'just some text'],
    [
      'bad JSON field',
      undefined,
      '--XyZ\r\nContent-Disposition: form-data; name="ev_ids"\r\nContent-Type: application/json\r\n\r\n[1,\r\n--XyZ--\r\n',
    ],
  ])('answers 400 in the API shape for a malformed body: %s', async (_name, type, payload) => {
    const res = await multipart(payload, type);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ code: expect.any(String), detail: expect.any(String) });
  });

  it('still reads fields: repeated names, JSON text, a preamble, quoted names', async () => {
    const res = await multipart(
      'preamble to ignore\r\n' +
        '--XyZ\r\nContent-Disposition: form-data; name="title"\r\n\r\nFrom raw multipart\r\n' +
        '--XyZ\r\nContent-Disposition: form-data; name="ev_ids"\r\n\r\n["a","b"]\r\n' +
        '--XyZ\r\ncontent-disposition: form-data; name="description"\r\n\r\nline 1\r\nline 2 \u00e9\r\n' +
        '--XyZ--\r\nepilogue',
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      title: 'From raw multipart',
      ev_ids: ['a', 'b'],
      description: 'line 1\r\nline 2 \u00e9',
    });
    const fd = new FormData();
    fd.append('title', 'From FormData');
    const viaForm = await t.as(t.adminToken, { method: 'POST', url: '/api/tasks', payload: fd });
    expect(viaForm.statusCode, viaForm.body).toBe(200);
  });
});
