/**
 * The store format (docs/api/backups.md): an integer per release, raised by every release
 * that changes what a store holds or how, recorded by a data dir in `store-format.json`
 * beside its stores with the data dir's `instance_id` (which a backup's manifest names).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { StartupError } from '../../errors/startup.js';
import { COMMIT, STORE_FORMAT, VERSION } from '../../version.js';
import { writeFileAtomic } from './manifest.js';

export { COMMIT, STORE_FORMAT };

export const STORE_FORMAT_FILE = 'store-format.json';

export interface StoreFormatRecord {
  store_format: number;
  release: string;
  commit: string;
  instance_id: string;
  created_at: string;
  migrated_at: string;
  upgrade_backup: string | null;
  history: Array<{ from: number; to: number; release: string; at: string; backup: string | null }>;
}

/** A data dir's record, or null when it has none (a release before the store format: 0). */
export function readStoreFormat(dataDir: string): StoreFormatRecord | null {
  const file = path.join(dataDir, STORE_FORMAT_FILE);
  if (!existsSync(file)) return null;
  let record: Partial<StoreFormatRecord> | null = null;
  try {
    record = JSON.parse(readFileSync(file, 'utf8')) as Partial<StoreFormatRecord>;
  } catch {
    // below
  }
  if (!record || typeof record !== 'object' || !Number.isInteger(record.store_format))
    throw new StartupError(
      `Cannot start: ${file} is not a store format record (altered or cut short). Nothing was changed: put back the data dir's copy of it, or restore a backup (docs/operations/upgrade.md).`,
    );
  return record as StoreFormatRecord;
}

/** A new data dir's record, of this release's format. */
export function newStoreFormat(nowIso = new Date().toISOString()): StoreFormatRecord {
  return {
    store_format: STORE_FORMAT,
    release: VERSION,
    commit: COMMIT,
    instance_id: randomUUID(),
    created_at: nowIso,
    migrated_at: nowIso,
    upgrade_backup: null,
    history: [],
  };
}

export function writeStoreFormat(dataDir: string, record: StoreFormatRecord): Promise<void> {
  return writeFileAtomic(path.join(dataDir, STORE_FORMAT_FILE), `${JSON.stringify(record, null, 2)}\n`);
}

/**
 * The data dir's record once its stores are open and migrated: kept when it is this
 * release's, written when absent (a new data dir, or one written before the store format).
 */
export async function recordStoreFormat(dataDir: string): Promise<StoreFormatRecord> {
  const found = readStoreFormat(dataDir);
  if (found && found.store_format === STORE_FORMAT) return found;
  const now = new Date().toISOString();
  const record: StoreFormatRecord = found
    ? {
        ...found,
        store_format: STORE_FORMAT,
        release: VERSION,
        commit: COMMIT,
        migrated_at: now,
        history: [
          ...found.history,
          { from: found.store_format, to: STORE_FORMAT, release: VERSION, at: now, backup: null },
        ],
      }
    : newStoreFormat(now);
  await writeStoreFormat(dataDir, record);
  return record;
}
