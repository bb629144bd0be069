import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { TEST_DATABASE_URL } from './app.js';
import { clickHouseTest, clickHouseTestDatabase, dropClickHouseDatabase } from './clickhouse.js';
import { eventually } from './eventually.js';

/**
 * Cluster tests start real server processes (`logscope serve`) on loopback against the
 * PostgreSQL, Redis and two-shard ClickHouse that `.ci/run` provides. They run when
 * LOGSCOPE_TEST_DATABASE_URL, LOGSCOPE_TEST_CLICKHOUSE_URL and a Redis URL
 * (LOGSCOPE_TEST_REDIS_URL, or LOGSCOPE_TEST_BUS_URL) are set, and skip otherwise.
 */
export const REDIS_URL = process.env.LOGSCOPE_TEST_REDIS_URL || process.env.LOGSCOPE_TEST_BUS_URL || '';
export const clusterTest = { run: Boolean(TEST_DATABASE_URL && clickHouseTest.run && REDIS_URL) };
// CI sets LOGSCOPE_TEST_REQUIRE_CLUSTER=1 where it provides all three: skipping is a failure there.
if (process.env.LOGSCOPE_TEST_REQUIRE_CLUSTER === '1' && !clusterTest.run)
  throw new Error(
    'LOGSCOPE_TEST_REQUIRE_CLUSTER=1 needs LOGSCOPE_TEST_DATABASE_URL, LOGSCOPE_TEST_CLICKHOUSE_URL and LOGSCOPE_TEST_REDIS_URL or LOGSCOPE_TEST_BUS_URL',
  );

import { freePort } from './served.js';

export { freePort };

export interface Node {
  name: string;
  url: string;
  wsUrl: string;
  child: ChildProcess;
  /** What the process wrote to stderr (start-up failures). */
  stderr: string[];
  exited: Promise<number | null>;
}

export interface Cluster {
  nodes: Node[];
  /** The first admin's token (printed by the first node). */
  token: string;
  /** The settings every node shares. */
  env: Record<string, string>;
  /** The ClickHouse database of its events. */
  database: string;
  /** Starts one more node with the cluster's settings (plus `env`). */
  start(name: string, env?: Record<string, string>): Promise<Node>;
  close(): Promise<void>;
}

async function waitForHealth(node: Node, ms = 60_000) {
  await eventually(
    () => `${node.name} to start: ${node.stderr.join('').slice(-500)}`,
    async () => {
      if (node.child.exitCode !== null)
        throw new Error(`${node.name} exited: ${node.stderr.join('').slice(-500)}`);
      // Refused while it is not up yet.
      return (await fetch(`${node.url}/api/health`).catch(() => null))?.ok;
    },
    { withinMs: ms, everyMs: 100 },
  );
}

/**
 * Starts `n` nodes sharing a PostgreSQL schema, a ClickHouse database and a Redis channel
 * of their own; the first starts alone (it creates the schema and the first admin).
 */
export async function startCluster(n: number, env: Record<string, string> = {}): Promise<Cluster> {
  const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  const events = clickHouseTestDatabase();
  const dirs: string[] = [];
  const nodes: Node[] = [];
  const sep = TEST_DATABASE_URL.includes('?') ? '&' : '?';
  const shared: Record<string, string> = {
    LOGSCOPE_DATABASE_URL: `${TEST_DATABASE_URL}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    LOGSCOPE_EVENT_STORE_URL: events.url,
    LOGSCOPE_BUS_URL: `${REDIS_URL}?channel=${schema}`,
    LOGSCOPE_HOST: '127.0.0.1',
    LOGSCOPE_LOG_LEVEL: 'warn',
    LOGSCOPE_SYSLOG_PORT: '0',
    LOGSCOPE_INGEST_BATCH_MS: '20',
    ...env,
  };
  const start = async (name: string, extra: Record<string, string> = {}): Promise<Node> => {
    const dataDir = mkdtempSync(path.join(tmpdir(), `logscope-${name}-`));
    dirs.push(dataDir);
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], {
      env: { ...process.env, ...shared, LOGSCOPE_DATA_DIR: dataDir, LOGSCOPE_PORT: String(port), ...extra },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const stderr: string[] = [];
    child.stderr?.on('data', (d: Buffer) => stderr.push(String(d)));
    const node: Node = {
      name,
      url: `http://127.0.0.1:${port}`,
      wsUrl: `ws://127.0.0.1:${port}/ws/live-updates`,
      child,
      stderr,
      exited: new Promise((r) => child.once('exit', (code) => r(code))),
    };
    nodes.push(node);
    await waitForHealth(node);
    return node;
  };
  let token = '';
  try {
    await start('node-a');
    token = readFileSync(path.join(dirs[0] as string, 'admin-token'), 'utf8').trim();
    await Promise.all(Array.from({ length: n - 1 }, (_, i) => start(`node-${String.fromCharCode(98 + i)}`)));
  } catch (err) {
    for (const node of nodes) node.child.kill('SIGKILL');
    throw err;
  }
  return {
    nodes,
    token,
    env: shared,
    database: events.database,
    start,
    async close() {
      for (const node of nodes) if (node.child.exitCode === null) node.child.kill('SIGKILL');
      await Promise.all(nodes.map((node) => node.exited));
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await c.connect();
      await c.query(`drop schema ${schema} cascade`);
      await c.end();
      await dropClickHouseDatabase(events.database);
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A response: `json` is the parsed body of any shape, as app.inject's json() gives it. */
export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: a body of any shape, read by the assertions
  json: any;
  text: string;
  headers: Headers;
}

/** A JSON request to a node with the token. */
export async function call(
  node: Node,
  token: string,
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${node.url}${url}`, {
    method,
    headers: {
      authorization: `token ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON (an export, a file)
  }
  return { status: res.status, json, text, headers: res.headers };
}
