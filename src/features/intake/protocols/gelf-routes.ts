import { setImmediate as nextTurn } from 'node:timers/promises';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../../errors/errors.js';
import { ingestBodies } from '../../../http/ingest-body.js';
import { caller } from '../../../http/plugins/auth.js';
import { errorResponses } from '../../../http/schemas/common.js';
import { normaliseRecord } from '../../../ingest/normalise.js';
import { PIECE_BYTES, PIECE_RECORDS, planNdjson } from '../../../ingest/parsers/chunked.js';
import { decodeUtf8Body, IngestBodyError, type ParsedEntry } from '../../../ingest/parsers/ndjson.js';
import { gelfToRecord } from '../../../ingest/protocols/gelf.js';
import { startGelfListener } from './gelf-listener.js';
import type { IntakeContext, IntakeProtocol } from './intake-protocol.js';

const TYPES = ['application/json', 'application/x-ndjson', 'application/ndjson', 'application/jsonlines'];

const invalidGelf = (where: string, detail: string) =>
  new AppError(400, 'invalid_gelf', `${where}: ${detail}. Nothing was stored.`);

const whereOf = (entry: ParsedEntry) =>
  entry.line === undefined ? 'GELF message' : `GELF message on line ${entry.line}`;

/**
 * The messages of a body, as pieces of parsed entries: NDJSON when its first non-blank
 * line is JSON on its own (one compact message is NDJSON of one), else one JSON document
 * (a pretty-printed message).
 */
async function planGelf(body: Buffer, maxRecords: number): Promise<Array<() => ParsedEntry[]>> {
  let start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  let end = body.indexOf(10, start);
  while (end !== -1 && body.subarray(start, end).toString('latin1').trim() === '') {
    start = end + 1;
    end = body.indexOf(10, start);
  }
  let firstLineIsJson = true;
  try {
    JSON.parse(body.subarray(start, end === -1 ? body.length : end).toString('utf8'));
  } catch {
    firstLineIsJson = false;
  }
  if (firstLineIsJson) {
    const limits = { maxRecords, pieceRecords: PIECE_RECORDS, pieceBytes: PIECE_BYTES };
    return (await planNdjson(body, limits)).pieces;
  }
  const text = decodeUtf8Body(body);
  if (text.trim() === '') throw new IngestBodyError('parse_error', 'Request body is empty.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new IngestBodyError(
      'parse_error',
      `Request body is neither a JSON document nor NDJSON: ${(err as Error).message}`,
    );
  }
  const entries = [{ index: 0, value }];
  return [() => entries];
}

/**
 * `POST /api/ingest/gelf`: GELF over HTTP, as Graylog's GELF HTTP input takes it (one
 * message per request), plus NDJSON of several. All or nothing: every message is
 * checked (GELF rules, then the normaliser's, in a dry run) before any is stored, so a
 * malformed one is a 400 and the request stores nothing. Success is Graylog's answer,
 * `202` with an empty body, given once the events are durable.
 */
export async function gelfRoutes(fastify: FastifyInstance, opts: IntakeContext) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  ingestBodies(app, TYPES, `/api/ingest/gelf takes ${TYPES.join(', ')}`);

  app.post(
    '/api/ingest/gelf',
    {
      bodyLimit: opts.bodyLimit,
      config: { auth: 'ingest' },
      schema: {
        tags: ['ingest'],
        summary: 'Send GELF messages: one GELF 1.1 JSON message, or NDJSON of them (gzip/deflate allowed)',
        description:
          "Fields are stored as Graylog stores them: short_message → message, level → severity, timestamp → ts, additional fields without their leading underscore. Answers 202 with an empty body (as Graylog's GELF HTTP input) once every message is durable. A malformed message (not a JSON object, no short_message, a version other than 1.1): 400 naming it, nothing stored.",
        response: {
          // No content schema: the body is empty, as Graylog answers.
          202: Type.Unsafe<undefined>({ type: 'null', description: 'Every message is stored. Empty body.' }),
          ...errorResponses(400, 401, 403, 413, 415, 503),
        },
      },
    },
    async (request, reply) => {
      const pieces = await planGelf(request.body as Buffer, opts.maxRecords);
      const dryRun = { receivedAt: Date.now(), intake: null, newId: () => '' };
      let converted: ParsedEntry[] | undefined;
      const convert = (entries: ParsedEntry[]): ParsedEntry[] =>
        entries.map((entry) => {
          if (entry.error !== undefined) {
            throw new IngestBodyError('parse_error', `${entry.error}. Nothing was stored.`);
          }
          const gelf = gelfToRecord(entry.value);
          if (!gelf.ok) throw invalidGelf(whereOf(entry), gelf.detail);
          return { ...entry, value: gelf.record };
        });
      for (let p = 0; p < pieces.length; p++) {
        if (p > 0) await nextTurn();
        const entries = convert(pieces[p]!());
        for (const entry of entries) {
          const normalised = normaliseRecord(entry.value, dryRun);
          if (!normalised.ok) throw invalidGelf(whereOf(entry), normalised.detail);
        }
        // One piece (the usual single message) is kept rather than parsed twice.
        if (pieces.length === 1) converted = entries;
      }
      const kept = converted;
      const toStore = kept ? [() => kept] : pieces.map((piece) => () => convert(piece()));
      await opts.ingest.ingestPieces(toStore, opts.intakeOf(caller(request).username), { items: false });
      return reply.status(202).send();
    },
  );
}

/**
 * GELF: over HTTP (`POST /api/ingest/gelf`, intake `gelf:<user>`) and on its own port
 * (`gelfPort`: UDP and TCP, intake `gelf:<address>`).
 */
export const gelfProtocol: IntakeProtocol = {
  name: 'gelf',
  routes: gelfRoutes,
  async listen({ ingest, config, log, tcpLimits }) {
    if (config.gelfPort <= 0) return undefined;
    const listener = await startGelfListener(ingest, {
      host: config.gelfHost,
      port: config.gelfPort,
      ...tcpLimits,
      log,
    });
    log.info({ port: listener.port }, 'GELF listening on UDP and TCP');
    return listener;
  },
};
