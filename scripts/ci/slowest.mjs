#!/usr/bin/env node
// CI: the slowest test files of a vitest JSON report (`--reporter=json --outputFile=F`),
// and the time each kind of test (the first folder under test/) took in all: where a
// suite's time goes, file by file (issue 74).
//
//   node scripts/ci/slowest.mjs REPORT.json [N=15]
import { readFileSync } from 'node:fs';
import path from 'node:path';

const [file, n = '15'] = process.argv.slice(2);
if (!file) {
  console.error('usage: slowest.mjs REPORT.json [N]');
  process.exit(2);
}
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (error) {
  console.log(`(no timing report: ${error instanceof Error ? error.message : error})`);
  process.exit(0);
}
const root = path.resolve(process.cwd(), 'test');
const files = report.testResults.map((t) => ({
  s: (t.endTime - t.startTime) / 1000,
  name: path.relative(root, t.name),
}));
const byKind = new Map();
for (const f of files) {
  const kind = f.name.split(path.sep)[0];
  byKind.set(kind, (byKind.get(kind) ?? 0) + f.s);
}
const kinds = [...byKind].sort((a, b) => b[1] - a[1]).map(([k, s]) => `${k} ${s.toFixed(0)} s`);
console.log(`   file time by kind (summed over workers): ${kinds.join(', ')}`);
for (const f of files.sort((a, b) => b.s - a.s).slice(0, Number(n)))
  console.log(`   ${f.s.toFixed(1).padStart(6)} s  ${f.name}`);
