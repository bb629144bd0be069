/**
 * The ClickHouse the tests use: `LOGSCOPE_TEST_CLICKHOUSE_URL` (what
 * `scripts/ci/clickhouse.sh start` prints, `clickhouse://user@h1:port[,h2:port]/db…`).
 * Without it the ClickHouse tests skip, unless `LOGSCOPE_TEST_REQUIRE_CLICKHOUSE=1`
 * (set by `.ci/run`, which starts the servers), where they fail instead.
 */
const url = process.env.LOGSCOPE_TEST_CLICKHOUSE_URL ?? '';
const required = process.env.LOGSCOPE_TEST_REQUIRE_CLICKHOUSE === '1';
if (required && !url)
  throw new Error('LOGSCOPE_TEST_REQUIRE_CLICKHOUSE=1 but LOGSCOPE_TEST_CLICKHOUSE_URL is not set');

const m = /^clickhouse:\/\/(?:([^@/]*)@)?([^/]+)/.exec(url);
const user = decodeURIComponent(m?.[1]?.split(':')[0] ?? 'default') || 'default';
const firstHost = m?.[2]?.split(',')[0];

export const clickHouseTest = { run: firstHost !== undefined, url };

/** Runs `sql` on the first listed server over HTTP; JSONEachRow results come back parsed. */
export async function clickHouseHttp(sql: string): Promise<unknown[]> {
  if (!firstHost) throw new Error('no ClickHouse configured for the tests');
  const res = await fetch(`http://${firstHost}/?user=${encodeURIComponent(user)}`, {
    method: 'POST',
    body: sql,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse answered ${res.status}: ${text.slice(0, 300)}`);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as unknown);
}

/** Every listed server's host:port. */
const hosts = m?.[2]?.split(',') ?? [];

/**
 * The test URL with a database of its own (`t_<pid>_<random>`), so test files never see
 * each other's events; drop it with `dropClickHouseDatabase`.
 */
export function clickHouseTestDatabase(): { url: string; database: string } {
  const database = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  return { url: url.replace(/^(clickhouse:\/\/[^/]+)\/[^?]*/, `$1/${database}`), database };
}

/** Drops a test database on every listed server. */
export async function dropClickHouseDatabase(database: string): Promise<void> {
  if (!/^t_\d+_[a-z0-9]+$/.test(database)) throw new Error(`not a test database: ${database}`);
  for (const host of hosts) {
    await fetch(`http://${host}/?user=${encodeURIComponent(user)}`, {
      method: 'POST',
      body: `DROP DATABASE IF EXISTS ${database}`,
    });
  }
}
