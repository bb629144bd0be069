import type { Readable } from 'node:stream';
import { Busboy, type BusboyHeaders, type BusboyInstance } from '@fastify/busboy';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { MAX_JSON_DEPTH, tooDeep } from '../../core/json-depth.js';
import { AppError, validationError } from '../../errors/errors.js';
import { parseBoolean } from '../schemas/common.js';
import { drainUnreadBody } from '../unread-body.js';

interface PropertySchema {
  type?: string | string[];
  anyOf?: PropertySchema[];
  properties?: Record<string, PropertySchema>;
}

const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data'];

function typesOf(schema: PropertySchema | undefined): Set<string> {
  const out = new Set<string>();
  if (!schema) return out;
  for (const t of [schema.type ?? []].flat()) out.add(t);
  for (const s of schema.anyOf ?? []) for (const t of typesOf(s)) out.add(t);
  return out;
}

/**
 * Form encodings carry every value as a string; nested values (`params`, `filter`, ...)
 * arrive as JSON text. Turn each field into what the route's body schema
 * expects, so one schema validates all three encodings alike.
 */
export function coerceFormBody(body: Record<string, unknown>, schema: PropertySchema | undefined) {
  const errors: Record<string, string[]> = {};
  for (const [key, raw] of Object.entries(body)) {
    const value = Array.isArray(raw) && raw.length === 1 ? raw[0] : raw;
    body[key] = value;
    if (typeof value !== 'string') continue;
    const types = typesOf(schema?.properties?.[key]);
    // An empty field is none for a nullable number, even one that also takes text (an id or a name).
    if (types.has('null') && value === '' && (types.has('integer') || types.has('number'))) {
      body[key] = null;
      continue;
    }
    if (types.size === 0 || types.has('string')) continue;
    if (types.has('null') && value === '') body[key] = null;
    else if (types.has('object') || types.has('array')) {
      try {
        body[key] = JSON.parse(value);
      } catch {
        errors[key] = ['Must be JSON text in a form field.'];
      }
    } else if (types.has('integer') || types.has('number')) {
      if (value.trim() !== '' && Number.isFinite(Number(value))) body[key] = Number(value);
    } else if (types.has('boolean')) {
      if (/^(true|false|1|0|yes|no)$/i.test(value)) body[key] = parseBoolean(value);
    }
  }
  if (Object.keys(errors).length) throw validationError(errors);
}

const isForm = (request: FastifyRequest) => {
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return FORM_TYPES.includes(type);
};

/** JSON (built in), urlencoded and multipart bodies; anything else is 415. */
export const bodyPlugin = fp(async (app: FastifyInstance) => {
  app.removeContentTypeParser('text/plain');
  await app.register(formbody);
  app.addContentTypeParser('multipart/form-data', (request, payload, done) =>
    parseMultipartBody(request, payload, request.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit, done),
  );
  app.addHook('preValidation', async (request) => {
    // JSON nested deeper than 64 levels is refused before any route walks it.
    // Ingest bodies are records, parsed and bounded by their own parsers.
    const body = request.body;
    if (
      typeof body === 'object' &&
      body !== null &&
      !ArrayBuffer.isView(body) &&
      !request.url.startsWith('/api/ingest')
    ) {
      const deep = tooDeep(body, MAX_JSON_DEPTH);
      if (deep !== undefined) {
        const path = deep.replace(/^\./, '');
        throw validationError(
          { [path]: [`JSON is nested more than ${MAX_JSON_DEPTH} levels deep.`] },
          `Invalid body: ${path} is nested more than ${MAX_JSON_DEPTH} levels deep.`,
        );
      }
    }
  });
  // Whatever answers before a body's end (a limit, a file part, a failed authentication),
  // the client must be able to read it: the rest is drained, within bounds.
  app.addHook('onSend', async (request, reply, payload) => {
    drainUnreadBody(request, reply);
    return payload;
  });
  app.addHook('preValidation', async (request) => {
    if (!isForm(request) || typeof request.body !== 'object' || request.body === null) return;
    const schema = request.routeOptions.schema?.body as PropertySchema | undefined;
    // Form bodies come as prototype-less objects; copy to a plain one for the validator.
    const body = { ...(request.body as Record<string, unknown>) };
    coerceFormBody(body, schema);
    request.body = body;
  });
});

/** Most fields in one multipart body (beyond: 413). */
export const MULTIPART_MAX_FIELDS = 200;
/**
 * A refusal while the body streams in: answered at once (a client sending 300 MiB gets its
 * answer at the limit); the rest of the body is then drained within bounds
 * (unread-body.ts), not read to its end.
 */
const refusing = (status: number, code: string, message: string) => new AppError(status, code, message);

const tooLarge = () => refusing(413, 'payload_too_large', 'Request body is too large.');
const malformed = (why: string) => refusing(400, 'bad_request', `Malformed multipart body: ${why}.`);

/**
 * Content-type parser for multipart/form-data, on busboy (the parser @fastify/multipart
 * wraps), fields only: the API takes no files. The body limit holds as for JSON (checked
 * on Content-Length before anything is read, then on the bytes received), a file part is
 * refused as soon as it starts, and anything malformed, a missing boundary included, is
 * a 400; a field sent as `application/json` is parsed.
 */
function parseMultipartBody(
  request: FastifyRequest,
  payload: Readable,
  limit: number,
  done: (err: Error | null, body?: unknown) => void,
): void {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    done(tooLarge());
    return;
  }
  let parser: BusboyInstance;
  try {
    parser = new Busboy({
      headers: request.headers as BusboyHeaders,
      limits: { fieldSize: limit, fields: MULTIPART_MAX_FIELDS, parts: MULTIPART_MAX_FIELDS + 1 },
    });
  } catch {
    done(malformed('multipart/form-data without a boundary parameter'));
    return;
  }
  const fields: Record<string, unknown> = {};
  let received = 0;
  let finished = false;
  const finish = (err: Error | null, body?: unknown) => {
    if (finished) return;
    finished = true;
    payload.unpipe(parser);
    payload.removeListener('data', onData);
    if (err) payload.pause();
    done(err, body);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit) finish(tooLarge());
  };
  const tooMany = () =>
    finish(refusing(413, 'payload_too_large', `Too many form fields (at most ${MULTIPART_MAX_FIELDS}).`));
  parser.on('field', (name, text, _nameTruncated, valueTruncated, _encoding, mime) => {
    if (finished) return;
    if (valueTruncated) return finish(tooLarge());
    if (name === '' || name in Object.prototype)
      return finish(malformed(`field name "${name}" is not allowed`));
    let value: unknown = text;
    if (mime.toLowerCase().startsWith('application/json')) {
      try {
        value = JSON.parse(text);
      } catch {
        return finish(refusing(400, 'bad_request', `Field ${name} is not valid JSON.`));
      }
    }
    const prior = fields[name];
    if (prior === undefined) fields[name] = value;
    else if (Array.isArray(prior)) prior.push(value);
    else fields[name] = [prior, value];
  });
  parser.on('file', (_name, stream) => {
    stream.resume();
    finish(refusing(415, 'unsupported_media_type', 'File uploads are not accepted: send form fields only.'));
  });
  parser.on('fieldsLimit', tooMany);
  parser.on('partsLimit', tooMany);
  parser.on('finish', () => finish(null, fields));
  // busboy's own text stays out of answers: it describes the parser, not the request.
  parser.on('error', () =>
    finish(received === 0 ? null : malformed('not a valid multipart/form-data body'), {}),
  );
  payload.on('data', onData);
  // Kept after finishing: a client that aborts later must not crash the process.
  payload.on('error', () => finish(malformed('the request was aborted')));
  payload.pipe(parser);
}
