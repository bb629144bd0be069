import type { FastifyReply, FastifyRequest } from 'fastify';

/** Most bytes of an unread body read and dropped after the answer, before the connection closes. */
export const UNREAD_BODY_MAX_BYTES = 32 * 1024 * 1024;
/** Longest wait for the rest of an unread body after the answer. */
export const UNREAD_BODY_MAX_MS = 10_000;

/**
 * For an answer that goes out before its request's body was read to the end (a 413 at the
 * body limit, a 415 at a file part, a 401 before any body is read): the rest of the body
 * is read and dropped, up to UNREAD_BODY_MAX_BYTES and UNREAD_BODY_MAX_MS, and the
 * connection stays open for the client's next request; past either bound it is closed.
 *
 * Closing at once (`Connection: close`, as Fastify answers a body parser's error) left the
 * client's bytes unread in the server's socket, so the kernel reset the connection, and a reset overtakes an answer not yet
 * read: a client still writing its body never saw its 413 (issue 54: three of four
 * concurrent oversized multipart bodies). Reading on without a bound would let one
 * client make the server read 300 MiB.
 */
export function drainUnreadBody(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw;
  // `complete` is Node's own: false until the body's last byte is parsed (inject's
  // requests have none, and nothing to drain).
  if (raw.complete !== false || raw.destroyed) return;
  const socket = raw.socket;
  // Fastify answers every body parser's error with `Connection: close`, and Node closes
  // after the answer when the request asked it to (`Connection: close`, HTTP/1.0): the
  // connection stays open while the rest arrives (Node's parser knows where the body
  // ends, so no byte of it is read as a next request), then the client closes it or
  // sends its next request.
  reply.removeHeader('connection');
  reply.raw.shouldKeepAlive = true;
  let drained = 0;
  const stop = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(stop, UNREAD_BODY_MAX_MS);
  timer.unref();
  const settle = () => clearTimeout(timer);
  raw.once('end', settle);
  raw.once('close', settle);
  // A parser or decompressor it was piped to has stopped reading: the bytes go nowhere now.
  raw.unpipe();
  raw.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > UNREAD_BODY_MAX_BYTES) stop();
  });
  raw.resume();
}
