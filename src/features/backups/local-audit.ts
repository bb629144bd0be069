import { openSqliteDatabase } from '../../metadata/sqlite-driver.js';

/**
 * An audit record written straight into a metadata store no server has open (a restore,
 * an upgrade at start): actor `local`, as the audit trail shows work done on the machine.
 */
export async function recordLocally(
  file: string,
  entry: { action: string; target: { kind: string; id: string } | null; detail: object },
  /** A restored store: left as one file (the server opens it in WAL mode itself). */
  oneFile = false,
): Promise<void> {
  const opened = await openSqliteDatabase(file);
  try {
    opened.database
      .prepare(
        `INSERT INTO audit_events (at, user_id, username, token_key_id, address, action, target_kind, target_id, detail, outcome)
         VALUES (?, NULL, NULL, NULL, 'local', ?, ?, ?, ?, 'ok')`,
      )
      .run([
        new Date().toISOString(),
        entry.action,
        entry.target?.kind ?? null,
        entry.target?.id ?? null,
        JSON.stringify(entry.detail),
      ]);
    if (oneFile) opened.exec('PRAGMA journal_mode = DELETE');
  } finally {
    opened.database.close();
  }
}
