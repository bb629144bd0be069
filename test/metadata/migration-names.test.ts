import { readdirSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { COMPONENTS } from '../../src/features/index.js';
import { migrationsOf } from '../../src/features/root.js';
import { type MigrationOf, STORE_MIGRATIONS } from '../../src/metadata/migrator.js';
import { freshMetadata, METADATA_BACKENDS } from '../helpers/metadata.js';

/**
 * Every database keeps the names of the migrations it ran (Kysely's `kysely_migration`),
 * and Kysely refuses to start on one that ran a name the code no longer declares, or when
 * a new name sorts before one already run. So a migration's name is for ever: the names
 * are written out here, in the order they run, and each is declared in exactly one place
 * (the store's own list, or one component).
 */
const NAMES = [
  '0001-initial',
  '0002-queries',
  '0003-tasks',
  '0004-dashboards',
  '0005-reports',
  '0006-triggers',
  '0007-cluster',
  '0008-pipelines',
  '0009-alerting',
  '0010-leases',
  '0011-teams',
  '0012-streams',
  '0013-audit',
  '0014-saved-searches',
  '0015-sign-on-users',
  '0016-sign-ins',
  '0017-patterns',
  '0018-users-disabled',
  '0019-trigger-run-as',
  '0020-teams-provider-synced',
  '0021-pattern-remines',
  '0022-channel-kinds',
  '0023-report-links',
  '0024-schedules',
  '0025-stream-hot-days',
  '0026-report-link-records',
  '0027-channel-kinds-unchecked',
  '0028-log-metrics',
  '0029-log-metric-jobs',
  '0030-backups',
];

/** Each declaration of a migration: its name, what it runs, and who declares it. */
const declarations = [
  ...Object.entries(STORE_MIGRATIONS).map(([name, run]) => ({ name, run, by: 'the store' })),
  ...COMPONENTS.flatMap((c) =>
    Object.entries(c.migrations ?? {}).map(([name, run]) => ({ name, run, by: c.name })),
  ),
];

/** Every migration function the source exports: the store's files and the features' tables. */
async function exportedMigrations(): Promise<{ file: string; run: MigrationOf }[]> {
  const files = [
    ...readdirSync('src/metadata/migrations')
      .filter((f) => /^\d{4}-.*\.ts$/.test(f))
      .map((f) => `src/metadata/migrations/${f}`),
    ...readdirSync('src/features', { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) =>
        readdirSync(`src/features/${d.name}`)
          .filter((f) => f.endsWith('-table.ts'))
          .map((f) => `src/features/${d.name}/${f}`),
      ),
  ];
  const found: { file: string; run: MigrationOf }[] = [];
  for (const file of files) {
    const module: Record<string, unknown> = await import(path.resolve(file));
    // A migration's export is a function returning `{up, down}`: the table files name
    // theirs `<x>Migration`, the store's files name them after the file.
    for (const [exported, value] of Object.entries(module))
      if (typeof value === 'function' && (exported.endsWith('Migration') || file.includes('/migrations/')))
        found.push({ file, run: value as MigrationOf });
  }
  return found;
}

describe('metadata migrations', () => {
  it('are the names databases have run, each declared once', () => {
    const byName = new Map<string, string[]>();
    for (const d of declarations) byName.set(d.name, [...(byName.get(d.name) ?? []), d.by]);
    expect([...byName.keys()].sort()).toEqual(NAMES);
    expect([...byName].filter(([, by]) => by.length !== 1)).toEqual([]);
    // The merge the store runs agrees.
    expect(Object.keys({ ...STORE_MIGRATIONS, ...migrationsOf(COMPONENTS) }).sort()).toEqual(NAMES);
  });

  it('leave no migration written but declared nowhere, or declared under two names', async () => {
    const exported = await exportedMigrations();
    // The walk is not vacuous: the store's two and the features' table files are found.
    expect(exported.length).toBeGreaterThanOrEqual(NAMES.length);
    const undeclared = exported.filter((e) => !declarations.some((d) => d.run === e.run));
    expect(undeclared.map((e) => e.file)).toEqual([]);
    const runs = declarations.map((d) => d.run);
    expect(new Set(runs).size).toBe(runs.length);
  });
});

describe.each(METADATA_BACKENDS)('a fresh metadata store on $name', ({ url }) => {
  it('has run exactly those migrations', async () => {
    const { meta, dispose } = await freshMetadata(url, 'mig-names');
    try {
      const ran = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
        meta.db,
      );
      expect(ran.rows.map((r) => r.name)).toEqual(NAMES);
    } finally {
      await dispose();
    }
  });
});
