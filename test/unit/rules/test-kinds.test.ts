import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TEST_KINDS } from '../../../vitest.config.js';

/** Folders of `test/` that hold no tests of their own. */
const SUPPORT_FOLDERS = ['helpers', 'fixtures'];

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return testFiles(p);
    return d.name.endsWith('.test.ts') ? [p] : [];
  });
}

describe('tests by kind', () => {
  const folders = readdirSync('test', { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);

  it('has a folder of test/ for each kind and no other folder (no test left out of every project)', () => {
    const kinds: readonly string[] = TEST_KINDS;
    expect(folders.filter((f) => !SUPPORT_FOLDERS.includes(f) && !kinds.includes(f))).toEqual([]);
    expect(kinds.filter((k) => !folders.includes(k))).toEqual([]);
  });

  it('keeps no test in the support folders', () => {
    expect(SUPPORT_FOLDERS.flatMap((f) => testFiles(path.join('test', f)))).toEqual([]);
  });
});
