import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { seedWeb } from '../../helpers/seed.js';
import { buildCli, removeCli, runCli, startCli, until } from './run-cli.js';

/**
 * `logscope backup <dir>` against a running server (docs/cli.md): progress, then the
 * folder, the events per tier, the files and bytes; exit 0 when DONE, 1 when refused, 2
 * when the server cannot be reached or refuses the token. `backup verify` then finds it whole.
 */
describe.runIf(BACKEND === 'sqlite' && EVENT_STORE === 'duckdb')(
  'CLI backup against a running server',
  () => {
    let t: TestApp;
    let url: string;
    const root = mkdtempSync(path.join(tmpdir(), 'logscope-cli-online-'));
    beforeAll(async () => {
      await buildCli();
      t = await createTestApp();
      await seedWeb(t);
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const address = t.app.server.address();
      url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    }, 90_000);
    afterAll(async () => {
      await t.close();
      removeCli();
      rmSync(root, { recursive: true, force: true });
    });

    it('writes a backup with exit 0, refuses with 1, cannot reach with 2', async () => {
      const ok = await runCli(['backup', 'nightly', '--url', url, '--token', t.adminToken], {
        cwd: root,
        timeoutMs: 60_000,
      });
      expect(ok.code, ok.stderr).toBe(0);
      const dir = path.join(root, 'nightly');
      expect(ok.stdout).toMatch(
        new RegExp(
          `^Backup \\w+ written to ${dir}\\n600 hot events, 0 cold events; \\d+ files, [\\d,]+ bytes\\.\\n$`,
        ),
      );
      expect(ok.stderr).toMatch(/backup \w+: \d+ % \(/);
      const verified = await runCli(['backup', 'verify', dir]);
      expect(verified.code, verified.stdout).toBe(0);
      expect(verified.stdout).toMatch(/: OK \(full, 600 events, /);

      mkdirSync(path.join(root, 'used'));
      writeFileSync(path.join(root, 'used', 'file'), 'x');
      const refused = await runCli(['backup', 'used', '--url', url, '--token', t.adminToken], { cwd: root });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('(backup_target_exists)');
      const json = await runCli(['backup', 'second', '--json', '--url', url, '--token', t.adminToken], {
        cwd: root,
        timeoutMs: 60_000,
      });
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({
        status: 'DONE',
        kind: 'full',
        path: path.join(root, 'second'),
      });

      const badToken = await runCli(['backup', 'x', '--url', url, '--token', 'nope_nope'], { cwd: root });
      expect(badToken.code).toBe(2);
      const unreachable = await runCli(
        ['backup', 'x', '--url', 'http://127.0.0.1:9', '--token', t.adminToken],
        {
          cwd: root,
        },
      );
      expect(unreachable.code).toBe(2);
      expect(unreachable.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9/);
    }, 120_000);

    it('Ctrl-C cancels the job: it ends CANCELLED, its folder removed, exit 1', async () => {
      const child = startCli(
        ['backup', 'slow', '--max-bytes-per-second', '1', '--url', url, '--token', t.adminToken],
        { cwd: root },
      );
      await until(
        () => /backup \w+: \d+ %/.test(child.out.stderr),
        () => `progress shown (${child.out.stderr})`,
        30_000,
      );
      child.kill('SIGINT');
      const run = await child.done;
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toMatch(/cancelling the backup/);
      expect(run.stderr).toMatch(/ended CANCELLED/);
      expect(existsSync(path.join(root, 'slow'))).toBe(false);
    }, 60_000);
  },
);
