import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, exited, removeCli, runCli, startCli, until } from './run-cli.js';

// The CLI runs on SQLite in its own data dir, whatever the suite's backend.
const dataDir = mkdtempSync(path.join(tmpdir(), 'logscope-cli-'));
const env = { LOGSCOPE_DATA_DIR: dataDir };

describe('CLI', () => {
  beforeAll(buildCli);
  afterAll(() => {
    removeCli();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves, prints the first admin token once, writes it 0600 and shuts down on SIGTERM', async () => {
    const child = startCli(['serve', '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn'], { env });
    try {
      await until(
        // The banner goes to stdout or, beside the logs, to stderr.
        () => (child.out.stdout + child.out.stderr).includes('admin-token'),
        () => `the admin token; stdout: ${child.out.stdout}; stderr: ${child.out.stderr}`,
        25_000,
      );
      const file = path.join(dataDir, 'admin-token');
      const token = readFileSync(file, 'utf8').trim();
      expect(child.out.stdout + child.out.stderr).toContain(token);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      child.kill('SIGTERM');
      expect((await exited(child, 10_000)).code).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
    // The first start opens every engine: slow on a busy machine.
  }, 30_000);

  it('creates users and tokens, and migrates, from any working directory given --data-dir', async () => {
    // No LOGSCOPE_DATA_DIR: the flag names the store, absolute or relative to the cwd.
    const user = await runCli(
      ['user', 'create', 'gina', '--permissions', 'manage_tasks', '--data-dir', dataDir],
      { cwd: tmpdir() },
    );
    expect(user.stderr).toBe('');
    expect(JSON.parse(user.stdout)).toMatchObject({ username: 'gina', permissions: ['manage_tasks'] });
    const [tok, mig] = await Promise.all([
      runCli(['token', 'create', 'gina', '--type', 'INGEST', '--data-dir', dataDir], { cwd: tmpdir() }),
      runCli(['migrate', '--data-dir', path.basename(dataDir)], { cwd: path.dirname(dataDir) }),
    ]);
    expect(tok.stdout.trim()).toMatch(/^ls[0-9A-Za-z]{10}_[0-9A-Za-z]{32}$/);
    expect(mig, mig.stderr).toMatchObject({ code: 0, stdout: 'Schema is up to date.\n' });
  });

  it('fails clearly on bad input', async () => {
    const [nobody, port, help, searchHelp] = await Promise.all([
      runCli(['token', 'create', 'nobody'], { env }),
      runCli(['migrate', '--port', 'x'], { env }),
      runCli(['--help'], { env }),
      runCli(['search', '--help'], { env }),
    ]);
    expect(nobody).toMatchObject({ code: 1, stderr: expect.stringContaining('No user "nobody"') });
    expect(port).toMatchObject({ code: 1, stderr: expect.stringContaining('Invalid setting port') });
    expect(help.stdout).toMatch(/serve/);
    expect(help.stdout).toMatch(/search \[options\] \[query\]/);
    expect(help.stdout).toMatch(/tail \[options\] \[query\]/);
    expect(help.stdout).toMatch(/LOGSCOPE_DATA_DIR/);
    expect(searchHelp.stdout).toMatch(/--since <duration>/);
  });
});
