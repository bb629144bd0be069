import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, removeCli, runCli } from './run-cli.js';

/**
 * The commands that open the metadata store directly (migrate, user create, token create)
 * never create one. (That they find a store named by --data-dir from another working
 * directory: cli.test.ts.)
 */
describe('CLI commands on the store', () => {
  const empty = mkdtempSync(path.join(tmpdir(), 'logscope-cli-empty-'));
  beforeAll(buildCli);
  afterAll(() => {
    removeCli();
    rmSync(empty, { recursive: true, force: true });
  });

  it('refuse a data dir without a store, with one line, and create nothing', async () => {
    const missing = path.join(empty, 'data');
    const message = (dir: string) =>
      `logscope: no Logscope data in ${dir} (start the server once with "npm start", or pass --data-dir / LOGSCOPE_DATA_DIR)\n`;
    const runs = await Promise.all([
      runCli(['migrate', '--data-dir', missing], { cwd: empty }),
      runCli(['user', 'create', 'dave', '--password', 'long-enough'], {
        cwd: empty,
        env: { LOGSCOPE_DATA_DIR: empty },
      }),
      // A relative --data-dir is taken from the working directory.
      runCli(['token', 'create', 'dave', '--data-dir', 'data'], { cwd: empty }),
    ]);
    expect(runs[0]).toMatchObject({ code: 1, stdout: '', stderr: message(missing) });
    expect(runs[1]).toMatchObject({ code: 1, stdout: '', stderr: message(empty) });
    expect(runs[2]).toMatchObject({ code: 1, stdout: '', stderr: message(missing) });
    // Not even the data dir: the store was never opened.
    expect(readdirSync(empty)).toEqual([]);
  });
});
