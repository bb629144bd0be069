/**
 * `logscope backup <dir>` (docs/cli.md, docs/api/backups.md): asks the running server for
 * an online backup, shows its progress until it ends, then prints the folder, the events
 * per tier, the files and bytes. Ctrl-C cancels the job.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { apiFetch, CliError, type ServerTarget } from './api-client.js';

interface BackupJob {
  id: string;
  status: 'RUNNING' | 'DONE' | 'ERROR' | 'CANCELLED';
  kind: string;
  path: string;
  progress: {
    files_done: number;
    files_total: number;
    bytes_done: number;
    bytes_total: number;
    fraction: number;
  };
  bytes: number | null;
  counts: { events: { hot: number; cold: number } } | null;
  error: { code: string; detail: string } | null;
}

/** The server could not be reached, or refused the token: exit code 2. */
class Unreachable extends CliError {}
/** The server refused the request (a 4xx but 401/403): exit code 1. */
class Refused extends CliError {}

const n = (x: number) => x.toLocaleString('en-US');

async function ask(
  target: ServerTarget,
  urlPath: string,
  init: { method?: 'POST' | 'DELETE'; body?: unknown } = {},
): Promise<BackupJob> {
  let res: Response;
  try {
    res = await apiFetch(target, urlPath, {
      ...(init.method ? { method: init.method } : {}),
      ...(init.body === undefined
        ? {}
        : { body: JSON.stringify(init.body), contentType: 'application/json' }),
    });
  } catch (err) {
    throw new Unreachable((err as Error).message);
  }
  if (res.ok) return (await res.json()) as BackupJob;
  let detail = `${res.status} ${res.statusText}`;
  try {
    const body = (await res.json()) as { detail?: string; code?: string };
    if (body.detail) detail = `${body.detail}${body.code ? ` (${body.code})` : ''}`;
  } catch {
    // not JSON
  }
  throw res.status === 401 || res.status === 403 ? new Unreachable(detail) : new Refused(detail);
}

export interface BackupOptions {
  since?: string;
  maxBytesPerSecond?: number;
  json: boolean;
  everyMs?: number;
}

/** Runs a backup to its end; answers the exit code (0 DONE, 1 refused or failed, 2 unreachable). */
export async function backupCommand(target: ServerTarget, dir: string, opts: BackupOptions): Promise<number> {
  const body = {
    path: path.resolve(dir),
    ...(opts.since === undefined ? {} : { since: path.resolve(opts.since) }),
    ...(opts.maxBytesPerSecond === undefined ? {} : { max_bytes_per_second: opts.maxBytesPerSecond }),
  };
  let job: BackupJob;
  try {
    job = await ask(target, '/api/admin/backups', { method: 'POST', body });
  } catch (err) {
    console.error(`logscope: ${(err as Error).message}`);
    return err instanceof Unreachable ? 2 : 1;
  }
  const url = `/api/admin/backups/${encodeURIComponent(job.id)}`;
  let cancelled = false;
  const onSigint = () => {
    if (cancelled) return;
    cancelled = true;
    console.error('logscope: cancelling the backup…');
    ask(target, url, { method: 'DELETE' }).catch(() => undefined);
  };
  process.on('SIGINT', onSigint);
  let shown = -1;
  try {
    while (job.status === 'RUNNING') {
      const percent = Math.floor(job.progress.fraction * 100);
      if (!opts.json && percent !== shown) {
        shown = percent;
        console.error(
          `backup ${job.id}: ${percent} % (${n(job.progress.files_done)} of ${n(job.progress.files_total)} files, ${n(job.progress.bytes_done)} bytes)`,
        );
      }
      await new Promise((r) => setTimeout(r, opts.everyMs ?? 500));
      job = await ask(target, url);
    }
  } catch (err) {
    console.error(`logscope: ${(err as Error).message}`);
    return err instanceof Unreachable ? 2 : 1;
  } finally {
    process.off('SIGINT', onSigint);
  }
  if (opts.json) console.log(JSON.stringify(job));
  if (job.status !== 'DONE') {
    if (!opts.json)
      console.error(`logscope: backup ${job.id} ended ${job.status}: ${job.error?.detail ?? 'no detail'}`);
    return 1;
  }
  if (!opts.json) {
    const events = job.counts?.events ?? { hot: 0, cold: 0 };
    console.log(`Backup ${job.id} written to ${job.path}`);
    console.log(
      `${n(events.hot)} hot events, ${n(events.cold)} cold events; ${n(job.progress.files_total)} files, ${n(job.bytes ?? 0)} bytes.`,
    );
  }
  return 0;
}

/** `logscope backup <dir>`; answers the command, under which `backup verify` goes too. */
export function addBackupCommand(
  program: Command,
  target: (o: { url?: string; token?: string }) => ServerTarget,
  clientOptions: (cmd: Command, token?: string) => Command,
): Command {
  const backup = program
    .command('backup')
    .description(
      'Take an online backup of a running server (administrators) into a new or empty folder; "backup verify" checks one',
    )
    .argument('[dir]', 'the folder to write (made absolute from here)')
    .option('--since <dir>', 'an earlier complete backup of this data dir: an incremental backup')
    .option('--max-bytes-per-second <n>', 'cap the job’s writes (0: unthrottled)')
    .option('--json', 'the finished job as the API answers it (one JSON object)', false);
  clientOptions(backup, 'an administrator’s USER token').addHelpText(
    'after',
    `
Shows progress until the job ends, then the folder, the events per tier, the files and
bytes. Exit code 0 when it is DONE, 1 when refused or when it ends ERROR or CANCELLED, 2 when
the server cannot be reached or refuses the token. Ctrl-C cancels the job.`,
  );
  backup.action(
    async (
      dir: string | undefined,
      o: { since?: string; maxBytesPerSecond?: string; json: boolean; url?: string; token?: string },
    ) => {
      if (!dir)
        throw new CliError('backup needs a folder: logscope backup <dir> (or logscope backup verify <dir>)');
      let rate: number | undefined;
      if (o.maxBytesPerSecond !== undefined) {
        rate = Number(o.maxBytesPerSecond);
        if (!Number.isSafeInteger(rate) || rate < 0)
          throw new CliError(
            `--max-bytes-per-second must be an integer of at least 0, got "${o.maxBytesPerSecond}"`,
          );
      }
      process.exitCode = await backupCommand(target(o), dir, {
        json: o.json,
        ...(o.since === undefined ? {} : { since: o.since }),
        ...(rate === undefined ? {} : { maxBytesPerSecond: rate }),
      });
    },
  );
  return backup;
}
