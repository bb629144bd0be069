import { apiJson, CliError, type ServerTarget } from './api-client.js';
import { localIso } from './format.js';
import { progress } from './ingest-client.js';

/** A re-mining job as the API shows it (docs/api/patterns.md#re-mining). */
interface RemineJob {
  job_id: string;
  state: 'running' | 'done' | 'failed' | 'stopped';
  ts_from: number;
  ts_to: number;
  events_done: number;
  events_total: number;
  events_changed: number;
  error?: string;
}

/**
 * `logscope patterns remine`: starts a re-mine of the range on the server and shows its
 * progress until it ends. Ctrl-C (or SIGTERM) asks the server to stop it after its page
 * and waits for that. Answers the job as it ended; a failed job is a CliError.
 */
export async function remine(
  target: ServerTarget,
  range: { ts_from: number; ts_to: number },
  opts: { everyMs?: number } = {},
): Promise<RemineJob> {
  let job = (await apiJson<RemineJob>(target, '/api/patterns/remine', { method: 'POST', body: range })).body;
  const path = `/api/patterns/remine/${encodeURIComponent(job.job_id)}`;
  process.stderr.write(
    `Re-mining ${localIso(job.ts_from)} to ${localIso(job.ts_to)} (job ${job.job_id}); Ctrl-C stops it.\n`,
  );
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    process.stderr.write('\nStopping after the page under way…\n');
    void apiJson(target, path, { method: 'DELETE' }).catch(() => undefined);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  let bar: ReturnType<typeof progress> | null = null;
  try {
    while (job.state === 'running') {
      await new Promise((r) => setTimeout(r, opts.everyMs ?? 500));
      job = (await apiJson<RemineJob>(target, path)).body;
      bar ??= job.events_total > 0 ? progress('Re-mining (events)', job.events_total) : null;
      bar?.update(job.events_done);
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  bar?.done(job.events_done);
  if (job.state === 'failed') throw new CliError(`re-mining failed: ${job.error ?? 'unknown error'}`);
  console.log(
    `${job.state === 'done' ? 'Done' : 'Stopped'}: ${job.events_done.toLocaleString('en-US')} of ${job.events_total.toLocaleString('en-US')} events re-mined, ${job.events_changed.toLocaleString('en-US')} with a new pattern_id.`,
  );
  return job;
}
