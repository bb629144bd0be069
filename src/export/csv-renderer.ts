import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import { rowTexts } from './cells.js';
import { drained, Pacer, rendering, tablesOf } from './output.js';
import type { ExportDocument, Renderer } from './renderer.js';

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Cell text a spreadsheet would not run as a formula. Log lines are written by whoever
 * sends them, and a message such as `=HYPERLINK(...)` would otherwise be live in Excel
 * (CSV injection, OWASP); a leading `'` is what Excel itself uses to mark text. Plain
 * signed numbers are left alone.
 */
export function inertCell(text: string): string {
  const first = text.charCodeAt(0);
  // = + - @ TAB CR
  const risky = first === 61 || first === 43 || first === 45 || first === 64 || first === 9 || first === 13;
  return risky && text.length > 1 && !NUMBER.test(text) ? `'${text}` : text;
}

/** Writes `record` to `csv`, waiting while the client is slow. */
async function put(csv: Writable, record: string[]): Promise<void> {
  if (!csv.write(record)) await drained(csv);
}

async function writeRecords(doc: ExportDocument, csv: Writable): Promise<number> {
  const tables = tablesOf(doc);
  const several = tables.length > 1;
  const pacer = new Pacer();
  let rows = 0;
  for (const [i, table] of tables.entries()) {
    // One table is plain RFC 4180 (header, rows) so any CSV reader takes it; several are
    // told apart by a title line, each after an empty line.
    if (several) {
      if (i > 0) await put(csv, []);
      await put(csv, [inertCell(table.title)]);
    }
    await put(
      csv,
      table.columns.map((c) => inertCell(c.title)),
    );
    // The loop reads the rows itself, so that a failure on either side leaves it by a
    // throw, which closes the source before the render rejects.
    for await (const row of table.rows) {
      rows += 1;
      await put(csv, rowTexts(row, table.columns, doc.timezone).map(inertCell));
      await pacer.tick();
    }
  }
  return rows;
}

/**
 * CSV, RFC 4180: comma-separated, CRLF line ends, fields quoted when they hold a comma,
 * quote or line break. UTF-8 with a byte-order mark, since Excel reads a CSV without one
 * in the local ANSI code page and garbles every accent; most CSV readers skip the mark
 * (PostgreSQL COPY does not). Times are text in the document's zone (`formatTime`);
 * titles and notes are left out, and so are images.
 */
export const csvRenderer: Renderer = {
  ext: 'csv',
  mediaType: 'text/csv; charset=utf-8',
  render: (doc: ExportDocument, out: Writable) =>
    rendering(out, async () => {
      const csv = stringify({ bom: true, record_delimiter: 'windows', quoted_match: /[\r\n]/ });
      const piping = pipeline(csv, out);
      // Handled from the start: it may fail while the loop is still reading the source.
      piping.catch(() => undefined);
      let rows: number;
      try {
        rows = await writeRecords(doc, csv);
      } catch (err) {
        csv.destroy();
        await piping.catch(() => undefined);
        throw err;
      }
      csv.end();
      await piping;
      return { rows, truncated: false };
    }),
};
