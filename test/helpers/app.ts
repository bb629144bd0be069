import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { type Log, silentLog } from '../../src/core/log.js';
import type { Component } from '../../src/features/component.js';
import { bootstrapAdmin, healthChecks, openRuntime, type Runtime } from '../../src/runtime.js';
import type { Permission } from '../../src/shared/permissions.js';
import { clickHouseTest, clickHouseTestDatabase, dropClickHouseDatabase } from './clickhouse.js';

/**
 * The metadata backend under test: SQLite by default; PostgreSQL when
 * LOGSCOPE_TEST_DATABASE_URL is set (CI runs the whole suite once on each).
 */
export const TEST_DATABASE_URL = process.env.LOGSCOPE_TEST_DATABASE_URL ?? '';
export const BACKEND = TEST_DATABASE_URL ? 'postgres' : 'sqlite';

/**
 * The event store under test: DuckDB in the data dir by default; ClickHouse (the servers
 * of LOGSCOPE_TEST_CLICKHOUSE_URL, a database per app) when LOGSCOPE_TEST_EVENT_STORE is
 * `clickhouse` (CI runs the HTTP suite once so).
 */
export const EVENT_STORE = process.env.LOGSCOPE_TEST_EVENT_STORE === 'clickhouse' ? 'clickhouse' : 'duckdb';
if (EVENT_STORE === 'clickhouse' && !clickHouseTest.run)
  throw new Error('LOGSCOPE_TEST_EVENT_STORE=clickhouse needs LOGSCOPE_TEST_CLICKHOUSE_URL');

/**
 * Cluster mode under test: with LOGSCOPE_TEST_BUS_URL (`redis://…`, with PostgreSQL and
 * ClickHouse) every test app is a cluster node on a channel of its own: query jobs in
 * the shared store, the bus over Redis (CI runs the PostgreSQL suite so).
 */
export const TEST_BUS_URL = process.env.LOGSCOPE_TEST_BUS_URL ?? '';
if (TEST_BUS_URL && (!TEST_DATABASE_URL || EVENT_STORE !== 'clickhouse'))
  throw new Error(
    'LOGSCOPE_TEST_BUS_URL needs LOGSCOPE_TEST_DATABASE_URL and LOGSCOPE_TEST_EVENT_STORE=clickhouse',
  );

export interface TestApp {
  app: FastifyInstance;
  rt: Runtime;
  adminToken: string;
  dataDir: string;
  /** The PostgreSQL schema of the metadata store, when the suite runs on PostgreSQL. */
  pgSchema: string | undefined;
  /** Creates a user with a USER token; returns its id and token. */
  user(
    name: string,
    opts?: { permissions?: Permission[]; admin?: boolean },
  ): Promise<{ id: number; token: string }>;
  /** app.inject with a token. */
  as(token: string | null, opts: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** Silent but for the root's word on a component slow to stop. */
const slowStops: Log = {
  ...silentLog,
  warn: (detail, message) => {
    if (message.includes('slow to stop')) console.error(message, JSON.stringify(detail));
  },
};

export async function createTestApp(
  env: Record<string, string> = {},
  opts: { log?: Log; components?: readonly Component[] } = {},
): Promise<TestApp> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'logscope-test-'));
  let pgSchema: string | undefined;
  if (TEST_DATABASE_URL) {
    pgSchema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`create schema ${pgSchema}`);
    await client.end();
  }
  const events = EVENT_STORE === 'clickhouse' ? clickHouseTestDatabase() : undefined;
  const config = loadConfig({
    env: {
      LOGSCOPE_DATA_DIR: dataDir,
      // A query answers when done (200) within 30 s: on a loaded machine the 1 s default
      // turned answers into 202s at random. Tests of the 202 path set their own window.
      LOGSCOPE_QUERY_SYNC_MS: '30000',
      LOGSCOPE_DATABASE_URL: TEST_DATABASE_URL,
      ...(events ? { LOGSCOPE_EVENT_STORE_URL: events.url } : {}),
      ...(TEST_BUS_URL && pgSchema ? { LOGSCOPE_BUS_URL: `${TEST_BUS_URL}?channel=${pgSchema}` } : {}),
      ...env,
    },
  });
  const rt = await openRuntime(config, {
    ...(pgSchema ? { pgSchema } : {}),
    // A component slow to stop is named on stderr (a close past the hook's timeout says where).
    log: opts.log ?? slowStops,
    ...(opts.components ? { components: opts.components } : {}),
  });
  const adminToken = (await bootstrapAdmin(rt))?.token ?? '';
  const app = await buildApp({ root: rt.root, checks: healthChecks(rt) });
  const as: TestApp['as'] = (token, opts) =>
    app.inject({
      ...opts,
      headers: { ...(token ? { authorization: `token ${token}` } : {}), ...opts.headers },
    });
  return {
    app,
    rt,
    adminToken,
    dataDir,
    pgSchema,
    as,
    async user(name, opts = {}) {
      const u = await rt.services.users.create(null, {
        username: name,
        password: `${name}-password`,
        is_admin: opts.admin ?? false,
        permissions: opts.permissions ?? [],
      });
      const t = await rt.services.tokens.create(u.id, { token_type: 'USER', name: `${name} token` });
      return { id: u.id, token: t.secret_key };
    },
    async close() {
      const began = Date.now();
      await app.close();
      const appMs = Date.now() - began;
      await rt.close();
      if (Date.now() - began >= 5_000)
        console.error(`slow close: the app in ${appMs} ms, the runtime in ${Date.now() - began - appMs} ms`);
      if (pgSchema) {
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await client.connect();
        await client.query(`drop schema ${pgSchema} cascade`);
        await client.end();
      }
      if (events) await dropClickHouseDatabase(events.database);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
