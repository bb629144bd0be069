import { formatCount } from '../../format.js';

/**
 * What a query reads of the cold tier (a query's `cold`, docs/api/queries.md; null when
 * its range meets none). Written out: unit tests import this module without the DOM api.ts needs.
 */
export interface ColdReach {
  files: number;
  files_skipped: number;
  files_read: number;
  bytes_read: number;
}

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
