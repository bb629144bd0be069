import { execFile, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config/config.js';

// scripts/build.mjs's web UI part, in a scratch copy of the package: a server build that
// is up to date, and a stand-in for Vite that records its calls and writes dist/ui the way
// Vite does (emptying it first).

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const FAKE_VITE = `
const fs = require('node:fs');
const path = require('node:path');
const root = process.cwd();
fs.appendFileSync(path.join(root, 'vite-calls'), JSON.stringify([...process.argv.slice(2), 'NODE_ENV=' + process.env.NODE_ENV]) + '\\n');
if (process.env.FAKE_VITE_FAIL) { console.error('ui/src/main.tsx: syntax error'); process.exit(1); }
const wait = Number(process.env.FAKE_VITE_MS || 0);
if (wait) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, wait);
if (process.env.FAKE_VITE_ELSEWHERE) process.exit(0);
const out = path.join(root, 'dist', 'ui');
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(path.join(out, 'assets'), { recursive: true });
fs.writeFileSync(path.join(out, 'index.html'), '<!doctype html>');
fs.writeFileSync(path.join(out, 'assets', 'index-abc.js'), '');
`;

const OLD = new Date(Date.now() - 3_600_000);
const FUTURE = () => new Date(Date.now() + 60_000);

function scratch(opts: { vite?: boolean; ui?: boolean } = {}) {
  const root = mkdtempSync(path.join(tmpdir(), 'logscope-build-'));
  dirs.push(root);
  for (const d of ['scripts', 'src', 'dist/cli']) mkdirSync(path.join(root, d), { recursive: true });
  copyFileSync(path.join(PACKAGE_ROOT, 'scripts', 'build.mjs'), path.join(root, 'scripts', 'build.mjs'));
  const files = ['src/index.ts', 'tsconfig.json', 'package.json', 'package-lock.json'];
  for (const f of files) writeFileSync(path.join(root, f), '');
  if (opts.ui ?? true) {
    mkdirSync(path.join(root, 'ui', 'src'), { recursive: true });
    writeFileSync(path.join(root, 'ui', 'vite.config.ts'), 'export default {};');
    writeFileSync(path.join(root, 'ui', 'src', 'main.tsx'), '');
    files.push('ui/vite.config.ts', 'ui/src/main.tsx', 'ui/src', 'ui');
  }
  for (const f of [...files, 'src']) utimesSync(path.join(root, f), OLD, OLD);
  // The server build is up to date (and there is no esbuild to make another).
  writeFileSync(path.join(root, 'dist', 'cli', 'index.js'), '');
  writeFileSync(path.join(root, 'dist', '.build-stamp'), '');
  if (opts.vite ?? true) {
    mkdirSync(path.join(root, 'node_modules', 'vite', 'bin'), { recursive: true });
    writeFileSync(path.join(root, 'node_modules', 'vite', 'bin', 'vite.js'), FAKE_VITE);
  }
  const run = (args: string[] = ['--if-stale'], env: Record<string, string> = {}) => {
    const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), ...args], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
    return { code: r.status, stderr: r.stderr };
  };
  const calls = () =>
    existsSync(path.join(root, 'vite-calls'))
      ? readFileSync(path.join(root, 'vite-calls'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as string[])
      : [];
  return { root, run, calls };
}

const BUILT = /^logscope: built the web UI in \d+\.\d s\n$/;
/** What `npm run build` says first in the scratch package, which has no esbuild. */
const NO_ESBUILD =
  'logscope: esbuild is not installed (production install); keeping the existing build in dist/\n';

describe('scripts/build.mjs: the web UI', () => {
  beforeEach(() => {
    // Nothing here may inherit a stand-in's switches from another test.
    for (const k of ['FAKE_VITE_FAIL', 'FAKE_VITE_MS', 'FAKE_VITE_ELSEWHERE']) delete process.env[k];
  });

  it('builds once with ui/vite.config.ts, then a restart with nothing changed builds nothing', () => {
    const s = scratch();
    const first = s.run(['--if-stale'], { NODE_ENV: 'test' });
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(BUILT);
    expect(s.calls()).toEqual([
      // A production build even under a test runner's NODE_ENV=test.
      [
        'build',
        '--config',
        path.join(s.root, 'ui', 'vite.config.ts'),
        '--logLevel',
        'warn',
        'NODE_ENV=production',
      ],
    ]);
    expect(existsSync(path.join(s.root, 'dist', 'ui', '.build-stamp'))).toBe(true);
    // The server's build and its stamp are left alone.
    expect(existsSync(path.join(s.root, 'dist', 'cli', 'index.js'))).toBe(true);
    expect(existsSync(path.join(s.root, 'dist', '.build-stamp'))).toBe(true);
    expect(existsSync(path.join(s.root, 'dist', '.build-lock'))).toBe(false);

    expect(s.run()).toEqual({ code: 0, stderr: '' });
    expect(s.calls()).toHaveLength(1);
  });

  it('builds again when a ui/ source, a removed file or package-lock.json is newer than the build', () => {
    const s = scratch();
    s.run();
    const later = FUTURE();
    utimesSync(path.join(s.root, 'ui', 'src', 'main.tsx'), later, later);
    expect(s.run().stderr).toMatch(BUILT);
    expect(s.calls()).toHaveLength(2);

    rmSync(path.join(s.root, 'ui', 'src', 'main.tsx'));
    const later2 = new Date(later.getTime() + 60_000);
    utimesSync(path.join(s.root, 'ui', 'src'), later2, later2);
    expect(s.run().stderr).toMatch(BUILT);
    expect(s.calls()).toHaveLength(3);

    const later3 = new Date(later2.getTime() + 60_000);
    utimesSync(path.join(s.root, 'package-lock.json'), later3, later3);
    expect(s.run().stderr).toMatch(BUILT);
    expect(s.calls()).toHaveLength(4);

    rmSync(path.join(s.root, 'dist', 'ui', 'index.html'));
    expect(s.run().stderr).toMatch(BUILT);
    expect(s.calls()).toHaveLength(5);
  });

  it('always builds for npm run build (no --if-stale)', () => {
    const s = scratch();
    for (let i = 0; i < 2; i++) {
      const { code, stderr } = s.run([]);
      expect(code).toBe(0);
      expect(stderr.startsWith(NO_ESBUILD)).toBe(true);
      expect(stderr.slice(NO_ESBUILD.length)).toMatch(BUILT);
    }
    expect(s.calls()).toHaveLength(2);
  });

  it('has nothing to build in a checkout without ui/', () => {
    const s = scratch({ ui: false });
    expect(s.run()).toEqual({ code: 0, stderr: '' });
    expect(s.run([])).toEqual({ code: 0, stderr: NO_ESBUILD });
    expect(s.calls()).toEqual([]);
  });

  it('in a production install (no Vite) keeps the existing UI, and without one says what to run', () => {
    const s = scratch({ vite: false });
    const missing = s.run();
    expect(missing.code).toBe(0);
    expect(missing.stderr).toBe(
      'logscope: the web UI is not built and Vite is not installed: run "npm ci && npm run build" before "npm ci --omit=dev" (until then its pages say so)\n',
    );
    mkdirSync(path.join(s.root, 'dist', 'ui'));
    writeFileSync(path.join(s.root, 'dist', 'ui', 'index.html'), '');
    expect(s.run()).toEqual({ code: 0, stderr: '' });
    expect(s.run([])).toEqual({
      code: 0,
      stderr: `${NO_ESBUILD}logscope: Vite is not installed (production install); keeping the existing web UI in dist/ui\n`,
    });
  });

  it('fails when Vite fails or writes elsewhere, and tries again next time', () => {
    const s = scratch();
    const failed = s.run(['--if-stale'], { FAKE_VITE_FAIL: '1' });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('syntax error');
    expect(existsSync(path.join(s.root, 'dist', '.build-lock'))).toBe(false);
    const elsewhere = s.run(['--if-stale'], { FAKE_VITE_ELSEWHERE: '1' });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain('ui/vite.config.ts must build into dist/ui');
    expect(s.run().stderr).toMatch(BUILT);
    expect(s.calls()).toHaveLength(3);
  });

  it('builds once when two starts run at the same time (the second waits, then finds it fresh)', async () => {
    const s = scratch();
    const start = () =>
      new Promise<string>((resolve) => {
        execFile(
          process.execPath,
          [path.join(s.root, 'scripts', 'build.mjs'), '--if-stale'],
          { env: { ...process.env, FAKE_VITE_MS: '1500' } },
          (_err, _stdout, stderr) => resolve(stderr),
        );
      });
    const outputs = await Promise.all([start(), start()]);
    expect(s.calls()).toHaveLength(1);
    expect(outputs.filter((o) => o.includes('logscope: built the web UI in'))).toHaveLength(1);
    expect(existsSync(path.join(s.root, 'dist', '.build-lock'))).toBe(false);
  });

  it('takes over the lock of a build that died', () => {
    const s = scratch();
    mkdirSync(path.join(s.root, 'dist', '.build-lock'));
    // A process id that is not running (the kernel's limit is far below it).
    writeFileSync(path.join(s.root, 'dist', '.build-lock', 'pid'), '2147483646');
    expect(s.run().stderr).toMatch(BUILT);
  });
});
