/**
 * A backup's copy of the SQLite metadata store, in a worker thread (ADR 0036): opens
 * `meta.sqlite`, attaches the backup's new file and says `{ready}`; told `{pin}`, pins a
 * read snapshot in a transaction (WAL: the server's writes go on) and says `{pinned}`;
 * then copies every table as of that snapshot and ends with `{done: {counts, reads}}`, or
 * `{error}` at any point.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteDatabase } from '../../metadata/sqlite-driver.js';
import type { SnapshotCopied, SnapshotWorkerData } from './metadata-snapshot.js';

const port = parentPort;
if (!port) throw new Error('metadata-snapshot-worker.ts runs as a worker thread');
const { source, target, withoutRows, reads } = workerData as SnapshotWorkerData;

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
const text = (value: string) => `'${value.replaceAll("'", "''")}'`;

async function main(): Promise<SnapshotCopied> {
  const sqlite = await openSqliteDatabase(source);
  const all = (sql: string) => sqlite.database.prepare(sql).all([]) as Record<string, unknown>[];
  try {
    // Rows are copied table by table, not in the order their references need.
    sqlite.exec('PRAGMA foreign_keys = OFF');
    sqlite.exec(`ATTACH DATABASE ${text(target)} AS bk`);
    sqlite.exec('PRAGMA bk.journal_mode = DELETE');
    // Ready: the pin is one statement away (the server's event store waits meanwhile).
    await new Promise<void>((resolve) => {
      port?.once('message', () => resolve());
      port?.postMessage({ ready: true });
    });
    sqlite.exec('BEGIN');
    // The first read of `main` fixes the transaction's snapshot.
    const objects = all(
      "SELECT type, name, sql FROM main.sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
    ).map((r) => ({ type: String(r.type), name: String(r.name), sql: String(r.sql) }));
    port?.postMessage({ pinned: true });
    const tables = objects.filter((o) => o.type === 'table');
    for (const t of tables)
      sqlite.exec(t.sql.replace(/^CREATE\s+TABLE\s+(IF NOT EXISTS\s+)?/i, (m) => `${m}bk.`));
    const counts: Record<string, number> = {};
    for (const t of tables) {
      if (!withoutRows.includes(t.name))
        sqlite.exec(`INSERT INTO bk.${quote(t.name)} SELECT * FROM main.${quote(t.name)}`);
      counts[t.name] = Number(all(`SELECT count(*) AS n FROM bk.${quote(t.name)}`)[0]?.n ?? 0);
    }
    if (all("SELECT 1 FROM main.sqlite_master WHERE name = 'sqlite_sequence'").length)
      sqlite.exec('INSERT INTO bk.sqlite_sequence SELECT * FROM main.sqlite_sequence');
    for (const o of objects.filter((x) => x.type !== 'table'))
      sqlite.exec(
        o.sql.replace(/^CREATE\s+(UNIQUE\s+)?(INDEX|VIEW|TRIGGER)\s+(IF NOT EXISTS\s+)?/i, (m) => `${m}bk.`),
      );
    const answers = Object.fromEntries(Object.entries(reads).map(([name, sql]) => [name, all(sql)]));
    sqlite.exec('COMMIT');
    sqlite.exec('DETACH DATABASE bk');
    return { counts, reads: answers };
  } finally {
    sqlite.database.close();
  }
}

main().then(
  (done) => port.postMessage({ done }),
  (err: unknown) => port.postMessage({ error: err instanceof Error ? err.message : String(err) }),
);
