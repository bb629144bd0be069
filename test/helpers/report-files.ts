import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { TEST_BUS_URL, type TestApp } from './app.js';

/**
 * The report files a test app keeps, by name: `<id>.<ext>` (and `.part`) in
 * `<dataDir>/reports`, or, for a cluster node (LOGSCOPE_TEST_BUS_URL), the id of each
 * report with pieces in the metadata store's `report_chunks`.
 */
export async function storedReportFiles(t: TestApp): Promise<string[]> {
  if (TEST_BUS_URL) {
    const rows = await t.rt.meta.db.selectFrom('report_chunks').select('report_id').distinct().execute();
    return rows.map((r) => String(r.report_id)).sort();
  }
  const dir = path.join(t.dataDir, 'reports');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** Whether anything of report `id`'s file is kept. */
export async function reportFileKept(t: TestApp, id: number): Promise<boolean> {
  const names = await storedReportFiles(t);
  return names.some((n) => n === String(id) || n.startsWith(`${id}.`));
}
