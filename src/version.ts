import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from './core/package-root.js';

/** The package version, read once. */
export const VERSION: string = (
  JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

/**
 * This release's store format (docs/api/backups.md): raised by every release that changes
 * what a store holds or how (a metadata migration, an event table change, a cold file
 * schema). A data dir records its own in `store-format.json`.
 */
export const STORE_FORMAT = 1;

/**
 * The newest metadata migration of this store format: a release that adds one raises
 * STORE_FORMAT and names its newest here (test/unit/rules/store-format.test.ts holds them
 * together), so a data dir of the earlier format is upgraded with a backup first.
 */
export const STORE_FORMAT_NEWEST_MIGRATION = '0030-backups';

/** The commit this release was built from (its git checkout's HEAD), or `unknown`. */
export const COMMIT: string = readCommit();

function readCommit(): string {
  try {
    let git = path.join(PACKAGE_ROOT, '.git');
    // A worktree's .git is a file naming its folder; its refs are the common folder's.
    if (!statSync(git).isDirectory())
      git = readFileSync(git, 'utf8')
        .replace(/^gitdir:\s*/, '')
        .trim();
    const common = existsSync(path.join(git, 'commondir'))
      ? path.resolve(git, readFileSync(path.join(git, 'commondir'), 'utf8').trim())
      : git;
    const head = readFileSync(path.join(git, 'HEAD'), 'utf8').trim();
    if (!head.startsWith('ref: ')) return head;
    const ref = head.slice(5);
    for (const dir of [git, common]) {
      const loose = path.join(dir, ref);
      if (existsSync(loose)) return readFileSync(loose, 'utf8').trim();
    }
    const packed = readFileSync(path.join(common, 'packed-refs'), 'utf8');
    const line = packed.split('\n').find((l) => l.endsWith(` ${ref}`));
    return line ? line.split(' ')[0] || 'unknown' : 'unknown';
  } catch {
    return 'unknown';
  }
}
