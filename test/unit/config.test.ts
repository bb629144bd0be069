import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, PACKAGE_ROOT } from '../../src/config/config.js';

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
  ])('stops with a message naming the setting for %o', (env, pattern) => {
    expect(() => loadConfig({ env })).toThrow(ConfigError);
    expect(() => loadConfig({ env })).toThrow(pattern);
  });

  it('rejects unknown keys in the config file', () => {
    const file = path.join(tmpdir(), `logscope-config-bad-${process.pid}.json`);
    writeFileSync(file, JSON.stringify({ prot: 1 }));
    expect(() => loadConfig({ env: { LOGSCOPE_CONFIG: file } })).toThrow(/Unknown setting "prot"/);
  });
});
