#!/usr/bin/env node
// CI helper: prints the test files under the given folders that run the same whatever the
// test settings: neither they nor anything they import from test/ (transitively) reads a
// `LOGSCOPE_TEST_` setting (they start the built server with a clean environment, served.ts,
// or test a process of their own). A later leg of CI with other backends excludes them:
// they ran on the first leg and would do the same work again.
//
//   node scripts/ci/env-free.mjs test/process
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const IMPORT = /(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g;
const memo = new Map();

/** True when `file` or a module it imports from the tests reads a LOGSCOPE_TEST_ setting. */
function readsSettings(file, seen = new Set()) {
  if (memo.has(file)) return memo.get(file);
  if (seen.has(file)) return false;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  let reads = text.includes('LOGSCOPE_TEST_');
  for (const [, spec] of text.matchAll(IMPORT)) {
    if (reads) break;
    const target = path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts'));
    if (target.includes(`${path.sep}test${path.sep}`) && target.endsWith('.ts'))
      reads = readsSettings(target, seen);
  }
  memo.set(file, reads);
  return reads;
}

for (const dir of process.argv.slice(2)) {
  for (const name of readdirSync(dir, { recursive: true }).map(String).sort()) {
    const file = path.join(dir, name);
    if (file.endsWith('.test.ts') && !readsSettings(path.resolve(file))) console.log(file);
  }
}
