import { pipeline, type Readable, type Transform } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors/errors.js';

/**
 * Body handling for the ingest scope: JSON and NDJSON arrive as raw bytes (checked for
 * UTF-8 and split per record by the parsers), optionally gzip/deflate-compressed. The
 * size limit applies to the decompressed body. Any other media type is refused with a 415
 * whose detail is `takes` (which media types the scope's endpoints accept).
 */
export function ingestBodies(app: FastifyInstance, types: string[] | RegExp, takes: string) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(types, { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  // Any other media type: a 415 that says which ones this endpoint takes.
  app.addContentTypeParser('*', (request, _payload, done) => {
    const sent =
      String(request.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim() || '(none)';
    done(new AppError(415, 'unsupported_media_type', `Unsupported media type ${sent}; ${takes}.`), undefined);
  });
  app.addHook('preParsing', async (request, _reply, payload) =>
    decompressed(payload, request.headers['content-encoding']),
  );
  // A request without a body (neither Content-Length nor Transfer-Encoding) reaches no
  // parser, and handlers read `request.body` as bytes: undefined was a 500 (issue 54).
  // It is an empty body, as HTTP says, answered as each endpoint answers one.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && BODY_METHODS.has(request.method)) request.body = Buffer.alloc(0);
  });
}

/** Methods whose requests the intakes read a body of. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * A request body as sent, decompressed when its Content-Encoding says gzip or deflate;
 * another encoding is a 415. Every intake reads its body through here.
 */
export function decompressed(payload: Readable, contentEncoding: string | undefined): Readable {
  const encoding = String(contentEncoding ?? 'identity').toLowerCase();
  switch (encoding) {
    case 'identity':
      return payload;
    case 'gzip':
    case 'x-gzip':
      return decoded(payload, createGunzip());
    case 'deflate':
      return decoded(payload, createInflate());
    default:
      throw new AppError(
        415,
        'unsupported_media_type',
        `Unsupported Content-Encoding "${encoding}": use gzip or deflate.`,
      );
  }
}

/**
 * Pipes through a decompressor. Fastify compares Content-Length with
 * `receivedEncodedLength` when the stream carries it, so count the compressed bytes.
 * Fastify stops listening once it has answered (a 413 for a body that inflates past the
 * limit), and a corrupt byte after that must not be an unhandled 'error' that ends the
 * process: `pipeline` destroys both streams on the first error of either, and the
 * decompressor keeps a listener of its own. While Fastify reads, it sees the same error
 * (a 400, error-handler.ts).
 */
function decoded(payload: Readable, decoder: Transform): Readable {
  const out = decoder as Transform & { receivedEncodedLength: number };
  out.receivedEncodedLength = 0;
  payload.on('data', (chunk: Buffer) => {
    out.receivedEncodedLength += chunk.length;
  });
  pipeline(payload, out, () => undefined);
  // pipeline lets go of its listeners once it is done, and the inflater can still fail
  // after that (flushing a truncated body): a listener for the stream's whole life.
  out.on('error', () => undefined);
  return out;
}
