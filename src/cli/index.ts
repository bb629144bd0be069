#!/usr/bin/env node
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Command, Option } from 'commander';
import { type Config, ConfigError, describeSettings, loadConfig } from '../config/config.js';
import { PERMISSIONS, type Permission } from '../domain/auth/identity.js';
import { startupNoSpaceMessage } from '../errors/errors.js';
import { serve } from '../main.js';
import { runMigrations } from '../metadata/migrator.js';
import { type MetaRuntime, openMetaRuntime } from '../runtime.js';
import { VERSION } from '../version.js';
import { demoGenerator } from './demo-generator.js';
import { CliError, ingestTarget, progress, sendBatch } from './ingest-client.js';

const program = new Command('logscope')
  .description('Logscope: self-hosted log retrieval and analysis')
  .version(VERSION)
  .option('--config <file>', 'JSON config file (also LOGSCOPE_CONFIG)')
  .showHelpAfterError();

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

async function withRuntime<T>(fn: (rt: MetaRuntime) => Promise<T>): Promise<T> {
  const rt = await openMetaRuntime(config());
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}

program
  .command('serve', { isDefault: true })
  .description('Serve the HTTP API (creates the admin user and token on first start)')
  .action(async () => serve(config()));

program
  .command('migrate')
  .description('Bring the metadata store schema up to date')
  .action(() =>
    withRuntime(async (rt) => {
      const applied = await runMigrations(rt.meta.db, rt.meta.dialect);
      console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Schema is up to date.');
    }),
  );

const user = program.command('user').description('Manage users');
user
  .command('create <username>')
  .description('Create a user')
  .option('--password <password>', 'password for POST /api/auth/login')
  .option('--admin', 'give admin rights', false)
  .option('--permissions <list>', `comma-separated: ${PERMISSIONS.join(', ')}`, '')
  .action((username: string, o: { password?: string; admin: boolean; permissions: string }) =>
    withRuntime(async (rt) => {
      const permissions = o.permissions.split(',').filter(Boolean);
      const unknown = permissions.filter((p) => !PERMISSIONS.includes(p as Permission));
      if (unknown.length) throw new ConfigError(`Unknown permission(s): ${unknown.join(', ')}`);
      const created = await rt.services.users.create(null, {
        username,
        password: o.password,
        is_admin: o.admin,
        permissions: permissions as Permission[],
      });
      console.log(JSON.stringify(created, null, 2));
    }),
  );

const token = program.command('token').description('Manage API tokens');
token
  .command('create <username>')
  .description('Create a token for a user and print its secret key (shown once)')
  .addOption(new Option('--type <type>', 'token type').choices(['USER', 'INGEST']).default('USER'))
  .option('--name <name>', 'a name to recognise it by', '')
  .option('--expires-at <iso>', 'expiry (ISO 8601)')
  .action((username: string, o: { type: 'USER' | 'INGEST'; name: string; expiresAt?: string }) =>
    withRuntime(async (rt) => {
      const owner = await rt.meta.db
        .selectFrom('users')
        .select('id')
        .where('username', '=', username)
        .executeTakeFirst();
      if (!owner) throw new ConfigError(`No user "${username}".`);
      const created = await rt.services.tokens.create(owner.id, {
        token_type: o.type,
        name: o.name,
        expires_at: o.expiresAt ?? null,
      });
      console.log(created.secret_key);
    }),
  );

program
  .command('ingest <file>')
  .description('Send an NDJSON file (or - for stdin) to a running server, with progress')
  .option('--url <url>', 'server URL (default: http://127.0.0.1:<port>)')
  .option('--token <key>', 'INGEST or USER token (default: <data-dir>/admin-token)')
  .option('--batch <n>', 'records per request', '1000')
  .action(async (file: string, o: { url?: string; token?: string; batch: string }) => {
    const target = ingestTarget(config(), o);
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
    const target = ingestTarget(config(), o);
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

program.parseAsync(process.argv).catch((err: unknown) => {
  const e = err as Error & { status?: number; code?: string };
  const noSpace = startupNoSpaceMessage(err, loaded?.dataDir ?? '(data dir)');
  const known = e instanceof ConfigError || e instanceof CliError || e.status || e.code === 'ENOENT';
  console.error(`logscope: ${noSpace ?? (known ? e.message : (e.stack ?? String(e)))}`);
  process.exit(1);
});
