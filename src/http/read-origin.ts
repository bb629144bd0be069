import type { FastifyRequest } from 'fastify';
import type { ReadOrigin } from '../query/read-audit.js';

/** Where a request's read comes from, for its audit record: this door, and the client's address. */
export const httpOrigin = (request: FastifyRequest): ReadOrigin => ({
  via: 'http',
  address: request.ip ?? null,
});
