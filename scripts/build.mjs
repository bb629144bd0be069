#!/usr/bin/env node
// Bundles src/ into dist/cli with esbuild, and builds the web UI (ui/) into dist/ui with Vite.
//   node scripts/build.mjs             always compile and build the UI (npm run build)
//   node scripts/build.mjs --if-stale  each part only when one of its inputs is newer than
//                                      its last build (npm start runs this first: a restart
//                                      with nothing changed costs a directory walk, not a build)
// A production install (`npm ci --omit=dev`) has neither esbuild nor Vite: there the
// existing builds are used as they are, and a missing server build stops with one line
// saying what to run (a missing UI build only makes the UI's pages say so).
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ifStale = process.argv.includes('--if-stale');

/**
 * The newest modification time under the folders (their own times too: a deleted or
 * renamed file changes its folder's) and of the files given.
 */
function newest(dirs, files) {
  let latest = 0;
  const visit = (dir) => {
    latest = Math.max(latest, statSync(dir).mtimeMs);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules') continue;
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(file);
      else latest = Math.max(latest, statSync(file).mtimeMs);
    }
  };
  for (const dir of dirs) visit(path.join(root, dir));
  for (const file of files) latest = Math.max(latest, statSync(path.join(root, file)).mtimeMs);
  return latest;
}

/** Whether a build (its stamp, its main output) is missing or older than its inputs. */
const stale = (stamp, output, inputs) =>
  !existsSync(stamp) || !existsSync(output) || statSync(stamp).mtimeMs < inputs();

/** Runs a build tool with node; stops this script with its status when it fails. */
function run(args, env = process.env) {
  const result = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root, env });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/**
 * Marks a build done as of `before`, taken before it started: a source saved during the
 * build makes the next start build again.
 */
function stampAt(stamp, before) {
  writeFileSync(stamp, '');
  utimesSync(stamp, before, before);
}

const seconds = (started) => ((Date.now() - started) / 1000).toFixed(1);

/**
 * One build at a time in this folder: a second `npm start`, or test files starting in
 * parallel, wait for the first build and then find everything fresh, instead of writing
 * the same files (and emptying dist/ui) under each other. A lock whose process is gone is
 * taken over.
 */
let locked = false;
function takeLock() {
  if (locked) return;
  const lock = path.join(root, 'dist', '.build-lock');
  mkdirSync(path.dirname(lock), { recursive: true });
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; ; waited += 100) {
    try {
      mkdirSync(lock);
      writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    let holder = 0;
    try {
      holder = Number(readFileSync(path.join(lock, 'pid'), 'utf8'));
    } catch {
      // Being taken or let go right now: look again shortly.
    }
    if (holder > 0 && !alive(holder)) rmSync(lock, { recursive: true, force: true });
    else if (waited === 1000) console.error('logscope: waiting for another build of this folder to finish');
    Atomics.wait(pause, 0, 0, 100);
  }
  locked = true;
  process.on('exit', () => rmSync(lock, { recursive: true, force: true }));
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * Packages bundled into the server build instead of loaded from node_modules at start:
 * pure ES modules spread over hundreds of files each, whose loading was a third of the
 * start-up time. Every other dependency stays a plain import (native addons, packages
 * that read their own files).
 */
const BUNDLED = ['typebox', 'kysely', '@fastify/type-provider-typebox'];

/**
 * The server: src/ bundled by esbuild into dist/cli (index.js, the CLI and server;
 * store-worker.js, the event store's worker thread; metadata-snapshot-worker.js, a backup's
 * copy of the metadata store; shared chunks beside them). dist/cli
 * sits two levels below the package root as src/core does, which is how the server finds
 * its files (src/core/package-root.ts). Type checking is `npm run lint`'s (tsc).
 */
async function buildServer() {
  const stamp = path.join(root, 'dist', '.build-stamp');
  const outdir = path.join(root, 'dist', 'cli');
  const entry = path.join(outdir, 'index.js');
  const esbuild = path.join(root, 'node_modules', 'esbuild', 'package.json');
  const inputs = () => newest(['src'], ['tsconfig.json', 'package.json', 'package-lock.json']);
  if (ifStale && !stale(stamp, entry, inputs)) return;
  if (!existsSync(esbuild)) {
    if (existsSync(entry)) {
      if (!ifStale)
        console.error(
          'logscope: esbuild is not installed (production install); keeping the existing build in dist/',
        );
      return;
    }
    console.error(
      'logscope: no build in dist/ and esbuild is not installed: run "npm ci && npm run build" before "npm ci --omit=dev"',
    );
    process.exit(1);
  }
  takeLock();
  // Another build may have finished it while this one waited.
  if (ifStale && !stale(stamp, entry, inputs)) return;
  const started = Date.now();
  const before = new Date();
  const { build } = await import(
    pathToFileURL(path.join(root, 'node_modules', 'esbuild', 'lib', 'main.js')).href
  );
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const external = Object.keys(pkg.dependencies ?? {})
    .filter((name) => !BUNDLED.includes(name))
    .flatMap((name) => [name, `${name}/*`]);
  rmSync(outdir, { recursive: true, force: true });
  try {
    await build({
      entryPoints: {
        index: path.join(root, 'src', 'cli', 'index.ts'),
        'store-worker': path.join(root, 'src', 'event-store', 'worker', 'store-worker.ts'),
        'metadata-snapshot-worker': path.join(
          root,
          'src',
          'features',
          'backups',
          'metadata-snapshot-worker.ts',
        ),
      },
      outdir,
      entryNames: '[name]',
      chunkNames: '[name]-[hash]',
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: `node${process.versions.node.split('.')[0]}`,
      external,
      sourcemap: 'linked',
      logLevel: 'warning',
    });
  } catch {
    // esbuild has printed what is wrong.
    process.exit(1);
  }
  stampAt(stamp, before);
  if (ifStale) console.error(`logscope: built src/ into dist/cli in ${seconds(started)} s`);
}

/**
 * The web UI: ui/ built by Vite with ui/vite.config.ts into dist/ui (its own folder, which
 * Vite empties and fills), stamped dist/ui/.build-stamp. A checkout without ui/ has none
 * to build; without Vite (a production install) the existing build is served as it is.
 */
function buildUi() {
  const config = path.join(root, 'ui', 'vite.config.ts');
  if (!existsSync(config)) return;
  const out = path.join(root, 'dist', 'ui');
  const stamp = path.join(out, '.build-stamp');
  const page = path.join(out, 'index.html');
  const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  const inputs = () => newest(['ui'], ['package-lock.json']);
  if (ifStale && !stale(stamp, page, inputs)) return;
  if (!existsSync(vite)) {
    if (!existsSync(page))
      console.error(
        'logscope: the web UI is not built and Vite is not installed: run "npm ci && npm run build" before "npm ci --omit=dev" (until then its pages say so)',
      );
    else if (!ifStale)
      console.error(
        'logscope: Vite is not installed (production install); keeping the existing web UI in dist/ui',
      );
    return;
  }
  takeLock();
  if (ifStale && !stale(stamp, page, inputs)) return;
  const started = Date.now();
  const before = new Date();
  // A production build whatever NODE_ENV the shell (or a test runner: `test`) has: Vite
  // would otherwise bundle React's development build.
  run([vite, 'build', '--config', config, '--logLevel', 'warn'], { ...process.env, NODE_ENV: 'production' });
  if (!existsSync(page)) {
    console.error(
      'logscope: the web UI build wrote no dist/ui/index.html: ui/vite.config.ts must build into dist/ui',
    );
    process.exit(1);
  }
  compressUi(out);
  stampAt(stamp, before);
  console.error(`logscope: built the web UI in ${seconds(started)} s`);
}

/** What is worth compressing: text the browser fetches (fonts and images already are). */
const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt)$/;

/**
 * Writes `<file>.br` and `<file>.gz` beside each text file of the build, once, at the
 * highest levels (the server sends them to browsers that accept them, with no work per
 * request: @fastify/static's preCompressed). A file too small to gain is left alone.
 */
function compressUi(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      compressUi(file);
      continue;
    }
    if (!COMPRESSIBLE.test(entry.name)) continue;
    const raw = readFileSync(file);
    if (raw.length < 1024) continue;
    const br = brotliCompressSync(raw, {
      params: {
        [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY,
        [zlib.BROTLI_PARAM_SIZE_HINT]: raw.length,
      },
    });
    const gz = gzipSync(raw, { level: 9 });
    if (br.length < raw.length) writeFileSync(`${file}.br`, br);
    if (gz.length < raw.length) writeFileSync(`${file}.gz`, gz);
  }
}

await buildServer();
buildUi();
