import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import type { Config } from './config/config.js';
import type { Bus, ClusterTopics } from './core/bus.js';
import type { Log } from './core/log.js';
import { GeoIp } from './enrich/geoip.js';
import { describePostgres, isPostgresUnreachable, pgReason, StartupError } from './errors/startup.js';
import type { EventStore } from './event-store/event-store.js';
import { openEventStore } from './event-store/open-event-store.js';
import { coldFilesReadable } from './features/cold/index.js';
import type { Component, Platform, Services } from './features/component.js';
import { identityServices } from './features/identity/index.js';
import { COMPONENTS } from './features/index.js';
import { createPlatform } from './features/platform.js';
import { compose, migrationsOf, type Root } from './features/root.js';
import type { HealthCheck } from './http/routes/health.js';
import { type MetadataDb, openMetadataDb } from './metadata/database.js';
import { SqlJobStore } from './metadata/query-jobs-repository.js';

/** The metadata store and its services: what CLI commands beside a running server use. */
export interface MetaRuntime {
  config: Config;
  meta: MetadataDb;
  services: Pick<Services, 'tokens' | 'users'>;
  close(): Promise<void>;
}

/** Everything a serving process opens. */
export interface Runtime extends MetaRuntime {
  events: EventStore;
  /** What every component stands on: stores, batcher, bus, logger. */
  platform: Platform;
  /** The built components (routes, metrics, start and stop). */
  root: Root;
  services: Services;
  /** Problems found while opening that do not stop the server (e.g. an unreadable GeoIP file): log them once. */
  warnings: readonly string[];
}

export interface RuntimeOptions {
  pgSchema?: string;
  /** The server's logger, given to the services (silent without one). */
  log?: Log;
  /** Told once when PostgreSQL does not answer and start-up waits for it. */
  onWait?: (message: string) => void;
  /**
   * The event store, already opening (an embedded metadata store: the CLI starts it with the
   * process); closed here when the metadata store cannot open.
   */
  events?: Promise<EventStore>;
  /** Told when the bus to the other nodes goes down or comes back (cluster mode). */
  onBusState?: (connected: boolean, where: string) => void;
  /**
   * The components composed (COMPONENTS): a test swaps one for another build of it (the
   * intake component over a protocol of its own).
   */
  components?: readonly Component[];
  /**
   * The operator took a backup of the PostgreSQL metadata (`migrate --backed-up`): its
   * pending migrations run even on a database holding data (docs/operations/upgrade.md).
   */
  backedUp?: boolean;
}

/** How long a node's lease on a query or report lasts without renewal (ms). */
export const LEASE_MS = 3000;

/** This process's id among the nodes of a cluster: host, pid and a random part. */
function nodeId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/** The files the stores keep in the data dir (those that exist are made private). */
const STORE_FILES = [
  'meta.sqlite',
  'meta.sqlite-wal',
  'meta.sqlite-shm',
  'meta.sqlite-journal',
  'events.duckdb',
  'events.duckdb.wal',
  'admin-token',
  'admin-password',
];

/**
 * Files are private: the data dir `0700` (an existing one tightened) and the
 * files in it `0600`, whatever the umask. Files the engines create later take their mode
 * from the database file (SQLite) or the umask the server sets (main.ts).
 */
export function privateDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  for (const name of STORE_FILES) {
    const file = path.join(dataDir, name);
    if (existsSync(file)) chmodSync(file, 0o600);
  }
  const reports = path.join(dataDir, 'reports');
  if (existsSync(reports)) {
    chmodSync(reports, 0o700);
    for (const name of readdirSync(reports)) chmodSync(path.join(reports, name), 0o600);
  }
}

/**
 * Opens the metadata store. An unreachable PostgreSQL (down, starting, the network not up
 * yet: common at boot) is retried with backoff for `databaseConnectSeconds`; then, or on
 * a refusal (password, missing database), start-up stops with one line.
 */
async function connectMeta(config: Config, opts: RuntimeOptions): Promise<MetadataDb> {
  const open = () =>
    openMetadataDb({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      migrations: migrationsOf(COMPONENTS),
      postgresUpgrade: opts.backedUp || config.upgradeBackup === 'off' ? 'allow' : 'refuse',
      ...(opts.pgSchema ? { pgSchema: opts.pgSchema } : {}),
    });
  if (!config.databaseUrl) return open();
  const deadline = Date.now() + config.databaseConnectSeconds * 1000;
  let delay = 500;
  let told = false;
  for (;;) {
    try {
      return await open();
    } catch (err) {
      if (!isPostgresUnreachable(err)) throw err;
      const where = describePostgres(config.databaseUrl);
      if (Date.now() + delay > deadline) {
        const waited = config.databaseConnectSeconds
          ? ` after trying for ${config.databaseConnectSeconds} s`
          : '';
        throw new StartupError(
          `Cannot start: PostgreSQL at ${where} is unreachable (${pgReason(err)})${waited}; check that it runs and databaseUrl (LOGSCOPE_DATABASE_URL), or wait longer with databaseConnectSeconds.`,
        );
      }
      if (!told) {
        told = true;
        opts.onWait?.(
          `PostgreSQL at ${where} is unreachable (${pgReason(err)}); retrying for up to ${config.databaseConnectSeconds} s`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 5000);
    }
  }
}

async function openMeta(config: Config, opts: RuntimeOptions): Promise<MetadataDb> {
  privateDataDir(config.dataDir);
  const meta = await connectMeta(config, opts);
  // SQLite created its files with the default mode: tighten them now they exist.
  privateDataDir(config.dataDir);
  return meta;
}

export async function openMetaRuntime(config: Config, opts: RuntimeOptions = {}): Promise<MetaRuntime> {
  const meta = await openMeta(config, opts);
  return { config, meta, services: identityServices(meta, config), close: () => meta.close() };
}

/** Opens both stores (the event store holds an exclusive lock on its file). */
export async function openRuntime(config: Config, opts: RuntimeOptions = {}): Promise<Runtime> {
  // The metadata store first: a server that cannot reach it creates no event store (an
  // embedded one is always reachable: the CLI may have started the event store already).
  let meta: Awaited<ReturnType<typeof openMeta>>;
  try {
    meta = await openMeta(config, opts);
  } catch (err) {
    await opts.events?.then((e) => e.close()).catch(() => undefined);
    throw err;
  }
  let events: EventStore;
  try {
    events = await (opts.events ?? openEventStore(config));
  } catch (err) {
    await meta.close();
    throw err;
  }
  privateDataDir(config.dataDir);
  const { geoip, warnings } = await GeoIp.open({ cityPath: config.geoipCityPath });
  const node = nodeId();
  // A cluster node: the bus over Redis, query jobs in the shared metadata store.
  // The Redis client is loaded only by a cluster node.
  const RedisBus = config.busUrl ? (await import('./cluster/redis-bus.js')).RedisBus : undefined;
  const cluster = RedisBus
    ? {
        bus: RedisBus.open<ClusterTopics>(config.busUrl, {
          node,
          ...(opts.onBusState ? { onState: opts.onBusState } : {}),
        }) as Bus<ClusterTopics>,
        jobStore: new SqlJobStore(meta.db, { node, leaseMs: LEASE_MS }),
      }
    : null;
  const platform = createPlatform(meta, events, config, {
    geoip,
    node,
    leaseMs: LEASE_MS,
    ...(opts.log ? { log: opts.log } : {}),
    ...(cluster ? { cluster } : {}),
  });
  const root = compose(platform, opts.components ?? COMPONENTS);
  const close = async () => {
    await root.stop();
    await platform.bus.close();
    const began = Date.now();
    await events.close();
    if (Date.now() - began >= 2_000)
      platform.log.warn({ component: 'event store', ms: Date.now() - began }, 'a component was slow to stop');
    await meta.close();
  };
  try {
    await root.start();
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
  return { config, meta, events, platform, root, services: root.services, warnings, close };
}

/** What /api/health checks: each store, with its kind (`dependencies` in its answer). */
export function healthChecks(rt: Pick<Runtime, 'meta' | 'events' | 'platform'>): HealthCheck[] {
  const bus = rt.platform.bus;
  return [
    // Without the bus nodes poll the shared store instead: a warning, not a failure.
    { name: 'bus', kind: bus.kind, check: () => bus.check(), optional: true },
    {
      name: 'metadata',
      kind: rt.meta.dialect,
      check: async () => void (await sql`select 1`.execute(rt.meta.db)),
    },
    { name: 'events', kind: rt.events.kind, check: () => rt.events.ping() },
    // The embedded store's cold tier: its directory and every recorded file readable.
    ...(rt.events.kind === 'duckdb'
      ? [
          {
            name: 'cold',
            kind: 'directory',
            check: () => coldFilesReadable(rt.events, rt.platform.config.coldDir),
          },
        ]
      : []),
  ];
}

/**
 * On an empty store, creates `admin` with a password and a USER token, writes them to
 * `<data_dir>/admin-password` and `<data_dir>/admin-token` (0600) and returns them so the
 * caller can print them once.
 */
export async function bootstrapAdmin(rt: MetaRuntime): Promise<{ token: string; password: string } | null> {
  const made = await rt.services.users.bootstrapAdmin();
  if (!made) return null;
  for (const [name, secret] of [
    ['admin-token', made.token.secret_key],
    ['admin-password', made.password],
  ] as const) {
    const file = path.join(rt.config.dataDir, name);
    writeFileSync(file, `${secret}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  return { token: made.token.secret_key, password: made.password };
}
