import { describe, expect, it } from 'vitest';
import { coldStatus, type IndexReach, indexStatus } from '../../../ui/src/pages/search/cold-status.js';

// The search page's words for the cold files a query reads (ui/src/pages/search/cold-status.ts).

const reach = (files: number, read: number) => ({
  files,
  files_read: read,
  files_skipped: files - read,
  bytes_read: read * 1000,
});

describe('the search status for cold files', () => {
  it('says nothing when the query meets no cold file', () => {
    expect(coldStatus(null, true)).toBeNull();
    expect(coldStatus(undefined, false)).toBeNull();
    expect(coldStatus(reach(0, 0), true)).toBeNull();
  });

  it('says how many of the files it reads while it runs, and that it read them once done', () => {
    expect(coldStatus(reach(40, 40), true)).toBe('reading 40 of 40 cold files');
    expect(coldStatus(reach(40, 40), false)).toBe('read 40 of 40 cold files');
    expect(coldStatus(reach(1, 1), true)).toBe('reading 1 of 1 cold file');
  });

  it('names the files their summaries let it skip', () => {
    expect(coldStatus(reach(40, 12), true)).toBe(
      'reading 12 of 40 cold files, 28 skipped by their summaries',
    );
    expect(coldStatus(reach(1, 0), false)).toBe('read 0 of 1 cold file, 1 skipped by their summaries');
    expect(coldStatus(reach(12_000, 1_500), false)).toBe(
      'read 1,500 of 12,000 cold files, 10,500 skipped by their summaries',
    );
  });
});

describe('the search status for the word index', () => {
  const index = (over: Partial<IndexReach>): IndexReach => ({
    path: 'narrowed',
    why: null,
    blocks: 209,
    candidate_blocks: 5,
    ranges: 5,
    ...over,
  });

  it('says how many blocks a search read through the index, or that it read none', () => {
    expect(indexStatus(index({}))).toBe('word index: 5 of 209 blocks read');
    expect(indexStatus(index({ path: 'index', candidate_blocks: 0, ranges: 0 }))).toBe(
      'word index: none of 209 blocks holds it, nothing read',
    );
  });

  it('says why a search read every event', () => {
    expect(indexStatus(index({ path: 'scan', why: 'no_indexed_term', ranges: 0 }))).toBe(
      'read every event: the query has no word or exact value the word index keeps',
    );
    expect(
      indexStatus(index({ path: 'scan', why: 'too_many_candidates', candidate_blocks: 1200, blocks: 1209 })),
    ).toBe('read every event: 1,200 of 1,209 blocks may hold it');
  });

  it('says nothing without an index, with it off, or with no block in the range', () => {
    expect(indexStatus(null)).toBeNull();
    expect(indexStatus(undefined)).toBeNull();
    expect(indexStatus(index({ path: 'scan', why: 'index_off' }))).toBeNull();
    expect(indexStatus(index({ blocks: 0, candidate_blocks: 0 }))).toBeNull();
  });
});
