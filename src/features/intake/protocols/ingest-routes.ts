import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { badRequest } from '../../../errors/errors.js';
import { ingestBodies } from '../../../http/ingest-body.js';
import { caller } from '../../../http/plugins/auth.js';
import { errorResponses } from '../../../http/schemas/common.js';
import { PIECE_BYTES, PIECE_RECORDS, planJson, planNdjson } from '../../../ingest/parsers/chunked.js';
import { IngestBodyError, type ParsedEntry } from '../../../ingest/parsers/ndjson.js';
import type { IntakeContext, IntakeProtocol } from './intake-protocol.js';

const NDJSON_TYPES = [
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonlines',
  'application/x-jsonlines',
];

export const IngestResultSchema = Type.Object(
  {
    accepted: Type.Integer(),
    rejected: Type.Integer(),
    errors: Type.Array(Type.Object({ index: Type.Integer(), detail: Type.String() }), { maxItems: 100 }),
  },
  { $id: 'IngestResult' },
);

/**
 * Bodies other intakes take, sent here by mistake: told by their top-level key, so an
 * OTLP or Loki request is refused whole instead of stored as one odd event.
 */
const ENVELOPES = [
  { key: 'resourceLogs', endpoint: '/v1/logs', protocol: 'OTLP logs' },
  { key: 'streams', endpoint: '/loki/api/v1/push', protocol: 'Loki push' },
] as const;

/** The envelope a record plainly is (by its top-level key), else undefined. */
function envelopeOf(record: unknown): (typeof ENVELOPES)[number] | undefined {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return undefined;
  return ENVELOPES.find((e) => Array.isArray((record as Record<string, unknown>)[e.key]));
}

const wrongEndpoint = (e: (typeof ENVELOPES)[number]) =>
  badRequest(
    `This is a ${e.protocol} request ("${e.key}" at the top level): send it to ${e.endpoint}, not /api/ingest. Nothing was stored.`,
    'wrong_endpoint',
  );

export async function ingestRoutes(fastify: FastifyInstance, opts: IntakeContext) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  ingestBodies(
    app,
    ['application/json', ...NDJSON_TYPES],
    `/api/ingest takes application/json, ${NDJSON_TYPES.join(', ')}`,
  );

  app.post(
    '/api/ingest',
    {
      bodyLimit: opts.bodyLimit,
      config: { auth: 'ingest' },
      schema: {
        tags: ['ingest'],
        summary: 'Send events: a JSON object, a JSON array, or NDJSON (gzip/deflate allowed)',
        description:
          'Answers once the accepted events are durable. A malformed record is rejected alone ' +
          '(listed by index, at most 100); the others are stored. More records than the ' +
          'ingestMaxRecords setting: 413, nothing stored. An OTLP (`resourceLogs`) or Loki ' +
          '(`streams`) envelope: 400 `wrong_endpoint` naming the endpoint that takes it.',
        response: { 200: Type.Ref('IngestResult'), ...errorResponses(400, 401, 403, 413, 415, 503) },
      },
    },
    async (request) => {
      const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      const body = request.body as Buffer;
      // Counted and cut into pieces first (413 past the cap, 400 for a body that is not
      // JSON: nothing stored), then stored piece by piece.
      const limits = { maxRecords: opts.maxRecords, pieceRecords: PIECE_RECORDS, pieceBytes: PIECE_BYTES };
      const plan = NDJSON_TYPES.includes(type)
        ? await planNdjson(body, limits)
        : await planJson(body, limits);
      if (plan.records === 0) throw new IngestBodyError('parse_error', 'Request body holds no records.');
      // The first record shows whether this is another protocol's envelope; the piece it
      // was parsed for is kept, so nothing is parsed twice.
      let first: ParsedEntry[] | undefined = plan.pieces[0]!();
      const envelope = envelopeOf(first[0]?.value);
      if (envelope) throw wrongEndpoint(envelope);
      plan.pieces[0] = () => {
        const entries = first ?? [];
        first = undefined; // stored once, then let go like the other pieces
        return entries;
      };
      const { accepted, rejected, errors } = await opts.ingest.ingestPieces(
        plan.pieces,
        opts.intakeOf(caller(request).username),
        { items: false },
      );
      return { accepted, rejected, errors };
    },
  );
}

/** `POST /api/ingest`: Logscope's own JSON and NDJSON; its events' intake is `http:<user>`. */
export const httpProtocol: IntakeProtocol = {
  name: 'http',
  schemas: [IngestResultSchema],
  routes: ingestRoutes,
};
