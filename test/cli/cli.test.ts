import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const CLI = ['--import', 'tsx', 'src/cli/index.ts'];
// The CLI runs on SQLite in its own data dir, whatever the suite's backend.
const dataDir = mkdtempSync(path.join(tmpdir(), 'logscope-cli-'));
const env = { ...process.env, LOGSCOPE_DATA_DIR: dataDir, LOGSCOPE_DATABASE_URL: '' };

describe('CLI', () => {
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('serves, prints the first admin token once, writes it 0600 and shuts down on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [...CLI, 'serve', '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn'],
      {
        env,
      },
    );
    let out = '';
    child.stdout.on('data', (d) => {
      out += String(d);
    });
    const started = Date.now();
    while (!out.includes('admin-token') && Date.now() - started < 20_000)
      await new Promise((r) => setTimeout(r, 100));
    const file = path.join(dataDir, 'admin-token');
    const token = readFileSync(file, 'utf8').trim();
    expect(out).toContain(token);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', resolve);
      child.kill('SIGTERM');
    });
    expect(code).toBe(0);
  });

  it('creates users and tokens, and migrates', async () => {
    const user = await run(
      process.execPath,
      [...CLI, 'user', 'create', 'gina', '--permissions', 'manage_tasks'],
      { env },
    );
    expect(JSON.parse(user.stdout)).toMatchObject({ username: 'gina', permissions: ['manage_tasks'] });
    const tok = await run(process.execPath, [...CLI, 'token', 'create', 'gina', '--type', 'INGEST'], { env });
    expect(tok.stdout.trim()).toMatch(/^ls[0-9A-Za-z]{10}_[0-9A-Za-z]{32}$/);
    const mig = await run(process.execPath, [...CLI, 'migrate'], { env });
    expect(mig.stdout).toMatch(/up to date/);
  });

  it('fails clearly on bad input', async () => {
    await expect(run(process.execPath, [...CLI, 'token', 'create', 'nobody'], { env })).rejects.toMatchObject(
      {
        stderr: expect.stringContaining('No user "nobody"'),
      },
    );
    await expect(run(process.execPath, [...CLI, 'migrate', '--port', 'x'], { env })).rejects.toMatchObject({
      stderr: expect.stringContaining('Invalid setting port'),
    });
    const help = await run(process.execPath, [...CLI, '--help'], { env });
    expect(help.stdout).toMatch(/serve/);
    expect(help.stdout).toMatch(/LOGSCOPE_DATA_DIR/);
  });
});
