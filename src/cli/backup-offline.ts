import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { Config } from '../config/config.js';
import { COMMIT, STORE_FORMAT, VERSION } from '../version.js';
import { CliError } from './api-client.js';

/**
 * The commands that need no server (docs/api/backups.md): `backup verify` reads a backup
 * folder alone, `restore` makes a data dir from one, `version` names the release, its commit
 * and its store format. Their modules load only when they run.
 */
export function addOfflineBackupCommands(program: Command, backup: Command, loadConfig: () => Config): void {
  backup
    .command('verify <dir>')
    .description(
      'Check a backup folder alone (no server): its manifest, every file (size, sha256, Parquet rows), no unlisted file, the metadata database and the counts; changes nothing',
    )
    .option('--json', '{ok, problems, kind, events, files, bytes} as one JSON object', false)
    .addHelpText(
      'after',
      `
Prints one line per problem (path: problem: detail), the first bad file first, then a
summary. Exit code 0 when the backup is whole, 1 when it has any problem, 2 when <dir> is
no folder.`,
    )
    .action(async (dir: string, given: { json: boolean }) => {
      // `backup` has a --json of its own, which commander gives it wherever it is written.
      const o = { json: given.json || backup.opts<{ json?: boolean }>().json === true };
      const { verifyBackup, NotABackupFolder } = await import('../features/backups/index.js');
      try {
        const r = await verifyBackup(dir);
        if (o.json) console.log(JSON.stringify(r));
        else {
          for (const p of r.problems) console.log(`${p.path}: ${p.problem}: ${p.detail}`);
          console.log(
            r.ok
              ? `backup ${dir}: OK (${r.kind}, ${r.events} events, ${r.files} files, ${r.bytes} bytes)`
              : `backup ${dir}: ${r.problems.length} problem${r.problems.length === 1 ? '' : 's'}`,
          );
        }
        process.exitCode = r.ok ? 0 : 1;
      } catch (err) {
        if (!(err instanceof NotABackupFolder)) throw err;
        console.error(`logscope: ${dir} is not a folder`);
        process.exitCode = 2;
      }
    });

  program
    .command('restore <dir>')
    .description(
      'Make a data dir from a backup folder (and its chain), with no server running on it: built beside the target, then renamed into place',
    )
    .option('--data-dir <new>', 'the data dir to make (a new or empty folder; with --force, replaced)')
    .option(
      '--cold-dir <dir>',
      'where the cold files go (default <new>/cold; start the server with that coldDir)',
    )
    .option('--force', "replace the target's contents", false)
    .option('--json', 'the summary as one JSON object', false)
    .addHelpText(
      'after',
      `
Refused, with one line and nothing written, when the backup does not verify (verify's lines
first), is of a newer store format, the target is not empty (without --force), a running
server holds it, or the server is configured with PostgreSQL or ClickHouse. Exit code 0
when restored, 1 when refused or failed.`,
    )
    .action(async (dir: string, o: { dataDir?: string; coldDir?: string; force: boolean; json: boolean }) => {
      // `--data-dir` and `--cold-dir` are also the program's (every setting is a global
      // flag), and commander gives a program's option to the program wherever it is written:
      // each is read from the command's own options, else from the program's.
      const global = program.opts<{ dataDir?: string; coldDir?: string }>();
      const dataDir = o.dataDir ?? global.dataDir;
      const coldDir = o.coldDir ?? global.coldDir;
      if (!dataDir) throw new CliError('give the data dir to make: restore <dir> --data-dir <new>');
      const c = loadConfig();
      const { restoreBackup, RestoreError } = await import('../features/backups/index.js');
      try {
        const s = await restoreBackup({
          dir,
          dataDir,
          ...(coldDir !== undefined ? { coldDir } : {}),
          force: o.force,
          stores: { databaseUrl: c.databaseUrl, eventStoreUrl: c.eventStoreUrl },
        });
        if (o.json) console.log(JSON.stringify(s));
        else {
          console.log(
            `Restored backup ${s.backup_id} (${s.kind}, as of ${s.snapshot_at}) into ${s.data_dir}: ${s.events.hot} hot events, ${s.events.cold} cold events, ${s.users} users, ${s.files} files.`,
          );
          if (s.cold_dir_given)
            console.log(
              `The cold files are in ${s.cold_dir}: start the server with coldDir ${s.cold_dir} (--cold-dir / LOGSCOPE_COLD_DIR).`,
            );
        }
      } catch (err) {
        if (err instanceof RestoreError) {
          const lines = err.message.split('\n');
          for (const line of lines.slice(0, -1)) console.log(line);
          throw new CliError(lines[lines.length - 1] as string);
        }
        throw err;
      }
    });

  program
    .command('version')
    .description('Print the release, the commit it was built from and its store format (no server needed)')
    .option('--json', '{release, commit, store_format}', false)
    .action(async (o: { json: boolean }) => {
      const v = { release: VERSION, commit: COMMIT, store_format: STORE_FORMAT };
      console.log(
        o.json
          ? JSON.stringify(v)
          : `logscope ${v.release} (commit ${v.commit}, store format ${v.store_format})`,
      );
    });
}

/**
 * Before `serve` and `migrate` open the embedded stores: a data dir of another store format
 * is upgraded first, or refused (features/backups/upgrade.ts); a new one records this
 * release's format. The look is a file read; the upgrader loads only when it has work.
 */
export async function upgradeAtStart(c: Config, opts: { backup: boolean }): Promise<void> {
  if (c.databaseUrl || c.eventStoreUrl) return;
  // The names upgrade.ts and store-format.ts give these files.
  const cut = existsSync(path.join(c.dataDir, 'upgrade-in-progress.json'));
  const stores =
    existsSync(path.join(c.dataDir, 'meta.sqlite')) || existsSync(path.join(c.dataDir, 'events.duckdb'));
  let format: unknown = null;
  try {
    format = (
      JSON.parse(readFileSync(path.join(c.dataDir, 'store-format.json'), 'utf8')) as {
        store_format?: unknown;
      }
    ).store_format;
  } catch {
    // none (format 0, or a new data dir), or unreadable: the upgrader says which
  }
  if (!cut && format === STORE_FORMAT) return;
  const { recordStoreFormat, upgradeDataDir } = await import('../features/backups/index.js');
  if (!cut && !stores) {
    mkdirSync(c.dataDir, { recursive: true, mode: 0o700 });
    await recordStoreFormat(c.dataDir);
    return;
  }
  const failAfter = process.env.LOGSCOPE_UPGRADE_FAIL_AFTER;
  if (failAfter !== undefined && !/^[1-9]\d*$/.test(failAfter))
    throw new CliError(
      `LOGSCOPE_UPGRADE_FAIL_AFTER must be a whole number of at least 1, got "${failAfter}"`,
    );
  const [{ COMPONENTS }, { migrationsOf }, { openEventStore }] = await Promise.all([
    import('../features/index.js'),
    import('../features/root.js'),
    import('../event-store/open-event-store.js'),
  ]);
  await upgradeDataDir(c, {
    migrations: migrationsOf(COMPONENTS),
    openEvents: () => openEventStore(c),
    backup: opts.backup,
    say: (line) => console.error(`logscope: ${line}`),
    ...(failAfter ? { failAfter: Number(failAfter) } : {}),
  });
}
