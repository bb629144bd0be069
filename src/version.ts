import { existsSync, readFileSync } from 'node:fs';
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

/** The commit this release was built from (its git checkout's HEAD), or `unknown`. */
export const COMMIT: string = readCommit();

function readCommit(): string {
  try {
    const git = path.join(PACKAGE_ROOT, '.git');
    const head = readFileSync(path.join(git, 'HEAD'), 'utf8').trim();
    if (!head.startsWith('ref: ')) return head;
    const ref = head.slice(5);
    const loose = path.join(git, ref);
    if (existsSync(loose)) return readFileSync(loose, 'utf8').trim();
    const packed = readFileSync(path.join(git, 'packed-refs'), 'utf8');
    const line = packed.split('\n').find((l) => l.endsWith(` ${ref}`));
    return line ? line.split(' ')[0] || 'unknown' : 'unknown';
  } catch {
    return 'unknown';
  }
}
