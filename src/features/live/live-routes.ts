import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import { caller } from '../../http/plugins/auth.js';
import { logRequest } from '../../http/request-log.js';
import type { LiveHub } from './live-hub.js';

/** Largest websocket frame the server reads at all (bigger: closed 1009 by ws). */
const MAX_FRAME_BYTES = 1024 * 1024;

/** How long clients have on shutdown to answer the 1001 close before they are cut. */
const CLOSE_GRACE_MS = 1000;

/**
 * `/ws/live-updates`: the upgrade is authenticated in onRequest like every route (header
 * or `?token=`), so a missing or bad token is refused with 401 before any frame.
 */
export async function liveRoutes(app: FastifyInstance, opts: { hub: LiveHub }) {
  await app.register(websocket, {
    options: { maxPayload: MAX_FRAME_BYTES },
    // On shutdown every client is told 1001 (going away) and has a moment to answer the
    // close handshake; one that does not (stalled, its close frame behind unread bytes)
    // is cut then.
    preClose(done) {
      const clients = [...this.websocketServer.clients];
      for (const client of clients) client.close(1001, 'Server shutting down');
      const cut = setTimeout(() => {
        for (const client of clients) client.terminate();
      }, CLOSE_GRACE_MS);
      void Promise.all(
        clients.map((client) =>
          client.readyState === client.CLOSED
            ? undefined
            : new Promise((resolve) => client.once('close', resolve)),
        ),
      ).then(() => {
        clearTimeout(cut);
        this.websocketServer.close(() => done());
      });
    },
  });
  // A refused upgrade (401/403) answers on the raw socket; nothing else will ever be read
  // from it, and Node keeps half-open server sockets: close it once the answer is out.
  app.addHook('onResponse', async (request, reply) => {
    if (request.headers.upgrade && reply.statusCode !== 101) request.raw.socket?.destroy();
  });
  app.get(
    '/ws/live-updates',
    {
      websocket: true,
      schema: {
        tags: ['live'],
        summary: 'Websocket: subscribe to queries, widgets and dashboards (messages are [command, params])',
      },
    },
    (socket, request) => {
      // Upgraded: no reply is sent, so the request's log line is written here.
      logRequest(request, 101);
      opts.hub.attach(socket, caller(request), request.ip ?? null);
    },
  );
}
