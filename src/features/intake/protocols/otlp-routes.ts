import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { describeError, errorHandler } from '../../../errors/error-handler.js';
import { AppError } from '../../../errors/errors.js';
import { ingestBodies } from '../../../http/ingest-body.js';
import { caller } from '../../../http/plugins/auth.js';
import { errorResponses } from '../../../http/schemas/common.js';
import { tooManyRecords } from '../../../ingest/parsers/chunked.js';
import {
  countLogRecords,
  decodeOtlpLogs,
  encodeExportResponse,
  encodeStatus,
  grpcCodeOf,
  type OtlpPartialSuccess,
  otlpLogRecords,
  otlpPrefixCheck,
} from '../../../ingest/protocols/otlp.js';
import { OTLP_MEDIA_TYPES, type OtlpEncoding } from '../../../ingest/protocols/otlp-model.js';
import type { IntakeContext, IntakeProtocol } from './intake-protocol.js';

/** The paths OTLP exporters post logs to: the standard one and one under /api/ingest. */
export const OTLP_LOGS_PATHS = ['/v1/logs', '/api/ingest/otlp/v1/logs'] as const;

/** Rejections named in a partial success's errorMessage; the count says how many there were. */
const LISTED_REJECTIONS = 5;

const TAKES = `OTLP logs take ${OTLP_MEDIA_TYPES.protobuf} or ${OTLP_MEDIA_TYPES.json}`;

function encodingOf(request: FastifyRequest): OtlpEncoding | null {
  const type = String(request.headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase();
  if (type === OTLP_MEDIA_TYPES.protobuf) return 'protobuf';
  if (type === OTLP_MEDIA_TYPES.json) return 'json';
  return null;
}

const ExportLogsResponseJson = Type.Object(
  {
    partialSuccess: Type.Optional(
      Type.Object({ rejectedLogRecords: Type.Integer(), errorMessage: Type.String() }),
    ),
  },
  { description: 'ExportLogsServiceResponse (OTLP/JSON)' },
);

const StatusJson = Type.Object(
  { code: Type.Integer(), message: Type.String() },
  { description: 'google.rpc.Status (OTLP/JSON); code 3 is INVALID_ARGUMENT' },
);

const binary = { schema: { type: 'string', format: 'binary' } };

/** A response in both encodings: JSON with `schema`, protobuf bytes. */
const bothEncodings = (description: string, schema: typeof StatusJson | typeof ExportLogsResponseJson) => ({
  description,
  content: { [OTLP_MEDIA_TYPES.json]: { schema }, [OTLP_MEDIA_TYPES.protobuf]: binary },
});

/**
 * Errors in OTLP's shape: a google.rpc.Status in the request's encoding, with the status
 * code and headers (`Retry-After`) the API-wide handler would use. Authentication (401,
 * 403) happens before the body is looked at, and a 415 has no encoding to answer in:
 * those keep the API's error shape.
 */
function otlpErrorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  const encoding = encodingOf(request);
  const status = error instanceof AppError ? error.status : (error as FastifyError).statusCode;
  if (encoding === null || status === 401 || status === 403 || status === 415) {
    return errorHandler(error, request, reply);
  }
  const [code, body, headers] = describeError(error, request);
  const message = body.request_id ? `${body.detail} (request id ${body.request_id})` : body.detail;
  return reply
    .status(code)
    .headers(headers)
    .type(encoding === 'json' ? 'application/json; charset=utf-8' : OTLP_MEDIA_TYPES.protobuf)
    .send(encodeStatus(encoding, grpcCodeOf(code), message));
}

/**
 * OTLP/HTTP logs intake: an ExportLogsServiceRequest in protobuf or JSON (gzip allowed),
 * one event per LogRecord. Answers once the accepted events are durable, in the
 * request's encoding; records the normaliser refuses are counted in a partial success,
 * the others stored. A body that is not a request: 400, nothing stored.
 */
export async function otlpRoutes(fastify: FastifyInstance, opts: IntakeContext) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // A protobuf body's record budget is checked while it inflates (JSON's once parsed).
  ingestBodies(app, Object.values(OTLP_MEDIA_TYPES), TAKES, async (request) =>
    encodingOf(request) === 'protobuf' ? otlpPrefixCheck(opts.maxRecords) : undefined,
  );
  app.setErrorHandler(otlpErrorHandler);

  for (const url of OTLP_LOGS_PATHS) {
    app.post(
      url,
      {
        bodyLimit: opts.bodyLimit,
        config: { auth: 'ingest' },
        schema: {
          tags: ['ingest'],
          summary: 'OTLP/HTTP logs: an ExportLogsServiceRequest (protobuf or JSON, gzip allowed)',
          description:
            'For OpenTelemetry exporters and collectors (`Authorization: Bearer <token>`, an INGEST ' +
            'or USER token). One event per LogRecord: `service.name` → app, `host.name` → host, ' +
            'severity from severityNumber, body → message, other resource and scope attributes ' +
            'as `resource.*` and `scope.*` fields, record attributes as fields, trace_id/span_id ' +
            'in hex. Answers in the request encoding once the events are durable; records ' +
            'refused (over the field limits) are counted in `partialSuccess`, the others stored. ' +
            'A malformed body: 400 with a google.rpc.Status, nothing stored.',
          response: {
            200: bothEncodings('ExportLogsServiceResponse in the request encoding', ExportLogsResponseJson),
            400: bothEncodings('Malformed request: google.rpc.Status in the request encoding', StatusJson),
            413: bothEncodings('Body or record count over the limits: google.rpc.Status', StatusJson),
            503: bothEncodings('Ingest queue full or store unavailable: google.rpc.Status', StatusJson),
            ...errorResponses(401, 403, 415),
          },
        },
      },
      async (request, reply) => {
        const encoding = encodingOf(request);
        // No body at all (no content type to parse by): nothing this endpoint takes.
        if (encoding === null || !Buffer.isBuffer(request.body)) {
          throw new AppError(415, 'unsupported_media_type', `${TAKES}.`);
        }
        const otlp = await decodeOtlpLogs(request.body, encoding, opts.maxRecords);
        if (countLogRecords(otlp) > opts.maxRecords) throw tooManyRecords(opts.maxRecords);
        const records = otlpLogRecords(otlp);
        let partial: OtlpPartialSuccess | undefined;
        if (records.length > 0) {
          const outcome = await opts.ingest.ingest(
            records.map((value, index) => ({ index, value })),
            opts.intakeOf(caller(request).username),
          );
          if (outcome.rejected > 0) {
            const listed = outcome.errors
              .slice(0, LISTED_REJECTIONS)
              .map((e) => `log record ${e.index}: ${e.detail}`);
            const more = outcome.rejected > listed.length ? `; ${outcome.rejected - listed.length} more` : '';
            partial = {
              rejectedLogRecords: outcome.rejected,
              errorMessage: `${outcome.rejected} of ${records.length} log records rejected: ${listed.join('; ')}${more}`,
            };
          }
        }
        const answer = await encodeExportResponse(encoding, partial);
        return reply
          .type(encoding === 'json' ? 'application/json; charset=utf-8' : OTLP_MEDIA_TYPES.protobuf)
          .send(answer);
      },
    );
  }
}

/** OTLP/HTTP logs; its events' intake is `otlp:<user>`. */
export const otlpProtocol: IntakeProtocol = { name: 'otlp', routes: otlpRoutes };
