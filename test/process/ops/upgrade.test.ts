import { execFileSync, execSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restoreBackup, verifyBackup } from '../../../src/features/backups/index.js';
import { STORE_FORMAT } from '../../../src/version.js';
import { eventually } from '../../helpers/eventually.js';
import { freePort, ROOT, type Started, serveBuilt, start } from '../../helpers/served.js';

/**
 * Upgrading a data dir written by an older release (docs/operations/upgrade.md): the commit
 * before store formats (4aea0cd, the last to land without them) is unpacked from this
 * repository's history into a temporary folder and run from its sources. Its data dir opens
 * with this release after a verifiable pre-upgrade backup, once; a rehearsed failure
 * (`LOGSCOPE_UPGRADE_FAIL_AFTER`) puts the stores back and the older release serves them as
 * before; a newer store format is refused.
 */
const OLD_COMMIT = '4aea0cd';
const hasHistory = (() => {
  try {
    execFileSync('git', ['-C', ROOT, 'cat-file', '-e', `${OLD_COMMIT}^{commit}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const dirs: string[] = [];
const running: Started[] = [];
const temp = (name: string) => {
  const d = mkdtempSync(path.join(tmpdir(), `logscope-upgrade-${name}-`));
  dirs.push(d);
  return d;
};

async function healthy(port: number, server: Started): Promise<Record<string, unknown>> {
  return eventually(
    () => `health on port ${port} (${server.out.stderr.trim().slice(-500) || 'no output'})`,
    async () => {
      if (server.child.exitCode !== null)
        throw new Error(`exited ${server.child.exitCode}: ${server.out.stderr}`);
      const res = await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => null);
      return res?.status === 200 && ((await res.json()) as Record<string, unknown>);
    },
    { withinMs: 90_000, everyMs: 200 },
  );
}

async function stop(server: Started): Promise<void> {
  server.child.kill('SIGTERM');
  const exit = await server.exited;
  expect(exit.code, server.out.stderr).toBe(0);
}

const api = async (port: number, dataDir: string, urlPath: string, body?: unknown) => {
  const token = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
  const res = await fetch(`http://127.0.0.1:${port}${urlPath}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(res.status, urlPath).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
};

const T = Date.now() - 3_600_000;
const searchAll = (port: number, dataDir: string) =>
  api(port, dataDir, '/api/query', {
    type: 'Search',
    params: {
      query: 'app:upgrade',
      time_range: { ts_from: Math.floor(T / 1000) - 60, ts_to: Math.floor(Date.now() / 1000) },
      page_size: 10,
    },
  }).then((r) => (r.results as { total: number }).total);

describe.runIf(hasHistory)('upgrading a data dir of an older release', () => {
  let oldTree: string;
  let dataDir: string;
  let rehearsal: string;
  /** The older release's data dir, untouched, for the kill -9. */
  let pristine: string;
  const serveOld = (dir: string, port: number) =>
    start(process.execPath, ['--import', 'tsx', path.join(oldTree, 'src', 'cli', 'index.ts'), 'serve'], {
      LOGSCOPE_DATA_DIR: dir,
      LOGSCOPE_PORT: String(port),
      LOGSCOPE_LOG_LEVEL: 'warn',
    });

  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'pipe' });
    oldTree = temp('release');
    execSync(`git -C ${JSON.stringify(ROOT)} archive ${OLD_COMMIT} | tar -x -C ${JSON.stringify(oldTree)}`);
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(oldTree, 'node_modules'));
    // The older release writes its data dir: events and a dashboard.
    dataDir = temp('data');
    const port = await freePort();
    const old = serveOld(dataDir, port);
    running.push(old);
    await healthy(port, old);
    const lines = Array.from({ length: 200 }, (_, i) =>
      JSON.stringify({
        ts: new Date(T + i * 1000).toISOString(),
        app: 'upgrade',
        message: `before the upgrade ${i}`,
      }),
    ).join('\n');
    const token = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    const res = await fetch(`http://127.0.0.1:${port}/api/ingest`, {
      method: 'POST',
      headers: { authorization: `token ${token}`, 'content-type': 'application/x-ndjson' },
      body: lines,
    });
    expect(res.status).toBe(200);
    await api(port, dataDir, '/api/dashboards', { title: 'Kept across the upgrade' });
    await eventually('the events searchable', async () => (await searchAll(port, dataDir)) === 200);
    await stop(old);
    expect(existsSync(path.join(dataDir, 'store-format.json'))).toBe(false);
    rehearsal = temp('rehearsal');
    cpSync(dataDir, rehearsal, { recursive: true });
    pristine = temp('pristine');
    cpSync(dataDir, pristine, { recursive: true });
  }, 180_000);
  afterAll(() => {
    for (const s of running) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a rehearsed failure puts the stores back, and the older release serves them as before', async () => {
    const port = await freePort();
    const failing = serveBuilt(rehearsal, port, { LOGSCOPE_UPGRADE_FAIL_AFTER: '1' });
    running.push(failing);
    const exit = await failing.exited;
    expect(exit.code, failing.out.stderr).not.toBe(0);
    expect(failing.out.stderr).toMatch(
      /upgrade from store format 0 to \d+ failed after step 1 \(metadata migration \d{4}-[a-z0-9-]+\)/,
    );
    expect(failing.out.stderr).toMatch(/The stores were put back from \S*pre-upgrade-0-to-/);
    expect(existsSync(path.join(rehearsal, 'store-format.json'))).toBe(false);
    expect(existsSync(path.join(rehearsal, 'upgrade-in-progress.json'))).toBe(false);
    const again = serveOld(rehearsal, port);
    running.push(again);
    await healthy(port, again);
    expect(await searchAll(port, rehearsal)).toBe(200);
    await stop(again);
  }, 120_000);

  it('opens with this release after a verifiable pre-upgrade backup, once', async () => {
    const port = await freePort();
    const server = serveBuilt(dataDir, port);
    running.push(server);
    const health = await healthy(port, server);
    expect(health.store_format).toBe(STORE_FORMAT);
    const backups = readdirSync(path.join(dataDir, 'backups'));
    expect(backups).toHaveLength(1);
    expect(backups[0]).toMatch(new RegExp(`^pre-upgrade-0-to-${STORE_FORMAT}-\\d{8}T\\d{6}Z$`));
    const backup = path.join(dataDir, 'backups', backups[0] as string);
    const verified = await verifyBackup(backup);
    expect(verified.problems).toEqual([]);
    expect([verified.ok, verified.kind, verified.events]).toEqual([true, 'pre-upgrade', 200]);
    // Restored, it is the data dir as it was, for the earlier release.
    const back = temp('back');
    await restoreBackup({ dir: backup, dataDir: back, force: false });
    const oldPort = await freePort();
    const earlier = serveOld(back, oldPort);
    running.push(earlier);
    await healthy(oldPort, earlier);
    expect(await searchAll(oldPort, back)).toBe(200);
    await stop(earlier);
    expect(await searchAll(port, dataDir)).toBe(200);
    const dashboards = (await api(port, dataDir, '/api/dashboards')).results as Array<{ title: string }>;
    expect(dashboards.map((d) => d.title)).toContain('Kept across the upgrade');
    const record = JSON.parse(readFileSync(path.join(dataDir, 'store-format.json'), 'utf8'));
    expect(record).toMatchObject({ store_format: STORE_FORMAT, upgrade_backup: backup });
    expect(record.history).toEqual([expect.objectContaining({ from: 0, to: STORE_FORMAT, backup })]);
    const audit = (await api(port, dataDir, '/api/audit?action=store.upgrade')).results as Array<{
      detail: { from: number; migrations: string[] };
    }>;
    expect(audit).toHaveLength(1);
    expect(audit[0]?.detail.from).toBe(0);
    await stop(server);
    // Once: a second start takes no backup and migrates nothing.
    const second = serveBuilt(dataDir, port);
    running.push(second);
    await healthy(port, second);
    await stop(second);
    expect(readdirSync(path.join(dataDir, 'backups'))).toHaveLength(1);
    expect(second.out.stderr).not.toMatch(/upgrad/);
  }, 120_000);

  it('after a crash part-way, the next start puts the stores back first, then upgrades', async () => {
    // The rehearsal's data dir, as a kill -9 during its upgrade would leave it: the marker
    // naming the pre-upgrade backup, the metadata half migrated.
    const [taken] = readdirSync(path.join(rehearsal, 'backups'));
    const backup = path.join(rehearsal, 'backups', taken as string);
    writeFileSync(
      path.join(rehearsal, 'upgrade-in-progress.json'),
      JSON.stringify({ from: 0, to: STORE_FORMAT, backup }),
    );
    writeFileSync(path.join(rehearsal, 'meta.sqlite'), 'half written');
    const port = await freePort();
    const server = serveBuilt(rehearsal, port);
    running.push(server);
    const health = await healthy(port, server);
    expect(health.store_format).toBe(STORE_FORMAT);
    expect(server.out.stderr).toContain(`an upgrade was cut short: putting the stores back from ${backup}`);
    expect(await searchAll(port, rehearsal)).toBe(200);
    await stop(server);
    expect(existsSync(path.join(rehearsal, 'upgrade-in-progress.json'))).toBe(false);
  }, 120_000);

  it('after a kill -9 in the middle of an upgrade, the next start puts the stores back, then upgrades', async () => {
    for (let attempt = 1; attempt <= 3; attempt++) {
      const dir = temp('killed');
      cpSync(pristine, dir, { recursive: true });
      const marker = path.join(dir, 'upgrade-in-progress.json');
      const port = await freePort();
      const killed = serveBuilt(dir, port);
      running.push(killed);
      // Killed once its migrations have begun (the marker is written after the backup).
      await eventually('the upgrade to begin', () => existsSync(marker) || killed.child.exitCode !== null, {
        everyMs: 2,
        withinMs: 60_000,
      });
      killed.child.kill('SIGKILL');
      await killed.exited;
      if (!existsSync(marker)) continue; // it finished before the kill landed: again
      const again = serveBuilt(dir, port);
      running.push(again);
      const health = await healthy(port, again);
      expect(health.store_format).toBe(STORE_FORMAT);
      expect(again.out.stderr).toContain('an upgrade was cut short: putting the stores back from');
      expect(await searchAll(port, dir)).toBe(200);
      await stop(again);
      expect(existsSync(marker)).toBe(false);
      return;
    }
    throw new Error('in 3 tries the kill never landed while the upgrade ran');
  }, 180_000);

  it('without room for its backup, refuses to start, changing nothing; with upgradeBackup off, upgrades without one', async () => {
    const dir = temp('noroom');
    cpSync(pristine, dir, { recursive: true });
    const tiny = temp('tiny');
    let mounted = false;
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', tiny], { stdio: 'ignore' });
      mounted = true;
    } catch {
      // not root: the refusal is not tried here
    }
    if (mounted) {
      try {
        const refused = serveBuilt(dir, await freePort(), { LOGSCOPE_UPGRADE_BACKUP_DIR: tiny });
        running.push(refused);
        expect((await refused.exited).code).not.toBe(0);
        expect(refused.out.stderr).toMatch(
          new RegExp(
            `needs \\d+ bytes in ${tiny}, and \\d+ are free\\. Free some space, or set LOGSCOPE_UPGRADE_BACKUP_DIR`,
          ),
        );
        expect(existsSync(path.join(dir, 'store-format.json'))).toBe(false);
        expect(existsSync(path.join(dir, 'upgrade-in-progress.json'))).toBe(false);
      } finally {
        execFileSync('umount', ['-l', tiny], { stdio: 'ignore' });
      }
    }
    const port = await freePort();
    const server = serveBuilt(dir, port, { LOGSCOPE_UPGRADE_BACKUP: 'off' });
    running.push(server);
    await healthy(port, server);
    expect(server.out.stderr).toContain('warning: upgrading without a backup');
    expect(existsSync(path.join(dir, 'backups'))).toBe(false);
    const record = JSON.parse(readFileSync(path.join(dir, 'store-format.json'), 'utf8'));
    expect(record).toMatchObject({ store_format: STORE_FORMAT, upgrade_backup: null });
    expect(await searchAll(port, dir)).toBe(200);
    await stop(server);
  }, 120_000);

  it('refuses a newer store format, changing nothing', async () => {
    const record = JSON.parse(readFileSync(path.join(dataDir, 'store-format.json'), 'utf8'));
    const newer = { ...record, store_format: STORE_FORMAT + 1, release: '99.0.0' };
    writeFileSync(path.join(dataDir, 'store-format.json'), JSON.stringify(newer));
    const before = readFileSync(path.join(dataDir, 'meta.sqlite'));
    const server = serveBuilt(dataDir, await freePort());
    running.push(server);
    const exit = await server.exited;
    expect(exit.code).not.toBe(0);
    expect(server.out.stderr).toMatch(
      new RegExp(
        `store format ${STORE_FORMAT + 1} \\(release 99\\.0\\.0\\); this release .* reads up to store format ${STORE_FORMAT}: restore the pre-upgrade backup, or run 99\\.0\\.0 or later`,
      ),
    );
    expect(readFileSync(path.join(dataDir, 'meta.sqlite')).equals(before)).toBe(true);
    // A record cut short: one line, nothing changed.
    writeFileSync(path.join(dataDir, 'store-format.json'), '{"store_form');
    const cut = serveBuilt(dataDir, await freePort());
    running.push(cut);
    expect((await cut.exited).code).not.toBe(0);
    expect(cut.out.stderr).toContain('store-format.json is not a store format record (altered or cut short)');
    expect(readFileSync(path.join(dataDir, 'meta.sqlite')).equals(before)).toBe(true);
    writeFileSync(path.join(dataDir, 'store-format.json'), JSON.stringify(record));
  }, 60_000);
});
