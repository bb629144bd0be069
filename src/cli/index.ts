#!/usr/bin/env node
import { createReadStream, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Command, Option } from 'commander';
import { type Config, ConfigError, describeSettings, loadConfig } from '../config/config.js';
import { startupMessage } from '../errors/startup.js';
import type { MetaRuntime } from '../runtime.js';
import { PERMISSIONS, type Permission } from '../shared/permissions.js';
import { VERSION } from '../version.js';
import { CliError, serverTarget } from './api-client.js';
import { addBackupCommand } from './backup.js';
import { addOfflineBackupCommands, upgradeAtStart } from './backup-offline.js';
import { demoGenerator } from './demo-generator.js';
import { progress, sendBatch } from './ingest-client.js';
import { MAX_LIMIT, printSearch, runSearch, timeRange } from './search.js';

// The server, the stores and their engines load only for the commands that use them, so
// the HTTP clients (search, tail, ingest, demo) start quickly.

const program = new Command('logscope')
  .description('Logscope: self-hosted log retrieval and analysis')
  .version(VERSION)
  .option('--config <file>', 'JSON config file (also LOGSCOPE_CONFIG)')
  .showHelpAfterError()
  .addHelpText(
    'after',
    `
search, tail, ingest, demo, patterns remine, cold and backup talk to a running server over HTTP (--url, default
http://127.0.0.1:<port>; --token, default <data-dir>/admin-token). migrate, user and
token open the metadata store of --data-dir themselves and refuse a data dir that holds
none. A query starting with "-" goes after "--": logscope search -- '-host:web-1'.`,
  );

for (const s of describeSettings()) {
  program.addOption(new Option(`${s.flag} <value>`, `${s.description} [env ${s.env}]`));
}

/** The configuration the running command loaded (start-up errors name its data dir). */
let loaded: Config | undefined;

function config(): Config {
  const opts = program.opts<Record<string, string | undefined>>();
  const flags: Record<string, unknown> = {};
  for (const s of describeSettings()) {
    const camel = s.flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (opts[camel] !== undefined) flags[s.key] = opts[camel];
  }
  loaded = loadConfig({ flags, ...(opts.config ? { file: opts.config } : {}) });
  return loaded;
}

/**
 * Commands that open the metadata store beside the server never create one: with SQLite
 * (no databaseUrl) and no `<dataDir>/meta.sqlite`, the data dir is most likely not the
 * server's, and opening it would leave an empty store (and the dir) behind.
 */
function requireStore(c: Config): void {
  if (c.databaseUrl || existsSync(path.join(c.dataDir, 'meta.sqlite'))) return;
  throw new CliError(
    `no Logscope data in ${c.dataDir} (start the server once with "npm start", or pass --data-dir / LOGSCOPE_DATA_DIR)`,
  );
}

async function withRuntime<T>(fn: (rt: MetaRuntime) => Promise<T>, backedUp = false): Promise<T> {
  const c = config();
  requireStore(c);
  const { openMetaRuntime } = await import('../runtime.js');
  const rt = await openMetaRuntime(c, { backedUp });
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}

program
  .command('serve', { isDefault: true })
  .description('Serve the HTTP API (creates the admin user and token on first start)')
  .action(async () => {
    const c = config();
    // Whatever the engines create is private (serve says it again for itself).
    process.umask(0o077);
    // A data dir of another store format is upgraded (or refused) before anything opens it.
    await upgradeAtStart(c, { backup: true });
    // An embedded metadata store is always reachable, so the event store need not wait for
    // it: its worker starts now and opens its engine while the server's modules load (each
    // took about a second of a restart's three).
    const events = c.databaseUrl
      ? undefined
      : import('../event-store/open-event-store.js').then((m) => m.openEventStore(c));
    events?.catch(() => undefined);
    const { serve } = await import('../main.js');
    await serve(c, events);
  });

program
  .command('migrate')
  .description(
    'Bring the stores up to date (refuses a data dir without a store); an older store format gets a backup first',
  )
  .option('--no-backup', 'no automatic backup before an upgrade (you took your own copy)')
  .option('--backed-up', 'PostgreSQL metadata holding data: you took a pg_dump, migrate it', false)
  .action(async (o: { backup: boolean; backedUp: boolean }) => {
    requireStore(config());
    await upgradeAtStart(config(), { backup: o.backup });
    await withRuntime(async (rt) => {
      const { runMigrations } = await import('../metadata/migrator.js');
      const { COMPONENTS } = await import('../features/index.js');
      const { migrationsOf } = await import('../features/root.js');
      const applied = await runMigrations(rt.meta.db, rt.meta.dialect, migrationsOf(COMPONENTS));
      console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Schema is up to date.');
    }, o.backedUp);
  });

const user = program.command('user').description('Manage users (in the metadata store of --data-dir)');
user
  .command('create <username>')
  .description('Create a user (the same rules as POST /api/users: password 8 to 1024 characters)')
  .option('--password <password>', 'password for POST /api/auth/login (none: the user cannot log in)')
  .option('--admin', 'give admin rights', false)
  .option('--permissions <list>', `comma-separated: ${PERMISSIONS.join(', ')}`, '')
  .action(async (username: string, o: { password?: string; admin: boolean; permissions: string }) => {
    const permissions = [...new Set(o.permissions.split(',').filter(Boolean))];
    const unknown = permissions.filter((p) => !PERMISSIONS.includes(p as Permission));
    if (unknown.length) throw new ConfigError(`Unknown permission(s): ${unknown.join(', ')}`);
    const input = { username, password: o.password, is_admin: o.admin, permissions };
    const { checkUserCreate } = await import('./user-input.js');
    checkUserCreate(input);
    await withRuntime(async (rt) => {
      const created = await rt.services.users.create(null, {
        ...input,
        permissions: permissions as Permission[],
      });
      console.log(JSON.stringify(created, null, 2));
    });
  });

const token = program.command('token').description('Manage API tokens (in the metadata store of --data-dir)');
token
  .command('create <username>')
  .description('Create a token for a user and print its secret key (shown once)')
  .addOption(new Option('--type <type>', 'token type').choices(['USER', 'INGEST']).default('USER'))
  .option('--name <name>', 'a name to recognise it by', '')
  .option('--expires-at <iso>', 'expiry (ISO 8601)')
  .action(async (username: string, o: { type: 'USER' | 'INGEST'; name: string; expiresAt?: string }) => {
    const input = { token_type: o.type, name: o.name, expires_at: o.expiresAt };
    const { checkTokenCreate } = await import('./user-input.js');
    checkTokenCreate(input);
    await withRuntime(async (rt) => {
      const owner = await rt.meta.db
        .selectFrom('users')
        .select('id')
        .where('username', '=', username)
        .executeTakeFirst();
      if (!owner) throw new ConfigError(`No user "${username}".`);
      const created = await rt.services.tokens.create(owner.id, {
        ...input,
        expires_at: o.expiresAt ?? null,
      });
      console.log(created.secret_key);
    });
  });

const clientOptions = (cmd: Command, token = 'USER token') =>
  cmd
    .option('--url <url>', 'server URL (default: http://127.0.0.1:<port>)')
    .option('--token <key>', `${token} (default: <data-dir>/admin-token)`);

clientOptions(
  program
    .command('search [query]')
    .description(
      'Search a running server: matching events, one a line (time, severity, host, app, message), oldest first',
    )
    .option('--since <duration>', 'the last 15m, 1h, 7d, ... (s, m, h, d, w)', '1h')
    .option('--from <iso>', 'from this time (ISO 8601; without an offset: local time); excludes --since')
    .option('--to <iso>', 'up to this time (default: now; with --since alone: the --since before it)')
    .option('--limit <n>', `the newest n matching events (up to ${MAX_LIMIT})`, '100')
    .option('--json', 'one JSON object a line (NDJSON), each event as the API returns it', false),
)
  .addHelpText(
    'after',
    `
The query is the query language of POST /api/query ("params.query"); none matches everything.
With pipes (| stats, top, timechart, where, …) it runs as a Table and prints its rows.
Colour only on a terminal (NO_COLOR turns it off). Exit code 0, or 1 with one line on stderr.

Examples:
  $ logscope search 'severity:>=error' --since 15m
  $ logscope search 'app:sshd "Failed password"' --from 2026-11-20T08:00 --to 2026-11-20T12:00
  $ logscope search 'host:web-1' --limit 1000 --json | jq .message
  $ logscope search 'status:>=500 | stats count() as n by host | sort -n' --since 1d`,
  )
  .action(
    async (
      query: string | undefined,
      o: {
        since: string;
        from?: string;
        to?: string;
        limit: string;
        json: boolean;
        url?: string;
        token?: string;
      },
      cmd: Command,
    ) => {
      const limit = positiveInt('--limit', o.limit);
      if (limit > MAX_LIMIT) throw new CliError(`--limit is at most ${MAX_LIMIT}, got ${limit}`);
      const time_range = timeRange({ ...o, sinceGiven: cmd.getOptionValueSource('since') === 'cli' });
      const target = serverTarget(config(), o);
      const q = await runSearch(target, { query: query ?? '', time_range, page_size: limit });
      printSearch(q, o.json);
    },
  );

clientOptions(
  program
    .command('tail [query]')
    .description(
      'Follow a running server live (websocket): print matching events as they are stored, each once, until Ctrl-C',
    )
    .option('--json', 'one JSON object a line (NDJSON), each event as the API returns it', false),
)
  .addHelpText(
    'after',
    `
Shows events stored after it started whose time lies within the last 15 minutes, each
once, oldest first within each update; a status line goes to stderr. Ctrl-C or SIGTERM
closes the connection and exits 0.

Examples:
  $ logscope tail 'severity:>=warning'
  $ logscope tail 'app:nginx status:>=500' --json`,
  )
  .action(async (query: string | undefined, o: { json: boolean; url?: string; token?: string }) => {
    const target = serverTarget(config(), o);
    const { tail } = await import('./tail.js');
    await tail(target, { query: query ?? '', json: o.json });
  });

const patternsCommand = program
  .command('patterns')
  .description('Message templates (patterns) of a running server');
clientOptions(
  patternsCommand
    .command('remine')
    .description(
      'Re-mine the stored events of a time range on a running server (admins): they get the pattern ids ingest gives now; shows progress until done',
    )
    .option('--since <duration>', 'the last 15m, 1h, 7d, ... (s, m, h, d, w)')
    .option('--from <iso>', 'from this time (ISO 8601; without an offset: local time); excludes --since')
    .option('--to <iso>', 'up to this time (default: now)'),
)
  .addHelpText(
    'after',
    `
Runs in the server's background, one job at a time, a page of events at a time; ingest and
queries go on meanwhile. Ctrl-C asks the server to stop it after the page under way.
Exit code 0 when it is done or stopped, 1 when it failed or could not start (another job
runs: 409).

Examples:
  $ logscope patterns remine --since 7d
  $ logscope patterns remine --from 2026-11-01T00:00Z --to 2026-11-20T00:00Z`,
  )
  .action(async (o: { since?: string; from?: string; to?: string; url?: string; token?: string }) => {
    if (o.since === undefined && o.from === undefined)
      throw new CliError('give the range to re-mine: --since, or --from (and --to)');
    const range = timeRange({
      ...o,
      to: o.to ?? new Date().toISOString(),
      sinceGiven: o.since !== undefined,
    }) as { ts_from: number; ts_to: number };
    const target = serverTarget(config(), o);
    const { remine } = await import('./patterns-remine.js');
    await remine(target, range);
  });

addOfflineBackupCommands(
  program,
  addBackupCommand(program, (o) => serverTarget(config(), o), clientOptions),
  config,
);

const coldCommands = program
  .command('cold')
  .description('The cold tier of a running server (administrators): verify it, import files into it');
const coldStream = (v: string | undefined) => (v === undefined ? undefined : positiveInt('--stream', v));
clientOptions(
  coldCommands
    .command('verify')
    .description(
      'Check every cold file against its record (present, size, sha256, readable, rows, time range) and every Parquet file under coldDir against the records; changes nothing',
    )
    .option('--stream <id>', 'only the files filed under this stream')
    .option('--no-checksums', 'skip the sha256 of each file (reads each footer only)')
    .option('--json', 'the job as the API answers it (one JSON object)', false),
)
  .addHelpText(
    'after',
    `
Prints one line per problem (path: problem: detail), then a summary. Exit code 0 when
there is none, 1 when there is any, 2 when the server cannot be reached or refuses the token.`,
  )
  .action(async (o: { stream?: string; checksums: boolean; json: boolean; url?: string; token?: string }) => {
    const target = serverTarget(config(), o);
    const streamId = coldStream(o.stream);
    const { coldCommand } = await import('./cold.js');
    process.exitCode = await coldCommand(
      target,
      { kind: 'verify', checksums: o.checksums, ...(streamId !== undefined ? { streamId } : {}) },
      { json: o.json },
    );
  });
clientOptions(
  coldCommands
    .command('import <path>')
    .description(
      'Record the Parquet files of a file or folder inside coldDir (relative to it, or absolute), e.g. an archived day folder copied back',
    )
    .option(
      '--stream <id>',
      'file them under this stream (default: their folder, else their metadata, else Default)',
    )
    .option('--json', 'the job as the API answers it (one JSON object)', false),
)
  .addHelpText(
    'after',
    `
Prints one line per refused file (path: refused: why), then a summary. Exit code 0 when
none is refused, 1 when any is, 2 when the server cannot be reached or refuses the token.`,
  )
  .action(async (p: string, o: { stream?: string; json: boolean; url?: string; token?: string }) => {
    const target = serverTarget(config(), o);
    const streamId = coldStream(o.stream);
    const { coldCommand } = await import('./cold.js');
    process.exitCode = await coldCommand(
      target,
      { kind: 'import', path: p, ...(streamId !== undefined ? { streamId } : {}) },
      { json: o.json },
    );
  });

program
  .command('ingest <file>')
  .description('Send an NDJSON file (or - for stdin) to a running server, with progress')
  .option('--url <url>', 'server URL (default: http://127.0.0.1:<port>)')
  .option('--token <key>', 'INGEST or USER token (default: <data-dir>/admin-token)')
  .option('--batch <n>', 'records per request', '1000')
  .action(async (file: string, o: { url?: string; token?: string; batch: string }) => {
    const target = serverTarget(config(), o);
    const batchSize = positiveInt('--batch', o.batch);
    const input = file === '-' ? process.stdin : createReadStream(file);
    const total = file === '-' ? undefined : statSync(file).size;
    const bar = progress(`Ingesting ${file === '-' ? 'stdin' : file} (bytes)`, total);
    const sum = { accepted: 0, rejected: 0, errors: [] as Array<{ index: number; detail: string }> };
    let bytes = 0;
    let lineNo = 0;
    let batch: string[] = [];
    let batchStart = 0;
    const flush = async () => {
      if (!batch.length) return;
      const r = await sendBatch(target, batch);
      sum.accepted += r.accepted;
      sum.rejected += r.rejected;
      for (const e of r.errors)
        if (sum.errors.length < 20) sum.errors.push({ index: batchStart + e.index, detail: e.detail });
      batch = [];
      batchStart = lineNo;
      bar.update(bytes);
    };
    for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
      bytes += Buffer.byteLength(line) + 1;
      if (!line.trim()) continue;
      lineNo++;
      batch.push(line);
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    bar.done(bytes);
    console.log(`Accepted ${sum.accepted}, rejected ${sum.rejected}.`);
    for (const e of sum.errors) console.log(`  record ${e.index + 1}: ${e.detail}`);
    if (sum.rejected) process.exitCode = 2;
  });

program
  .command('demo')
  .description(
    'Fill a running server with realistic sample events over the last 24 h, then keep sending live',
  )
  .option('--url <url>', 'server URL (default: http://127.0.0.1:<port>)')
  .option('--token <key>', 'INGEST or USER token (default: <data-dir>/admin-token)')
  .option('--backfill <n>', 'events spread over the last 24 hours', '50000')
  .option('--rate <n>', 'live events per second afterwards (0 = stop after the backfill)', '20')
  .option('--seed <n>', 'random seed', '1')
  .action(async (o: { url?: string; token?: string; backfill: string; rate: string; seed: string }) => {
    const target = serverTarget(config(), o);
    const backfill = positiveInt('--backfill', o.backfill, true);
    const rate = positiveInt('--rate', o.rate, true);
    const gen = demoGenerator(positiveInt('--seed', o.seed, true));
    const now = Date.now();
    const bar = progress('Backfilling the last 24 h', backfill);
    let made = 0;
    let sentCount = 0;
    // Four requests in flight: each waits for its group commit, so one alone would idle.
    const worker = async () => {
      while (made < backfill) {
        const start = made;
        const n = Math.min(2000, backfill - start);
        made += n;
        const lines = Array.from({ length: n }, (_, i) =>
          JSON.stringify(gen.next(now - 86_400_000 + Math.floor(((start + i) / backfill) * 86_400_000))),
        );
        await sendBatch(target, lines);
        sentCount += n;
        bar.update(sentCount);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    bar.done(backfill);
    if (rate === 0) return;
    console.log(`Now sending ${rate} events/s live to ${target.url} (Ctrl-C to stop).`);
    let sent = 0;
    let stop = false;
    process.once('SIGINT', () => {
      stop = true;
    });
    while (!stop) {
      const tick = Date.now();
      const lines = Array.from({ length: rate }, (_, i) =>
        JSON.stringify(gen.next(tick + Math.floor((i * 1000) / rate))),
      );
      await sendBatch(target, lines);
      sent += rate;
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - tick))));
    }
    console.log(`Sent ${sent} live events.`);
  });

function positiveInt(flag: string, value: string, allowZero = false): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1))
    throw new ConfigError(
      `${flag} must be a ${allowZero ? 'non-negative' : 'positive'} integer, got "${value}"`,
    );
  return n;
}

// Output piped into `head` and the like: stop quietly when the reader has gone.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

program.parseAsync(process.argv).catch((err: unknown) => {
  const e = err as Error & { status?: number; code?: string };
  // A start-up failure someone could foresee (port in use, PostgreSQL down, disk full,
  // the data dir locked) is one line; only the unforeseen get their stack.
  const startup = startupMessage(err, {
    dataDir: loaded?.dataDir ?? '(data dir)',
    port: loaded?.port ?? 0,
    host: loaded?.host ?? '',
    databaseUrl: loaded?.databaseUrl ?? '',
  });
  const known = e instanceof ConfigError || e instanceof CliError || e.status || e.code === 'ENOENT';
  console.error(`logscope: ${startup ?? (known ? e.message : (e.stack ?? String(e)))}`);
  process.exit(1);
});
