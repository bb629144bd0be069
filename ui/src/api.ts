/** The Logscope HTTP API: token handling, errors, and the query protocol (POST then poll). */

import type { components, paths } from './api-types.generated';

const TOKEN_KEY = 'logscope.token';

export const getToken = (): string | null => {
  try {
    return window.localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
};

export function setToken(token: string | null): void {
  try {
    if (token) window.localStorage.setItem(TOKEN_KEY, token);
    else window.localStorage.removeItem(TOKEN_KEY);
  } catch {
    // Storage may be unavailable (private mode): the session then lasts until reload.
  }
  window.dispatchEvent(new Event('logscope:auth'));
}

export function subscribeToken(onChange: () => void): () => void {
  const onStorage = (e: StorageEvent) => {
    if (e.key === TOKEN_KEY || e.key === null) onChange();
  };
  window.addEventListener('logscope:auth', onChange);
  window.addEventListener('storage', onStorage);
  return () => {
    window.removeEventListener('logscope:auth', onChange);
    window.removeEventListener('storage', onStorage);
  };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly errors?: Record<string, string[]>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Called when the server refuses the stored token: the app goes back to sign-in. */
let onUnauthorized: () => void = () => {};
export const setUnauthorizedHandler = (fn: () => void) => {
  onUnauthorized = fn;
};

interface RequestOptions {
  method?: string;
  body?: unknown;
  signal?: AbortSignal | undefined;
  /** false: send no token and do not treat 401 as an expired session (the login form). */
  auth?: boolean;
}

export async function api<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const auth = opts.auth ?? true;
  const token = auth ? getToken() : null;
  if (token) headers.authorization = `token ${token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
    headers,
    body: opts.body === undefined ? null : JSON.stringify(opts.body),
    signal: opts.signal ?? null,
  });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const body = (data ?? {}) as { detail?: unknown; code?: unknown; errors?: unknown };
    const detail =
      typeof body.detail === 'string' && body.detail ? body.detail : `${res.status} ${res.statusText}`.trim();
    const err = new ApiError(
      res.status,
      detail,
      typeof body.code === 'string' ? body.code : undefined,
      body.errors && typeof body.errors === 'object' ? (body.errors as Record<string, string[]>) : undefined,
    );
    if (res.status === 401 && auth) onUnauthorized();
    throw err;
  }
  return data as T;
}

export const isAbort = (err: unknown) => err instanceof DOMException && err.name === 'AbortError';

export const errorText = (err: unknown): string => {
  if (err instanceof ApiError) {
    const details = Object.values(err.errors ?? {}).flat();
    // The detail usually repeats the one field message; show each message once.
    const extra = details.filter((d) => d !== err.message && !err.message.includes(d));
    return [err.message, ...extra].join(' ');
  }
  if (err instanceof Error) return err.message;
  return String(err);
};

// --- Types of the representations the UI reads --------------------------------------
// The server's named representations are its OpenAPI document's schemas, generated into
// api-types.generated.ts (npm run gen:api-types): the pages name them from here.

/** The server's representations by name (its OpenAPI document's `components.schemas`). */
export type Schemas = components['schemas'];

/** A page of a list: every list answer of the API has this shape. */
export interface Paginated<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** The JSON the API answers `method` on `path` with, by status (200 unless told). */
export type Answer<
  P extends keyof paths,
  M extends keyof paths[P] = 'get' & keyof paths[P],
  S extends number = 200,
> = paths[P][M] extends { responses: Record<S, { content: { 'application/json': infer T } }> } ? T : never;

export type AuthToken = Schemas['AuthToken'];

export type User = Schemas['User'];

export type QueryStatus = Schemas['GenericQuery']['status'];

/**
 * A query's representation, its `results` as the query type `R` has them (the document
 * leaves them open: their shape per type is in docs/query-language.md); `{}` while
 * nothing is computed yet.
 */
export type GenericQuery<R> = Omit<Schemas['GenericQuery'], 'results'> & { results: Partial<R> };

// The document leaves an event and the results of a query type open objects: these are
// the shapes docs/query-language.md gives them.
export type LogEvent = Record<string, unknown> & { ev_id: string; ts: number };

export interface SearchResults {
  total: number;
  page: number;
  page_size: number;
  offset: number;
  events: LogEvent[];
}

export interface TimelineResults {
  interval: string;
  buckets: { ts: number; count: number }[];
}

/** A Table query's results (a query with pipes, docs/query-language.md#table). */
export interface TableResults {
  columns: { name: string; type: 'string' | 'number' | 'time' | 'ip' }[];
  rows: (string | number | null)[][];
  total_rows: number;
  truncated: boolean;
}

export type TimeRange = { ts_from: number; ts_to: number } | { preset: string };

export const isFinal = (s: QueryStatus) => s === 'SUCCESS' || s === 'STOPPED' || s === 'ERROR';

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/**
 * Runs a query: `POST /api/query` answers 200 when done within the server's sync window,
 * else 202 with partial results; then `GET /api/query/{qid}` is polled until the status is
 * final. `onUpdate` sees every representation; the promise resolves with the last one.
 */
export async function runQuery<R>(
  body: { type: string; params: Record<string, unknown> },
  opts: { signal: AbortSignal; onUpdate: (q: GenericQuery<R>) => void },
): Promise<GenericQuery<R>> {
  let q = await api<GenericQuery<R>>('/api/query', { body, signal: opts.signal });
  opts.onUpdate(q);
  let wait = 250;
  while (!isFinal(q.status)) {
    await sleep(wait, opts.signal);
    wait = Math.min(1000, Math.round(wait * 1.5));
    q = await api<GenericQuery<R>>(`/api/query/${encodeURIComponent(q.query_id)}`, { signal: opts.signal });
    opts.onUpdate(q);
  }
  return q;
}

/** Interrupts a running query; its partial results are kept (status STOPPED). */
export const stopQuery = <R>(qid: string) =>
  api<GenericQuery<R>>(`/api/query/${encodeURIComponent(qid)}/stop`, { method: 'POST', body: {} });

/** A window of a Search's events (re-paging never recounts). */
export const searchPage = (qid: string, offset: number, pageSize: number, signal?: AbortSignal) =>
  api<GenericQuery<SearchResults>>(
    `/api/query/${encodeURIComponent(qid)}?offset=${offset}&page_size=${pageSize}`,
    { signal },
  );
