import { answerError, apiFetch, CliError, type ServerTarget } from './api-client.js';

/** A cold tier job as the API shows it (docs/api/cold.md). */
interface ColdJob {
  id: string;
  kind: 'verify' | 'import';
  status: 'RUNNING' | 'DONE' | 'ERROR';
  error?: string;
  /** verify: records checked; import: each file's outcome. */
  files: number | Array<{ path: string; status: string; events: number; detail: string }>;
  events: number;
  bytes?: number;
  problems?: Array<{ path: string; problem: string; detail: string }>;
}

/** The server could not be reached, or refused the token: exit code 2. */
class Unreachable extends CliError {}

const n = (x: number) => x.toLocaleString('en-US');

/** A request whose failure to reach the server, or to be let in, is an `Unreachable`. */
async function ask(target: ServerTarget, urlPath: string, body?: unknown): Promise<ColdJob> {
  let res: Response;
  try {
    res = await apiFetch(target, urlPath, {
      ...(body === undefined
        ? {}
        : { method: 'POST', body: JSON.stringify(body), contentType: 'application/json' }),
    });
  } catch (err) {
    throw new Unreachable((err as Error).message);
  }
  if (!res.ok) {
    const err = await answerError(target, res);
    throw res.status === 401 || res.status === 403 ? new Unreachable(err.message) : err;
  }
  return (await res.json()) as ColdJob;
}

/** Starts a job and follows it (`GET /api/cold/jobs/{id}`) until it ends. */
async function runJob(
  target: ServerTarget,
  urlPath: string,
  body: unknown,
  everyMs: number,
): Promise<ColdJob> {
  let job = await ask(target, urlPath, body);
  while (job.status === 'RUNNING') {
    await new Promise((r) => setTimeout(r, everyMs));
    job = await ask(target, `/api/cold/jobs/${encodeURIComponent(job.id)}`);
  }
  if (job.status === 'ERROR') throw new CliError(`cold ${job.kind} failed: ${job.error ?? 'unknown error'}`);
  return job;
}

/**
 * `logscope cold verify` and `logscope cold import`: one line per problem (or refused
 * file) naming its path, then a summary; with `json`, the job as the API answers it.
 * Answers the exit code: 0 none, 1 any, 2 the server unreachable or the token refused.
 */
export async function coldCommand(
  target: ServerTarget,
  op:
    | { kind: 'verify'; streamId?: number; checksums: boolean }
    | { kind: 'import'; path: string; streamId?: number },
  opts: { json: boolean; everyMs?: number },
): Promise<number> {
  const body =
    op.kind === 'verify'
      ? { checksums: op.checksums, ...(op.streamId !== undefined ? { stream_id: op.streamId } : {}) }
      : { path: op.path, ...(op.streamId !== undefined ? { stream_id: op.streamId } : {}) };
  let job: ColdJob;
  try {
    job = await runJob(target, `/api/cold/${op.kind}`, body, opts.everyMs ?? 500);
  } catch (err) {
    if (!(err instanceof Unreachable)) throw err;
    console.error(`logscope: ${err.message}`);
    return 2;
  }
  if (opts.json) console.log(JSON.stringify(job));
  if (job.kind === 'verify') {
    const problems = job.problems ?? [];
    if (!opts.json) {
      for (const p of problems) console.log(`${p.path}: ${p.problem}: ${p.detail}`);
      console.log(
        `Verified ${n(job.files as number)} files (${n(job.events)} events, ${n(job.bytes ?? 0)} bytes): ${problems.length ? `${n(problems.length)} problem${problems.length === 1 ? '' : 's'}` : 'no problem'}.`,
      );
    }
    return problems.length ? 1 : 0;
  }
  const files = job.files as Exclude<ColdJob['files'], number>;
  const refused = files.filter((f) => f.status === 'refused');
  if (!opts.json) {
    for (const f of refused) console.log(`${f.path}: refused: ${f.detail}`);
    const of = (s: string) => files.filter((f) => f.status === s).length;
    console.log(
      `Imported ${n(of('imported'))} files (${n(job.events)} events); ${n(of('present'))} present already, ${n(refused.length)} refused.`,
    );
  }
  return refused.length ? 1 : 0;
}
