import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

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

  /**
   * One raw connection that writes a whole multipart body of `total` bytes (with its
   * Content-Length, or chunked) before it reads anything, as many simple clients do, then
   * reads: the status line it got, or how the connection ended.
   */
  const writeThenRead = (
    total: number,
    chunked: boolean,
    extraHeaders = '',
    type = 'multipart/form-data; boundary=XyZ',
  ) =>
    new Promise<string>((resolve) => {
      const { port } = new URL(url);
      const socket = net.connect(Number(port), '127.0.0.1');
      socket.pause();
      let got = '';
      const done = (what: string) => {
        socket.destroy();
        resolve(what);
      };
      socket.on('data', (c: Buffer) => {
        got += c.toString('latin1');
        if (got.includes('\r\n')) done(got.slice(0, got.indexOf('\r\n')));
      });
      socket.on('error', (err) => done(`${err.message}, having read ${JSON.stringify(got)}`));
      socket.on('end', () => done(`closed, having read ${JSON.stringify(got)}`));
      const frame = (b: Buffer) =>
        chunked ? Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]) : b;
      socket.write(
        `POST /api/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: token ${t.adminToken}\r\n` +
          `Content-Type: ${type}\r\n${extraHeaders}` +
          `${chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${total}`}\r\n\r\n`,
      );
      const head = Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="title"\r\n\r\n');
      socket.write(frame(head));
      const chunk = Buffer.alloc(64 * 1024, 'a');
      let sent = head.length;
      const pump = () => {
        while (sent < total && !socket.destroyed) {
          const n = Math.min(chunk.length, total - sent);
          sent += n;
          if (!socket.write(frame(chunk.subarray(0, n)))) return void socket.once('drain', pump);
        }
        // All written (or refused on the way): now read.
        socket.write(chunked ? '0\r\n\r\n' : '', () => socket.resume());
      };
      pump();
    });

  it('answers each of four concurrent oversized bodies with its 413, even to clients that read only after writing', async () => {
    // Issue 54: the answer was followed at once by a close with the body's bytes unread,
    // the kernel reset the connection, and a client still writing never read its 413.
    for (const chunked of [false, true]) {
      // Two of them ask the server to close after its answer (Node then closed at once).
      const answers = await Promise.all(
        [1, 2, 3, 4].map((i) => writeThenRead(8 * MiB, chunked, i > 2 ? 'Connection: close\r\n' : '')),
      );
      expect(answers, chunked ? 'chunked' : 'Content-Length').toEqual(
        Array(4).fill('HTTP/1.1 413 Payload Too Large'),
      );
    }
    // Fastify's own parsers' refusals the same: a JSON body over the limit.
    const json = await Promise.all([1, 2].map(() => writeThenRead(8 * MiB, false, '', 'application/json')));
    expect(json).toEqual(Array(2).fill('HTTP/1.1 413 Payload Too Large'));
    // The server keeps serving.
    const res = await multipart(
      '--XyZ\r\nContent-Disposition: form-data; name="title"\r\n\r\nafter\r\n--XyZ--\r\n',
    );
    expect(res.statusCode, res.body).toBe(200);
  }, 30_000);

  it('drains the rest of a refused body within a bound, then closes the connection', async () => {
    // A client that reads its answer yet goes on sending 200 MiB.
    const { port } = new URL(url);
    const socket = net.connect(Number(port), '127.0.0.1');
    let got = '';
    let sent = 0;
    socket.on('data', (c: Buffer) => {
      got += c.toString('latin1');
    });
    const ended = new Promise<void>((resolve) => {
      socket.on('error', () => resolve());
      socket.on('close', () => resolve());
    });
    socket.write(
      `POST /api/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: token ${t.adminToken}\r\n` +
        `Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: ${200 * MiB}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(256 * 1024, 'a');
    const pump = () => {
      while (sent < 200 * MiB && !socket.destroyed) {
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
    };
    pump();
    await ended;
    expect(got.slice(0, got.indexOf('\r\n'))).toBe('HTTP/1.1 413 Payload Too Large');
    // Closed once 32 MiB past the answer were drained, long before 200 MiB.
    expect(sent).toBeLessThan(64 * MiB);
  }, 30_000);

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
