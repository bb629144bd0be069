#!/usr/bin/env node
// Compiles src/ to dist/ with TypeScript.
//   node scripts/build.mjs             always compile (npm run build)
//   node scripts/build.mjs --if-stale  compile only when a source is newer than the last
//                                      build (npm start runs this first: a restart with
//                                      nothing changed costs a directory walk, not a compile)
// A production install (`npm ci --omit=dev`) has no TypeScript: there the existing build
// is used as it is, and a missing build stops with one line saying what to run.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist', '.build-stamp');
const entry = path.join(root, 'dist', 'cli', 'index.js');
const tsc = path.join(root, 'node_modules', 'typescript', 'package.json');

/** The newest modification time of the inputs of a build. */
function newestInput() {
  let newest = 0;
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(file);
      else newest = Math.max(newest, statSync(file).mtimeMs);
    }
  };
  visit(path.join(root, 'src'));
  for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'])
    newest = Math.max(newest, statSync(path.join(root, file)).mtimeMs);
  return newest;
}

const ifStale = process.argv.includes('--if-stale');
if (ifStale && existsSync(stamp) && existsSync(entry) && statSync(stamp).mtimeMs >= newestInput())
  process.exit(0);

if (!existsSync(tsc)) {
  if (existsSync(entry)) {
    if (!ifStale)
      console.error(
        'logscope: TypeScript is not installed (production install); keeping the existing build in dist/',
      );
    process.exit(0);
  }
  console.error(
    'logscope: no build in dist/ and TypeScript is not installed: run "npm ci && npm run build" before "npm ci --omit=dev"',
  );
  process.exit(1);
}

const started = Date.now();
// The stamp is taken before compiling: a source saved during the compile makes the next start compile again.
const before = new Date();
const run = spawnSync(
  process.execPath,
  [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')],
  {
    stdio: 'inherit',
  },
);
if (run.status !== 0) process.exit(run.status ?? 1);
writeFileSync(stamp, '');
utimesSync(stamp, before, before);
if (ifStale)
  console.error(`logscope: compiled src/ to dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
