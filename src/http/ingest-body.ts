import { PassThrough, type Readable, type Transform } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors/errors.js';

/**
 * Body handling for the ingest scope: JSON and NDJSON arrive as raw bytes (checked for
 * UTF-8 and split per record by the parsers), optionally gzip/deflate-compressed. The
 * size limit applies to the decompressed body. Any other media type is refused with a 415
 * whose detail is `takes` (which media types the scope's endpoints accept). `early` gives,
 * for a request, a check of its body's first bytes run while the body arrives.
 */
export function ingestBodies(
  app: FastifyInstance,
  types: string[] | RegExp,
  takes: string,
  early?: (request: FastifyRequest) => Promise<PrefixCheck | undefined>,
) {
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
  app.addHook('preParsing', async (request, _reply, payload) => {
    // The check first: the decompressor starts reading the request as it is made, and a
    // corrupt body's error while the check was awaited went to no listener (the request
    // was never answered).
    const check = await early?.(request);
    const body = decompressed(payload, request.headers['content-encoding']);
    return check ? checkedAsItArrives(body, check) : body;
  });
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
 * process: the decompressor keeps a listener for its whole life. Whatever ends the
 * decompressor early (its own error, `stopInflating`) lets go of the request, which is
 * then read to its end and dropped: destroying a request not yet wholly received closes
 * the connection before the answer is sent.
 */
function decoded(payload: Readable, decoder: Transform): Readable {
  const out = decoder as Transform & { receivedEncodedLength: number };
  out.receivedEncodedLength = 0;
  payload.on('data', (chunk: Buffer) => {
    out.receivedEncodedLength += chunk.length;
  });
  const letGo = () => {
    payload.unpipe(out);
    payload.resume();
  };
  payload.on('error', (error) => out.destroy(error));
  out.on('error', letGo);
  payload.pipe(out);
  STOP.set(out, () => {
    letGo();
    out.destroy();
  });
  return out;
}

/** How to stop a decompressor `decoded` made, and drop the rest of its request. */
const STOP = new WeakMap<Readable, () => void>();

/** A check of a body's first bytes; it throws the error to answer with. */
export type PrefixCheck = (prefix: Uint8Array) => void;

/** Where `checkedAsItArrives` checks: each time the body so far passes one of these sizes. */
const PREFIX_MARKS = [1 << 20, 4 << 20, 16 << 20];

/**
 * `source` as it arrives, with `check` run on everything so far each time it passes a mark
 * (1, 4 and 16 MiB). When the check throws, the body ends with its error, which the parser
 * answers as any other (a 413 or 400), and the rest is not inflated: a small compressed
 * body made to inflate to the limit is refused after its first megabyte.
 */
export function checkedAsItArrives(source: Readable, check: PrefixCheck): Readable {
  const out = new PassThrough();
  // Fastify's body limit and Content-Length check read the compressed length from here.
  Object.defineProperty(out, 'receivedEncodedLength', {
    get: () => (source as Readable & { receivedEncodedLength?: number }).receivedEncodedLength,
  });
  let kept: Buffer[] = [];
  let size = 0;
  let mark = 0;
  let failed = false;
  source.on('data', (chunk: Buffer) => {
    if (failed) return;
    if (mark < PREFIX_MARKS.length) {
      kept.push(chunk);
      size += chunk.length;
      if (size >= (PREFIX_MARKS[mark] as number)) {
        while (mark < PREFIX_MARKS.length && size >= (PREFIX_MARKS[mark] as number)) mark++;
        const prefix = Buffer.concat(kept, size);
        kept = mark < PREFIX_MARKS.length ? [prefix] : [];
        try {
          check(prefix);
        } catch (error) {
          failed = true;
          const stop = STOP.get(source);
          if (stop) stop();
          else source.resume();
          out.destroy(error as Error);
          return;
        }
      }
    }
    if (!out.write(chunk)) source.pause();
  });
  out.on('drain', () => source.resume());
  source.on('end', () => {
    if (!failed) out.end();
  });
  source.on('error', (error) => {
    if (!failed) out.destroy(error);
  });
  return out;
}
