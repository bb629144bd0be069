import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_FORMAT } from '../../../src/features/backups/store-format.js';
import { VERSION } from '../../../src/version.js';
import { makeBackup } from '../../event-store/backups/backup-fixture.js';
import { eventually } from '../../helpers/eventually.js';
import { buildCli, removeCli, runCli, startCli } from './run-cli.js';

/** `backup verify`, `restore` and `version`: the commands that need no server. */
describe('CLI backup verify, restore, version', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'logscope-cli-backup-'));
  let backup: string;
  let damaged: string;
  let files: number;
  let bytes: number;

  beforeAll(async () => {
    await buildCli();
    const made = await makeBackup(root);
    backup = made.dir;
    files = made.manifest.files.length;
    bytes = made.manifest.bytes;
    damaged = path.join(root, 'damaged');
    cpSync(backup, damaged, { recursive: true });
    const part = path.join(damaged, 'hot/part-0.parquet');
    const data = readFileSync(part);
    data[40] = (data[40] as number) ^ 0x01;
    writeFileSync(part, data);
    writeFileSync(path.join(damaged, 'stray.txt'), 'x');
  }, 90_000);
  afterAll(() => {
    removeCli();
    rmSync(root, { recursive: true, force: true });
  });

  it('verify: OK with exit 0, problems with exit 1 (the first bad file first), no folder with exit 2', async () => {
    const [ok, bad, json, none] = await Promise.all([
      runCli(['backup', 'verify', backup]),
      runCli(['backup', 'verify', damaged]),
      runCli(['backup', 'verify', damaged, '--json']),
      runCli(['backup', 'verify', path.join(root, 'nothing')]),
    ]);
    expect(ok).toMatchObject({ code: 0, stderr: '' });
    expect(ok.stdout).toBe(`backup ${backup}: OK (full, 35 events, ${files} files, ${bytes} bytes)\n`);
    expect(bad.code).toBe(1);
    const lines = bad.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^hot\/part-0\.parquet: checksum: sha256 [0-9a-f]{64}, the manifest says/);
    expect(lines[1]).toBe('stray.txt: not_listed: in the folder but not in the manifest');
    expect(lines[2]).toBe(`backup ${damaged}: 2 problems`);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      kind: 'full',
      events: 35,
      files,
      bytes,
      problems: [
        { path: 'hot/part-0.parquet', problem: 'checksum' },
        { path: 'stray.txt', problem: 'not_listed' },
      ],
    });
    expect(none).toMatchObject({ code: 2, stdout: '' });
    expect(none.stderr).toBe(`logscope: ${path.join(root, 'nothing')} is not a folder\n`);
  });

  it('version: the release, commit and store format', async () => {
    const [text, json] = await Promise.all([runCli(['version']), runCli(['version', '--json'])]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(`^logscope ${VERSION} \\(commit \\S+, store format ${STORE_FORMAT}\\)\\n$`),
    );
    expect(JSON.parse(json.stdout)).toEqual({
      release: VERSION,
      commit: expect.any(String),
      store_format: STORE_FORMAT,
    });
  });

  it('restore: --data-dir after the command or before it (the global flag), --cold-dir said in the last line', async () => {
    const a = path.join(root, 'restored-a');
    const b = path.join(root, 'restored-b');
    const c = path.join(root, 'restored-c');
    const cold = path.join(root, 'cold-c');
    const [after, before, withCold] = await Promise.all([
      runCli(['restore', backup, '--data-dir', a], { timeoutMs: 60_000 }),
      runCli(['--data-dir', b, 'restore', backup, '--json'], { timeoutMs: 60_000 }),
      runCli(['restore', backup, '--data-dir', c, '--cold-dir', cold], { timeoutMs: 60_000 }),
    ]);
    expect(after).toMatchObject({ code: 0, stderr: '' });
    expect(after.stdout).toMatch(
      new RegExp(
        `^Restored backup \\S+ \\(full, as of \\S+\\) into ${a}: 30 hot events, 5 cold events, \\d+ users, ${files} files\\.\\n$`,
      ),
    );
    expect(existsSync(path.join(a, 'events.duckdb'))).toBe(true);
    expect(before.code).toBe(0);
    expect(JSON.parse(before.stdout)).toMatchObject({ data_dir: b, events: { hot: 30, cold: 5 } });
    expect(withCold.code).toBe(0);
    expect(withCold.stdout.trim().split('\n').at(-1)).toBe(
      `The cold files are in ${cold}: start the server with coldDir ${cold} (--cold-dir / LOGSCOPE_COLD_DIR).`,
    );
    expect(existsSync(path.join(cold, '1/2024-04-30/part-0.parquet'))).toBe(true);
  });

  it('restore refusals: one line, exit 1, nothing written', async () => {
    const target = path.join(root, 'refused');
    const [bad, noTarget, notEmpty] = await Promise.all([
      runCli(['restore', damaged, '--data-dir', target]),
      runCli(['restore', backup]),
      runCli(['restore', backup, '--data-dir', root]),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stdout.split('\n')[0]).toMatch(/^hot\/part-0\.parquet: checksum: /);
    expect(bad.stderr).toBe(`logscope: backup ${damaged} does not verify (2 problems): nothing restored\n`);
    expect(noTarget).toMatchObject({
      code: 1,
      stderr: 'logscope: give the data dir to make: restore <dir> --data-dir <new>\n',
    });
    expect(notEmpty).toMatchObject({
      code: 1,
      stderr: `logscope: the data dir ${root} is not empty: restore into a new folder, or give --force to replace it\n`,
    });
    expect(existsSync(target)).toBe(false);
  });
  it('restore killed (-9) part-way: the target untouched, the backup whole, a second restore whole', async () => {
    const target = path.join(root, 'killed-target');
    for (let attempt = 1; attempt <= 3; attempt++) {
      const child = startCli(['restore', backup, '--data-dir', target]);
      // Killed once its build folder beside the target exists (before the rename into place).
      await eventually(
        'the restore to begin building',
        () =>
          readdirSync(root).some((n) => n.startsWith('killed-target.restore-')) || child.exitCode !== null,
        { everyMs: 1, withinMs: 15_000 },
      );
      child.kill('SIGKILL');
      await child.done;
      if (existsSync(target)) {
        // It finished before the kill landed: again.
        rmSync(target, { recursive: true, force: true });
        continue;
      }
      expect((await runCli(['backup', 'verify', backup])).code).toBe(0);
      const again = await runCli(['restore', backup, '--data-dir', target]);
      expect(again.code, again.stderr).toBe(0);
      expect(readdirSync(target).sort()).toEqual(expect.arrayContaining(['events.duckdb', 'meta.sqlite']));
      return;
    }
    throw new Error('in 3 tries the kill never landed while the restore ran');
  }, 60_000);
});
