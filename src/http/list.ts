import type { FastifyRequest } from 'fastify';
import type { OrderTerm, Page, PageRequest } from '../core/list.js';
import { AppError, fieldError } from '../errors/errors.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

export interface ListQueryInput {
  page?: number | undefined;
  page_size?: number | undefined;
  ordering?: string | undefined;
}

export interface ListPlan extends PageRequest {
  page: number;
  pageSize: number;
}

/**
 * Validates ordering against the fields a resource allows and turns page/page_size into
 * limit/offset (page_size clamped to 1000).
 */
export function planList(q: ListQueryInput, orderable: readonly string[], defaultOrdering = 'id'): ListPlan {
  const page = q.page ?? 1;
  const pageSize = Math.min(q.page_size ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const ordering = parseOrdering(q.ordering ?? defaultOrdering, orderable);
  return { page, pageSize, ordering, limit: pageSize, offset: (page - 1) * pageSize };
}

export function parseOrdering(raw: string, orderable: readonly string[]): OrderTerm[] {
  const terms: OrderTerm[] = [];
  for (const part of raw.split(',')) {
    const t = part.trim();
    if (!t) continue;
    const desc = t.startsWith('-');
    const field = desc ? t.slice(1) : t;
    if (!orderable.includes(field)) {
      throw fieldError('ordering', `Unknown field "${field}"; allowed: ${orderable.join(', ')}.`);
    }
    terms.push({ field, desc });
  }
  return terms;
}

/** Comma-separated multi-value filter (`owner=1,2`). */
export function splitList(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const values = raw
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  return values.length ? values : undefined;
}

export function splitIntList(name: string, raw: string | undefined): number[] | undefined {
  const values = splitList(raw);
  if (!values) return undefined;
  return values.map((v) => {
    if (!/^\d+$/.test(v)) throw fieldError(name, `"${v}" is not an integer id.`);
    return Number(v);
  });
}

export interface Envelope<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Where clients reach the server, without a trailing slash (`publicUrl`, else the
     * listen address): the base of every absolute URL the API returns. Never the request's
     * `Host`, which the client chooses.
     */
    publicBaseUrl(): string;
  }
}

/** An absolute URL for a path and query string of this server (e.g. the request's own). */
export function absoluteUrl(request: FastifyRequest, pathAndQuery: string): string {
  return `${request.server.publicBaseUrl()}${pathAndQuery}`;
}

/** The pagination envelope, with absolute next/previous links; a page past the end is 404. */
export function envelope<T>(request: FastifyRequest, plan: ListPlan, result: Page<T>): Envelope<T> {
  const lastPage = Math.max(1, Math.ceil(result.count / plan.pageSize));
  if (plan.page > lastPage) throw new AppError(404, 'not_found', 'Invalid page.');
  const q = request.url.indexOf('?');
  const pathname = q < 0 ? request.url : request.url.slice(0, q);
  const link = (page: number) => {
    const params = new URLSearchParams(q < 0 ? '' : request.url.slice(q + 1));
    params.set('page', String(page));
    params.set('page_size', String(plan.pageSize));
    return absoluteUrl(request, `${pathname}?${params.toString()}`);
  };
  return {
    count: result.count,
    next: plan.page < lastPage ? link(plan.page + 1) : null,
    previous: plan.page > 1 ? link(plan.page - 1) : null,
    results: result.rows,
  };
}
