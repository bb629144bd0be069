import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from '../../../src/errors/error-handler.js';
import { ingestBodies } from '../../../src/http/ingest-body.js';

/**
 * The intakes' body handling (src/http/ingest-body.ts) on a bare Fastify app: a body that
 * is not what its Content-Encoding says, sent whole at once, while the route's check of
 * the first bytes is still being made ready (OTLP's loads its schemas on first use). The
 * decompressor failed before anyone listened and the request was never answered: a fresh
 * server's first protobuf request with a corrupt gzip body hung (found by the fuzz test).
 */
describe('a compressed intake body that is not what it claims', () => {
  const app = Fastify();
  beforeAll(async () => {
    await app.register(async (scope) => {
      ingestBodies(scope, ['application/x-protobuf'], 'takes application/x-protobuf', async () => {
        await sleep(30);
        return () => {};
      });
      scope.setErrorHandler(errorHandler);
      scope.post('/in', async (request) => ({ bytes: (request.body as Buffer).length }));
    });
  });
  afterAll(() => app.close());

  for (const [what, payload, encoding] of [
    ['0xff bytes said to be gzip', Buffer.alloc(30, 0xff), 'gzip'],
    ['text said to be deflate', Buffer.from('not deflate at all'), 'deflate'],
  ] as const) {
    it(`answers ${what} with a 400 while the check is awaited`, async () => {
      const answer = app.inject({
        method: 'POST',
        url: '/in',
        headers: { 'content-type': 'application/x-protobuf', 'content-encoding': encoding },
        payload,
      });
      const res = await Promise.race([answer, sleep(3000).then(() => null)]);
      expect(res, 'answered within 3 s').not.toBeNull();
      expect(res?.statusCode).toBe(400);
      expect(res?.json()).toMatchObject({ code: 'bad_request' });
    });
  }
});
