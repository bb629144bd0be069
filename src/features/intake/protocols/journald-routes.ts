import { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../../errors/errors.js';
import { decompressed } from '../../../http/ingest-body.js';
import { caller } from '../../../http/plugins/auth.js';
import { errorResponses } from '../../../http/schemas/common.js';
import { IngestBodyError } from '../../../ingest/parsers/ndjson.js';
import type { IntakeContext, IntakeProtocol } from './intake-protocol.js';
import { JournaldIntake, JournalUploadError } from './journald-intake.js';

export const JOURNAL_EXPORT_TYPE = 'application/vnd.fdo.journal';

const ROUTE_DESCRIPTION =
  'The journal export format, as `systemd-journal-upload` and `journalctl -o export` write it, ' +
  'streamed: entries are stored as they arrive, in pieces, each durable before the next is read, ' +
  "so an upload of any length is taken (the uploader's first upload is the whole journal). " +
  'Answers 202 `OK.` (as systemd-journal-remote does) once every entry is durable; only then ' +
  "does the uploader move its cursor. Fields as `journalctl -o json` prints them; journald's " +
  'names fill the columns (MESSAGE, _HOSTNAME, SYSLOG_IDENTIFIER, PRIORITY, _PID, ' +
  '__REALTIME_TIMESTAMP). A malformed stream is a 400 naming the entry and byte: the entries ' +
  'before it are stored, nothing from it on.';

/**
 * The systemd journal's uploader, `systemd-journal-upload --url=…`, which appends
 * `/upload` to its URL and (in Debian's version) cannot send headers: so besides `/upload`
 * with the token in `Authorization` (e.g. added by a proxy), the token may be the path
 * segment before `/upload`. The request logger redacts it (request-log.ts).
 */
export async function journaldRoutes(fastify: FastifyInstance, intake: IntakeContext) {
  const journald = new JournaldIntake(intake.ingest, intake.events);
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.removeAllContentTypeParsers();
  // The body is read by the handler as a stream: no body limit applies to the whole
  // upload, only the entry cap.
  app.addContentTypeParser(JOURNAL_EXPORT_TYPE, (_request, payload, done) => done(null, payload));
  app.addContentTypeParser('*', (request, _payload, done) => {
    const sent =
      String(request.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim() || '(none)';
    done(
      new AppError(
        415,
        'unsupported_media_type',
        `Unsupported media type ${sent}; the journal upload takes ${JOURNAL_EXPORT_TYPE}.`,
      ),
      undefined,
    );
  });

  const handler = async (request: FastifyRequest) => {
    // A request without a body reaches no parser (its body stays undefined, which was a
    // 500, issue 54): an empty upload, answered as one.
    const sent = request.body instanceof Readable ? request.body : Readable.from([]);
    const body = decompressed(sent, request.headers['content-encoding']);
    try {
      const outcome = await journald.upload(body, intake.intakeOf(caller(request).username));
      if (outcome.stored + outcome.skipped === 0) {
        throw new IngestBodyError('parse_error', 'Request body holds no journal entries.');
      }
    } catch (error) {
      if (error instanceof JournalUploadError) {
        throw new IngestBodyError(
          'parse_error',
          `Not a journal export stream: ${error.message}. The ${error.stored} entries before it were stored, nothing from it on.`,
        );
      }
      if (isZlibError(error)) {
        throw new IngestBodyError('parse_error', `Body is not valid gzip/deflate: ${error.message}.`);
      }
      throw error;
    }
  };

  const schema = {
    tags: ['ingest'],
    description: ROUTE_DESCRIPTION,
    response: {
      202: Type.String({ description: '`OK.` Every entry is durable.' }),
      ...errorResponses(400, 401, 403, 415, 503),
    },
  };
  const reply202 = { type: 'text/plain; charset=utf-8', body: 'OK.\n' };

  for (const url of ['/upload', '/api/ingest/journald/upload']) {
    app.post(
      url,
      {
        config: { auth: 'ingest' },
        schema: { ...schema, summary: 'systemd journal upload, token in the Authorization header' },
      },
      async (request, reply) => {
        await handler(request);
        return reply.status(202).type(reply202.type).send(reply202.body);
      },
    );
  }
  app.post(
    '/api/ingest/journald/:token/upload',
    {
      config: { auth: 'ingest', pathToken: 'token' },
      schema: {
        ...schema,
        summary: 'systemd journal upload, INGEST token in the path (`--url=…/api/ingest/journald/<token>`)',
        params: Type.Object({
          token: Type.String({ maxLength: 256, description: 'An INGEST or USER token.' }),
        }),
      },
    },
    async (request, reply) => {
      await handler(request);
      return reply.status(202).type(reply202.type).send(reply202.body);
    },
  );
}

const isZlibError = (error: unknown): error is Error =>
  error instanceof Error && /^Z_[A-Z_]+$/.test(String((error as NodeJS.ErrnoException).code));

/** systemd-journal-upload's uploads; its events' intake is `journald:<user>`. */
export const journaldProtocol: IntakeProtocol = { name: 'journald', routes: journaldRoutes };
