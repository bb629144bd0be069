import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.js';

/** A failure to tell the CLI user in one line, without a stack trace. */
export class CliError extends Error {
  override name = 'CliError';
}

/** A running server and the token to send it. */
export interface ServerTarget {
  url: string;
  token: string;
  /** Where the token was read from, when it was not given with --token. */
  tokenFile?: string;
}

/** The server to talk to: `--url`/`--token`, else this config's port and admin token. */
export function serverTarget(config: Config, opts: { url?: string; token?: string }): ServerTarget {
  const url = (opts.url ?? `http://127.0.0.1:${config.port}`).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/?#\s]+/.test(url))
    throw new CliError(`--url must be http(s)://host[:port], got "${url}"`);
  if (opts.token) return { url, token: opts.token };
  const file = path.join(config.dataDir, 'admin-token');
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch {
    throw new CliError(`No --token given and no ${file}: start the server once, or pass --token.`);
  }
  return { url, token, tokenFile: file };
}

/** The one line for a server that does not answer (connection refused, unknown host, ...). */
export function unreachable(url: string, err: unknown): CliError {
  const e = err as { code?: string; cause?: { code?: string } };
  const code = e.cause?.code ?? e.code;
  const why = !code || code === 'ECONNREFUSED' ? 'is the server running?' : `${code}; is the server running?`;
  return new CliError(`cannot reach ${url} (${why})`);
}

/** The one line for a 401: which token was refused and what to do about it. */
export function tokenRefused(target: ServerTarget): CliError {
  return new CliError(
    target.tokenFile
      ? `token refused by ${target.url} (the token in ${target.tokenFile}): pass --token, or the --data-dir of that server`
      : `token refused by ${target.url}: check --token`,
  );
}

/** The error an API answer carries: its `detail`, else the status line. */
export async function answerError(target: ServerTarget, res: Response): Promise<CliError> {
  if (res.status === 401) return tokenRefused(target);
  let detail = '';
  try {
    const body = (await res.json()) as { detail?: unknown };
    if (typeof body.detail === 'string') detail = body.detail;
  } catch {
    // Not JSON (a proxy's page?): the status says enough.
  }
  return new CliError(detail || `${target.url} answered ${res.status} ${res.statusText}`.trim());
}

/**
 * A request to the API with the target's token. An unreachable server, a 401 and any
 * other error status become one-line CliErrors (the server's `detail` where it sent one).
 */
export async function apiFetch(
  target: ServerTarget,
  urlPath: string,
  init: {
    method?: 'GET' | 'POST' | 'DELETE';
    body?: string;
    contentType?: string;
    signal?: AbortSignal;
  } = {},
): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(`${target.url}${urlPath}`, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `token ${target.token}`,
        accept: 'application/json',
        ...(init.contentType ? { 'content-type': init.contentType } : {}),
      },
      ...(init.body !== undefined ? { body: init.body } : {}),
      ...(init.signal ? { signal: init.signal } : {}),
    });
  } catch (err) {
    const name = (err as Error).name;
    if (name === 'AbortError' || name === 'TimeoutError') throw err;
    throw unreachable(target.url, err);
  }
  return res;
}

/** A JSON request; any error status throws (see apiFetch). */
export async function apiJson<T>(
  target: ServerTarget,
  urlPath: string,
  init: { method?: 'GET' | 'POST' | 'DELETE'; body?: unknown; signal?: AbortSignal } = {},
): Promise<{ status: number; body: T }> {
  const res = await apiFetch(target, urlPath, {
    ...(init.method ? { method: init.method } : {}),
    ...(init.body !== undefined ? { body: JSON.stringify(init.body), contentType: 'application/json' } : {}),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  if (!res.ok) throw await answerError(target, res);
  return { status: res.status, body: (await res.json()) as T };
}
