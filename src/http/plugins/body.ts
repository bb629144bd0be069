import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { MAX_JSON_DEPTH, tooDeep } from '../../core/json-depth.js';
import { validationError } from '../../errors/errors.js';
import { parseBoolean } from '../schemas/common.js';

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
 * arrive as JSON text (API.md §1). Turn each field into what the route's body schema
 * expects, so one schema validates all three encodings alike.
 */
export function coerceFormBody(body: Record<string, unknown>, schema: PropertySchema | undefined) {
  const errors: Record<string, string[]> = {};
  for (const [key, raw] of Object.entries(body)) {
    const value = Array.isArray(raw) && raw.length === 1 ? raw[0] : raw;
    body[key] = value;
    if (typeof value !== 'string') continue;
    const types = typesOf(schema?.properties?.[key]);
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
  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    limits: { fileSize: 10 * 1024 * 1024, files: 10, fields: 200 },
  });
  app.addHook('preValidation', async (request) => {
    // JSON nested deeper than 64 levels is refused before any route walks it (API.md §10).
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
  app.addHook('preValidation', async (request) => {
    if (!isForm(request) || typeof request.body !== 'object' || request.body === null) return;
    const schema = request.routeOptions.schema?.body as PropertySchema | undefined;
    // Form bodies come as prototype-less objects; copy to a plain one for the validator.
    const body = { ...(request.body as Record<string, unknown>) };
    coerceFormBody(body, schema);
    request.body = body;
  });
});
