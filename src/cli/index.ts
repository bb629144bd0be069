#!/usr/bin/env node
import { Command, Option } from 'commander';
import { type Config, ConfigError, describeSettings, loadConfig } from '../config/config.js';
import { PERMISSIONS, type Permission } from '../domain/auth/identity.js';
import { serve } from '../main.js';
import { runMigrations } from '../metadata/migrator.js';
import { openRuntime } from '../runtime.js';
import { VERSION } from '../version.js';

const program = new Command('logscope')
  .description('Logscope: self-hosted log retrieval and analysis')
  .version(VERSION)
  .option('--config <file>', 'JSON config file (also LOGSCOPE_CONFIG)')
  .showHelpAfterError();

for (const s of describeSettings()) {
  program.addOption(new Option(`${s.flag} <value>`, `${s.description} [env ${s.env}]`));
}

function config(): Config {
  const opts = program.opts<Record<string, string | undefined>>();
  const flags: Record<string, unknown> = {};
  for (const s of describeSettings()) {
    const camel = s.flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (opts[camel] !== undefined) flags[s.key] = opts[camel];
  }
  return loadConfig({ flags, ...(opts.config ? { file: opts.config } : {}) });
}

async function withRuntime<T>(fn: (rt: Awaited<ReturnType<typeof openRuntime>>) => Promise<T>): Promise<T> {
  const rt = await openRuntime(config());
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

program.parseAsync(process.argv).catch((err: unknown) => {
  const e = err as Error & { status?: number };
  console.error(`logscope: ${e instanceof ConfigError || e.status ? e.message : (e.stack ?? String(e))}`);
  process.exit(1);
});
