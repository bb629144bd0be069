import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseBusUrl } from '../../../src/config/bus-url.js';
import { parseClickHouseUrl } from '../../../src/config/clickhouse-url.js';
import { ConfigError, loadConfig, PACKAGE_ROOT } from '../../../src/config/config.js';

describe('config', () => {
  it('has defaults and is frozen', () => {
    const c = loadConfig({ env: {} });
    expect(c.port).toBe(8080);
    // The install folder's data dir, whatever the working directory.
    expect(c.dataDir).toBe(path.join(PACKAGE_ROOT, 'data'));
    expect(existsSync(path.join(PACKAGE_ROOT, 'package.json'))).toBe(true);
    expect(c.databaseUrl).toBe('');
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('takes a relative data dir from the config file folder, env and flags from the working directory', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'logscope-cfgdir-'));
    const file = path.join(dir, 'logscope.json');
    writeFileSync(file, JSON.stringify({ dataDir: 'store' }));
    expect(loadConfig({ env: {}, file }).dataDir).toBe(path.join(dir, 'store'));
    expect(loadConfig({ env: { LOGSCOPE_DATA_DIR: 'rel' }, file }).dataDir).toBe(path.resolve('rel'));
    expect(loadConfig({ env: {}, file, flags: { dataDir: 'flag' } }).dataDir).toBe(path.resolve('flag'));
  });

  it('reads PORT and LOGSCOPE_* with flags over env over file', () => {
    const file = path.join(tmpdir(), `logscope-config-${process.pid}.json`);
    writeFileSync(file, JSON.stringify({ port: 7000, logLevel: 'warn', host: '127.0.0.1' }));
    expect(loadConfig({ env: { LOGSCOPE_CONFIG: file } }).port).toBe(7000);
    expect(loadConfig({ env: { LOGSCOPE_CONFIG: file, PORT: '7100' } }).port).toBe(7100);
    expect(loadConfig({ env: { LOGSCOPE_CONFIG: file, PORT: '7100', LOGSCOPE_PORT: '7200' } }).port).toBe(
      7200,
    );
    const c = loadConfig({ env: { LOGSCOPE_CONFIG: file, LOGSCOPE_PORT: '7200' }, flags: { port: '7300' } });
    expect(c.port).toBe(7300);
    expect(c.logLevel).toBe('warn');
    expect(c.host).toBe('127.0.0.1');
  });

  it.each([
    [{ LOGSCOPE_PORT: 'abc' }, /port/],
    [{ LOGSCOPE_PORT: '70000' }, /port/],
    [{ LOGSCOPE_LOG_LEVEL: 'loud' }, /logLevel/],
    [{ LOGSCOPE_DATABASE_URL: 'mysql://x' }, /databaseUrl/],
    [{ LOGSCOPE_BODY_LIMIT: '10' }, /bodyLimit/],
    [{ LOGSCOPE_CONFIG: '/nonexistent/file.json' }, /config file/],
    [{ LOGSCOPE_EVENT_STORE_URL: 'postgres://x/y' }, /eventStoreUrl .*expected clickhouse:\/\//],
    [{ LOGSCOPE_EVENT_STORE_URL: 'clickhouse://a:8123,b:8123/logs' }, /eventStoreUrl .*need \?cluster=/],
    [{ LOGSCOPE_EVENT_STORE_URL: 'clickhouse://a:99999/logs' }, /eventStoreUrl .*port 99999/],
    [{ LOGSCOPE_EVENT_STORE_URL: 'clickhouse://a/bad-name' }, /eventStoreUrl .*database "bad-name"/],
    [
      { LOGSCOPE_EVENT_STORE_URL: 'clickhouse://a/db?shards=2' },
      /eventStoreUrl .*unknown parameter "shards"/,
    ],
    [{ LOGSCOPE_BUS_URL: 'nats://127.0.0.1:4222' }, /busUrl .*only redis:\/\/ and rediss:\/\//],
    [{ LOGSCOPE_BUS_URL: 'redis://r:6379/16' }, /busUrl .*database must be 0 to 15/],
    [{ LOGSCOPE_BUS_URL: 'redis://r?topic=x' }, /busUrl .*unknown parameter "topic"/],
    [{ LOGSCOPE_BUS_URL: 'redis://r?channel=a%20b' }, /busUrl .*channel is 1 to 64/],
    [{ LOGSCOPE_BUS_URL: 'redis://r' }, /busUrl .*databaseUrl to PostgreSQL and eventStoreUrl to ClickHouse/],
    [
      { LOGSCOPE_BUS_URL: 'redis://r', LOGSCOPE_DATABASE_URL: 'postgres://p/db' },
      /busUrl .*set databaseUrl to PostgreSQL and eventStoreUrl/,
    ],
  ])('stops with a message naming the setting for %o', (env, pattern) => {
    expect(() => loadConfig({ env })).toThrow(ConfigError);
    expect(() => loadConfig({ env })).toThrow(pattern);
  });

  it('reads a Redis busUrl with its channel, and never echoes its password', () => {
    expect(parseBusUrl('redis://:pw@bus:6380/2?channel=prod-logs')).toEqual({
      redisUrl: 'redis://:pw@bus:6380/2',
      channel: 'prod-logs',
      where: 'bus:6380',
    });
    expect(parseBusUrl('rediss://bus')).toMatchObject({ channel: 'logscope', where: 'bus:6379' });
    const cluster = loadConfig({
      env: {
        LOGSCOPE_BUS_URL: 'redis://bus',
        LOGSCOPE_DATABASE_URL: 'postgres://p/db',
        LOGSCOPE_EVENT_STORE_URL: 'clickhouse://ch/logs',
      },
    });
    expect(cluster.busUrl).toBe('redis://bus');
    expect(() => loadConfig({ env: { LOGSCOPE_BUS_URL: 'mysql://u:hunter2@r' } })).toThrow(/^(?!.*hunter2)/);
  });

  it('reads a ClickHouse eventStoreUrl, and never echoes its password', () => {
    expect(parseClickHouseUrl('clickhouse://ops:s3cr%40t@ch1:9123,ch2/logs?cluster=main')).toEqual({
      hosts: ['http://ch1:9123', 'http://ch2:8123'],
      username: 'ops',
      password: 's3cr@t',
      database: 'logs',
      cluster: 'main',
    });
    expect(parseClickHouseUrl('clickhouses://ch')).toMatchObject({
      hosts: ['https://ch:8443'],
      username: 'default',
      database: 'logscope',
      cluster: undefined,
    });
    expect(() => loadConfig({ env: { LOGSCOPE_EVENT_STORE_URL: 'clickhouse://u:hunter2@a,b/x' } })).toThrow(
      /^(?!.*hunter2)/,
    );
  });

  it('rejects unknown keys in the config file', () => {
    const file = path.join(tmpdir(), `logscope-config-bad-${process.pid}.json`);
    writeFileSync(file, JSON.stringify({ prot: 1 }));
    expect(() => loadConfig({ env: { LOGSCOPE_CONFIG: file } })).toThrow(/Unknown setting "prot"/);
  });

  it('reads an oidc block from the config file or LOGSCOPE_OIDC, and names the setting that is wrong', () => {
    const ok = {
      issuer: 'https://sso.example.com/realms/acme',
      clientId: 'logscope',
      clientSecret: 's3cret',
    };
    const c = loadConfig({ env: { LOGSCOPE_OIDC: JSON.stringify(ok) } });
    expect(c.oidc).toMatchObject({
      ...ok,
      scopes: 'openid profile email',
      passwordLogin: true,
      adminGroups: [],
    });
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'logscope-oidc-')), 'logscope.json');
    writeFileSync(file, JSON.stringify({ oidc: { ...ok, issuer: 'http://127.0.0.1:9000' } }));
    expect(loadConfig({ env: { LOGSCOPE_CONFIG: file } }).oidc?.issuer).toBe('http://127.0.0.1:9000');
    const bad = (oidc: unknown) => () =>
      loadConfig({ env: { LOGSCOPE_OIDC: typeof oidc === 'string' ? oidc : JSON.stringify(oidc) } });
    expect(bad({ ...ok, issuer: 'http://sso.example.com' })).toThrow(
      /^Invalid setting oidc\.issuer \(env LOGSCOPE_OIDC\): must be https:\/\//,
    );
    expect(bad({ issuer: ok.issuer, clientSecret: 'x' })).toThrow(
      /^Invalid setting oidc\.clientId .*is missing$/,
    );
    expect(bad({ issuer: ok.issuer, clientId: 'x' })).toThrow(
      /^Invalid setting oidc\.clientSecret .*is missing$/,
    );
    expect(bad({ ...ok, adminGroups: 'admins' })).toThrow(/^Invalid setting oidc\.adminGroups /);
    expect(bad({ ...ok, colour: 'blue' })).toThrow(/^Invalid setting oidc/);
    expect(bad('{not json')).toThrow(/^Invalid setting oidc \(env LOGSCOPE_OIDC\): not a JSON object$/);
    for (const f of [bad({ ...ok, issuer: 'http://sso.example.com' }), bad({ issuer: ok.issuer })])
      expect(f).toThrow(ConfigError);
  });
});
