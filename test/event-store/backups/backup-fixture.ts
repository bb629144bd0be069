import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { ulid } from 'ulidx';
import { DuckDbEventStore } from '../../../src/event-store/duckdb/duckdb-event-store.js';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  type BackupFileKind,
  hashFile,
  type Manifest,
  type ManifestFile,
  METADATA_TABLES,
  type MetadataCounts,
} from '../../../src/features/backups/manifest.js';
import { COMPONENTS } from '../../../src/features/index.js';
import { migrationsOf } from '../../../src/features/root.js';
import { openMetadataDb } from '../../../src/metadata/database.js';
import { openSqliteDatabase } from '../../../src/metadata/sqlite-driver.js';
import { event } from '../../event-store/filter-store.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2024, 4, 1, 10);
const q = (s: string) => `'${s.replace(/'/g, "''")}'`;

/**
 * A full backup folder of layout `logical`, made as the writer makes one: a real event
 * store's tables (hot parts per UTC day, the other tables and their schema), a metadata
 * store made with every migration (journal mode DELETE), a cold file, a report, the admin
 * token, and its manifest. `src` is the data dir it was taken from (left as it is).
 */
export async function makeBackup(
  root: string,
  hotEvents = 30,
): Promise<{ dir: string; manifest: Manifest; ids: string[] }> {
  const src = path.join(root, 'src');
  const dir = path.join(root, 'backup');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const store = await DuckDbEventStore.open({
    dataDir: src,
    memoryLimit: '256MB',
    checkpointThreshold: '16MB',
  });
  const events = Array.from({ length: hotEvents }, (_, i) =>
    // The id's time is when the event was received (the store finds it by that).
    event(ulid(T0 + (i % 2) * DAY + i * 1000 + 500), {
      ts: T0 + (i % 2) * DAY + i * 1000,
      received_at: T0 + (i % 2) * DAY + i * 1000 + 500,
      message: `event ${i} from web-${i % 3}`,
      host: `web-${i % 3}`,
    }),
  );
  await store.append(events);
  await store.close();

  const files: Array<{ path: string; kind: BackupFileKind }> = [];
  const instance = await DuckDBInstance.create(path.join(src, 'events.duckdb'));
  const c = await instance.connect();
  try {
    const rows = async (sql: string) => (await c.runAndReadAll(sql)).getRowObjectsJS();
    const tables = (await rows(`SELECT table_name, sql FROM duckdb_tables() ORDER BY table_name`)) as Array<{
      table_name: string;
      sql: string;
    }>;
    const indexes = await rows(`SELECT sql FROM duckdb_indexes() WHERE sql IS NOT NULL`);
    mkdirSync(path.join(dir, 'store'), { mode: 0o700 });
    mkdirSync(path.join(dir, 'hot'), { mode: 0o700 });
    writeFileSync(
      path.join(dir, 'store/schema.sql'),
      `${[...tables.map((t) => t.sql), ...indexes.map((i) => String(i.sql))].join('\n')}\n`,
    );
    files.push({ path: 'store/schema.sql', kind: 'events_store' });
    for (const t of tables.filter((x) => x.table_name !== 'events')) {
      await c.run(
        `COPY "${t.table_name}" TO ${q(path.join(dir, `store/${t.table_name}.parquet`))} (FORMAT parquet)`,
      );
      files.push({ path: `store/${t.table_name}.parquet`, kind: 'events_store' });
    }
    const days = (await rows(`SELECT DISTINCT CAST(ts AS DATE)::VARCHAR AS d FROM events ORDER BY d`)).map(
      (r) => String(r.d),
    );
    for (const [n, d] of days.entries()) {
      await c.run(
        `COPY (SELECT * FROM events WHERE CAST(ts AS DATE) = ${q(d)} ORDER BY ts, ev_id) TO ${q(path.join(dir, `hot/part-${n}.parquet`))} (FORMAT parquet, COMPRESSION zstd)`,
      );
      files.push({ path: `hot/part-${n}.parquet`, kind: 'hot' });
    }
    // A cold file: a day's events in the cold tier's place.
    const cold = 'cold/1/2024-04-30/part-0.parquet';
    mkdirSync(path.join(dir, path.dirname(cold)), { recursive: true, mode: 0o700 });
    await c.run(
      `COPY (SELECT * FROM events LIMIT 5) TO ${q(path.join(dir, cold))} (FORMAT parquet, COMPRESSION zstd)`,
    );
    files.push({ path: cold, kind: 'cold' });
  } finally {
    c.closeSync();
    instance.closeSync();
  }

  // The metadata store, with every migration, as one file.
  const meta = await openMetadataDb({ databaseUrl: '', dataDir: src, migrations: migrationsOf(COMPONENTS) });
  await meta.close();
  mkdirSync(path.join(dir, 'metadata'), { mode: 0o700 });
  // Its write-ahead log too (then folded in by the journal mode's change).
  for (const tail of ['', '-wal'])
    if (existsSync(path.join(src, `meta.sqlite${tail}`)))
      copyFileSync(path.join(src, `meta.sqlite${tail}`), path.join(dir, `metadata/meta.sqlite${tail}`));
  const sqlite = await openSqliteDatabase(path.join(dir, 'metadata/meta.sqlite'));
  const counts = {} as MetadataCounts;
  try {
    sqlite.exec('PRAGMA journal_mode = DELETE');
    for (const [name, table] of Object.entries(METADATA_TABLES))
      counts[name as keyof MetadataCounts] = Number(
        (sqlite.database.prepare(`SELECT count(*) AS n FROM "${table}"`).all([])[0] as { n: number }).n,
      );
  } finally {
    sqlite.database.close();
  }
  files.push({ path: 'metadata/meta.sqlite', kind: 'metadata' });
  if (readdirSync(path.join(dir, 'metadata')).length !== 1) throw new Error('meta.sqlite is not one file');
  mkdirSync(path.join(dir, 'reports'), { mode: 0o700 });
  writeFileSync(path.join(dir, 'reports/1-2024-05-01.pdf'), '%PDF-1.4 a report\n');
  files.push({ path: 'reports/1-2024-05-01.pdf', kind: 'report' });
  writeFileSync(path.join(dir, 'admin-token'), 'ls_admin_secret\n');
  files.push({ path: 'admin-token', kind: 'admin_token' });

  const listed: ManifestFile[] = [];
  const duck = await DuckDBInstance.create(':memory:');
  const d = await duck.connect();
  for (const f of files) {
    const { sha256, bytes } = await hashFile(path.join(dir, f.path));
    const entry: ManifestFile = { ...f, bytes, sha256 };
    if (f.path.endsWith('.parquet'))
      entry.rows = Number(
        (
          await d.runAndReadAll(
            `SELECT sum(num_rows) AS n FROM parquet_file_metadata(${q(path.join(dir, f.path))})`,
          )
        ).getRowObjectsJS()[0]?.n,
      );
    listed.push(entry);
  }
  d.closeSync();
  duck.closeSync();
  const sum = (kind: BackupFileKind) =>
    listed.filter((f) => f.kind === kind).reduce((s, f) => s + (f.rows ?? 0), 0);
  const now = new Date().toISOString();
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    format_version: BACKUP_FORMAT_VERSION,
    id: '01HZBACKUPFULL0000000000000',
    kind: 'full',
    layout: 'logical',
    instance_id: '2b1f6c1e-0000-4000-8000-000000000001',
    release: '0.1.0',
    commit: 'abc123',
    store_format: 1,
    base: null,
    started_at: now,
    snapshot_at: now,
    finished_at: now,
    counts: { events: { hot: sum('hot'), cold: sum('cold') }, streams: [], metadata: counts },
    bytes: listed.reduce((s, f) => s + f.bytes, 0),
    files: listed,
    inherited: [],
  };
  writeManifest(dir, manifest);
  return { dir, manifest, ids: events.map((e) => e.ev_id) };
}

export function writeManifest(dir: string, manifest: Manifest): void {
  writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
}

/**
 * An incremental on `full` (made by makeBackup), as the writer makes one: the metadata and
 * the store's other tables whole; in `hot/` the event `changed` re-mined in place (its
 * message rewritten) and the `added` events (copies of others under new ids); `hot/ids.parquet`
 * every hot id but `dropped`'s (retention removed it); the cold file inherited.
 */
export async function makeIncremental(
  full: { dir: string; manifest: Manifest },
  dir: string,
  change: { changed: string; dropped: string; added: Array<{ from: string; id: string }> },
): Promise<Manifest> {
  mkdirSync(path.join(dir, 'hot'), { recursive: true, mode: 0o700 });
  const own = full.manifest.files.filter((f) =>
    ['metadata', 'events_store', 'report', 'admin_token'].includes(f.kind),
  );
  for (const f of own) {
    mkdirSync(path.dirname(path.join(dir, f.path)), { recursive: true, mode: 0o700 });
    copyFileSync(path.join(full.dir, f.path), path.join(dir, f.path));
  }
  const parts = full.manifest.files
    .filter((f) => f.kind === 'hot')
    .map((f) => q(path.join(full.dir, f.path)));
  const duck = await DuckDBInstance.create(':memory:');
  const c = await duck.connect();
  const listed: ManifestFile[] = [...own];
  try {
    await c.run(`CREATE TABLE hot AS SELECT * FROM read_parquet([${parts.join(', ')}])`);
    const copies = change.added.map(
      (a) => `SELECT * REPLACE (${q(a.id)} AS ev_id) FROM hot WHERE ev_id = ${q(a.from)}`,
    );
    const part = path.join(dir, 'hot/part-0.parquet');
    await c.run(
      `COPY (SELECT * FROM (SELECT * REPLACE ('changed in place' AS message) FROM hot WHERE ev_id = ${q(change.changed)} UNION ALL ${copies.join(' UNION ALL ')}) ORDER BY ts, ev_id) TO ${q(part)} (FORMAT parquet, COMPRESSION zstd)`,
    );
    const ids = path.join(dir, 'hot/ids.parquet');
    await c.run(
      `COPY (SELECT ev_id FROM hot WHERE ev_id <> ${q(change.dropped)} UNION ALL SELECT unnest([${change.added.map((a) => q(a.id)).join(', ')}]) ORDER BY ev_id) TO ${q(ids)} (FORMAT parquet)`,
    );
    for (const [rel, kind] of [
      ['hot/part-0.parquet', 'hot'],
      ['hot/ids.parquet', 'hot_ids'],
    ] as const) {
      const { sha256, bytes } = await hashFile(path.join(dir, rel));
      const rows = Number(
        (
          await c.runAndReadAll(
            `SELECT sum(num_rows) AS n FROM parquet_file_metadata(${q(path.join(dir, rel))})`,
          )
        ).getRowObjectsJS()[0]?.n,
      );
      listed.push({ path: rel, kind, bytes, sha256, rows });
    }
  } finally {
    c.closeSync();
    duck.closeSync();
  }
  const hotIds = listed.find((f) => f.kind === 'hot_ids')?.rows ?? 0;
  const manifest: Manifest = {
    ...full.manifest,
    id: '01HZBACKUPINCR0000000000000',
    kind: 'incremental',
    base: { id: full.manifest.id, path: full.dir, snapshot_at: full.manifest.snapshot_at },
    counts: { ...full.manifest.counts, events: { hot: hotIds, cold: full.manifest.counts.events.cold } },
    files: listed,
    bytes: listed.reduce((s, f) => s + f.bytes, 0),
    inherited: full.manifest.files
      .filter((f) => f.kind === 'cold')
      .map((f) => ({ path: f.path, sha256: f.sha256, bytes: f.bytes, from: full.manifest.id })),
  };
  writeManifest(dir, manifest);
  return manifest;
}
