import type { components } from '../../api-types.generated.js';
import { formatCount } from '../../format.js';

/**
 * What a query reads of the cold tier (a query's `cold`, docs/api/queries.md; null when
 * its range meets none). The API's own type: imported as a type only, so unit tests load
 * this module without the DOM api.ts needs.
 */
export type ColdReach = NonNullable<components['schemas']['GenericQuery']['cold']>;

/**
 * The search's status words for the cold files it reads: "reading 12 of 40 cold files,
 * 28 skipped by their summaries" while it runs, "read …" once done; null when it meets
 * none (the status then says nothing of them).
 */
export function coldStatus(cold: ColdReach | null | undefined, running: boolean): string | null {
  if (!cold || cold.files === 0) return null;
  const files = `${formatCount(cold.files_read)} of ${formatCount(cold.files)} cold ${cold.files === 1 ? 'file' : 'files'}`;
  const skipped =
    cold.files_skipped > 0 ? `, ${formatCount(cold.files_skipped)} skipped by their summaries` : '';
  return `${running ? 'reading' : 'read'} ${files}${skipped}`;
}

/** How a query met the hot tier's word index (a query's `index`, docs/api/queries.md; null on ClickHouse). */
export type IndexReach = NonNullable<components['schemas']['GenericQuery']['index']>;

/**
 * Why a search was fast or slow, in words: "found through the word index: 5 of 209 blocks
 * read", "nothing to read: no block holds it", or why it read every event; null when it
 * says nothing useful (no index, the index off, nothing in the range).
 */
export function indexStatus(index: IndexReach | null | undefined): string | null {
  if (!index || index.blocks === 0) return null;
  const blocks = `${formatCount(index.blocks)} ${index.blocks === 1 ? 'block' : 'blocks'}`;
  switch (index.path) {
    case 'index':
      return `word index: none of ${blocks} holds it, nothing read`;
    case 'narrowed':
      return `word index: ${formatCount(index.candidate_blocks)} of ${blocks} read`;
    case 'scan':
      if (index.why === 'no_indexed_term')
        return 'read every event: the query has no word or exact value the word index keeps';
      if (index.why === 'too_many_candidates')
        return `read every event: ${formatCount(index.candidate_blocks)} of ${blocks} may hold it`;
      return null;
  }
}
