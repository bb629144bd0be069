import { describe, expect, it } from 'vitest';
import { COMPONENTS } from '../../../src/features/index.js';
import { migrationsOf } from '../../../src/features/root.js';
import { STORE_MIGRATIONS } from '../../../src/metadata/migrator.js';
import { STORE_FORMAT_NEWEST_MIGRATION } from '../../../src/version.js';

// A release that adds a metadata migration raises the store format (docs/operations/upgrade.md):
// otherwise a data dir of the earlier release would take the migration without the backup
// an upgrade takes first.
describe('the store format', () => {
  it('names the newest metadata migration: a new one raises STORE_FORMAT', () => {
    const names = [...Object.keys(STORE_MIGRATIONS), ...Object.keys(migrationsOf(COMPONENTS))].sort();
    expect(names[names.length - 1]).toBe(STORE_FORMAT_NEWEST_MIGRATION);
  });
});
