import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SUPPORT_FOLDERS, TEST_KINDS } from '../kinds.js';

describe('tests by kind', () => {
  const folders = readdirSync('test', { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  const kinds = Object.values(TEST_KINDS).flat() as string[];

  it('puts every folder of test/ in exactly one kind (no test left out of every project)', () => {
    expect(folders.filter((f) => !SUPPORT_FOLDERS.includes(f) && !kinds.includes(f))).toEqual([]);
    expect(kinds.filter((f, i) => kinds.indexOf(f) !== i)).toEqual([]);
    expect(kinds.filter((f) => !folders.includes(f))).toEqual([]);
  });
});
