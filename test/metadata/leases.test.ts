import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { COMPONENTS } from '../../src/features/index.js';
import { migrationsOf } from '../../src/features/root.js';
import { openMetadataDb } from '../../src/metadata/database.js';
import { LeasesRepository } from '../../src/metadata/leases-repository.js';
import { TEST_DATABASE_URL } from '../helpers/app.js';

/** Named leases (the alert notifier's): one holder at a time, on each metadata store. */
const BACKENDS = [
  { name: 'SQLite', url: '' },
  ...(TEST_DATABASE_URL ? [{ name: 'PostgreSQL', url: TEST_DATABASE_URL }] : []),
];

describe.each(BACKENDS)('leases on $name', ({ url }) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'logscope-leases-'));
  const schema = `leases_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    if (!url) return;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`drop schema if exists ${schema} cascade`);
    await client.end();
  });

  it('is held by one node until it lapses or is released, then by whoever asks', async () => {
    if (url) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`create schema ${schema}`);
      await client.end();
    }
    const meta = await openMetadataDb({
      databaseUrl: url,
      dataDir: dir,
      migrations: migrationsOf(COMPONENTS),
      ...(url ? { pgSchema: schema } : {}),
    });
    try {
      const leases = new LeasesRepository(meta.db);
      expect(await leases.hold('n', 'a', 1000, 3000)).toBe(true);
      expect(await leases.hold('n', 'b', 2000, 3000)).toBe(false);
      expect(await leases.hold('n', 'a', 3500, 3000)).toBe(true); // renewed until 6500
      expect(await leases.hold('n', 'b', 6000, 3000)).toBe(false);
      expect(await leases.hold('other', 'b', 6000, 3000)).toBe(true); // names are apart
      expect(await leases.hold('n', 'b', 6501, 3000)).toBe(true); // lapsed: taken over
      expect(await leases.hold('n', 'a', 7000, 3000)).toBe(false);
      await leases.release('n', 'a'); // not a's: nothing happens
      expect(await leases.hold('n', 'a', 7000, 3000)).toBe(false);
      await leases.release('n', 'b');
      expect(await leases.hold('n', 'a', 7000, 3000)).toBe(true);
      // Two nodes asking at once: exactly one holds it.
      const both = await Promise.all([
        leases.hold('race', 'a', 8000, 3000),
        leases.hold('race', 'b', 8000, 3000),
      ]);
      expect(both.filter(Boolean)).toHaveLength(1);
    } finally {
      await meta.close();
    }
  });
});
