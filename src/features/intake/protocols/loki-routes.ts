import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { describeError } from '../../../errors/error-handler.js';
import { AppError } from '../../../errors/errors.js';
import { ingestBodies } from '../../../http/ingest-body.js';
import { caller } from '../../../http/plugins/auth.js';
import { PIECE_RECORDS, tooManyRecords } from '../../../ingest/parsers/chunked.js';
import type { ParsedEntry } from '../../../ingest/parsers/ndjson.js';
import {
  countEntries,
  decodeLokiJson,
  decodeLokiProtobuf,
  type LokiStream,
  lokiRecords,
} from '../../../ingest/protocols/loki.js';
import type { IntakeContext, IntakeProtocol } from './intake-protocol.js';

const PATH = '/loki/api/v1/push';
const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

/** At most this many refused entries are named in a 400 (the count is always given). */
const LISTED_REFUSALS = 10;

/**
 * Renders every error of the Loki scope as Loki does: the status with a plain-text body
 * (promtail, Alloy and winston-loki log that text), keeping the headers the API-wide
 * handler would send (`WWW-Authenticate`, `Retry-After`).
 */
function lokiErrorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  const [status, body, headers] = describeError(error, request);
  const text = body.request_id ? `${body.detail} (request id ${body.request_id})` : body.detail;
  return reply.status(status).headers(headers).type('text/plain; charset=utf-8').send(`${text}\n`);
}

const textError = (description: string) => ({
  description,
  content: { 'text/plain; charset=utf-8': { schema: { type: 'string' } } },
});

/**
 * Grafana Loki's push endpoint, so Promtail, Grafana Alloy, the Docker Loki driver and
 * winston-loki can ship here unchanged. The token comes as for the other intakes
 * (`Authorization: Bearer <token>`, or HTTP Basic with the token as password: the
 * form those clients' `basic_auth` settings send); a tenant header is ignored.
 */
export async function lokiRoutes(fastify: FastifyInstance, opts: IntakeContext) {
  fastify.setErrorHandler(lokiErrorHandler);
  ingestBodies(
    fastify,
    [PROTOBUF, JSON_TYPE],
    `${PATH} takes ${PROTOBUF} (snappy-compressed) and ${JSON_TYPE} (gzip allowed)`,
  );

  fastify.post(
    PATH,
    {
      bodyLimit: opts.bodyLimit,
      config: { auth: 'ingest' },
      schema: {
        tags: ['ingest'],
        summary: 'Loki push: protobuf (snappy) or JSON streams; labels become fields',
        description:
          "Grafana Loki's push API. `application/x-protobuf`: a logproto PushRequest, snappy " +
          'block-compressed. `application/json`: `{"streams": [{"stream": {label: value}, ' +
          '"values": [["<unix ns>", "<line>", {structured metadata}]]}]}`, gzip allowed. Each ' +
          'entry becomes one event: the line is `message`, labels and structured metadata are ' +
          'fields (`host`, `app`/`service`/`service_name`, `level` fill their columns). ' +
          'Answers 204 once every entry is durable. A malformed body (snappy, protobuf, JSON, ' +
          'labels, timestamps) is a 400 with a plain-text reason and nothing stored; errors ' +
          'are plain text, as Loki sends them.',
        response: {
          204: { description: 'Every entry is stored.', type: 'null' },
          400: textError('Malformed body; nothing stored.'),
          401: textError('No or unknown token.'),
          413: textError('Body (decompressed) or entry count over the limits; nothing stored.'),
          415: textError('Another media type or Content-Encoding.'),
          503: textError('Ingestion queue full; retry.'),
        },
      },
    },
    async (request, reply) => {
      const body = request.body as Buffer | undefined;
      const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
      // All decoded and checked before anything is stored: a bad entry refuses the push.
      const streams: LokiStream[] =
        type === PROTOBUF
          ? await decodeLokiProtobuf(body ?? Buffer.alloc(0), opts.bodyLimit, opts.maxRecords)
          : decodeLokiJson(body ?? Buffer.alloc(0));
      const total = countEntries(streams);
      if (total > opts.maxRecords) throw tooManyRecords(opts.maxRecords);
      const records = lokiRecords(streams);
      if (records.length > 0) {
        const pieces: Array<() => ParsedEntry[]> = [];
        for (let from = 0; from < records.length; from += PIECE_RECORDS) {
          pieces.push(() =>
            records.slice(from, from + PIECE_RECORDS).map((value, k) => ({ index: from + k, value })),
          );
        }
        const outcome = await opts.ingest.ingestPieces(pieces, opts.intakeOf(caller(request).username), {
          items: false,
        });
        if (outcome.rejected > 0) {
          // lokiRecords refuses what the normaliser would, so this is a safety net; the
          // accepted entries are stored, and the sender is told which were not.
          const listed = outcome.errors
            .slice(0, LISTED_REFUSALS)
            .map((e) => `entry ${e.index}: ${e.detail}`)
            .join('; ');
          throw new AppError(
            400,
            'entries_refused',
            `${outcome.rejected} of ${total} entries refused (${outcome.accepted} stored): ${listed}`,
          );
        }
      }
      return reply.status(204).send();
    },
  );
}

/** Loki's push API; its events' intake is `loki:<user>`. */
export const lokiProtocol: IntakeProtocol = { name: 'loki', routes: lokiRoutes };
