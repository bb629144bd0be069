import type { Writable } from 'node:stream';
import { timeOf } from './cells.js';
import { ChunkWriter, Pacer, rendering, tablesOf } from './output.js';
import type { ColumnKind, ExportDocument, ExportTable, Renderer } from './renderer.js';
import { formatTimeIso } from './time-format.js';

/** A cell of a json or ndjson row: times as RFC 3339 text in `tz`, bigints as text. */
export function jsonCell(value: unknown, kind: ColumnKind, tz: string): unknown {
  if (value === undefined) return null;
  const seconds = timeOf(value, kind);
  if (seconds !== undefined) return formatTimeIso(seconds, tz);
  return typeof value === 'bigint' ? value.toString() : value;
}

const bigintAsText = (_key: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);
export const json = (v: unknown) => JSON.stringify(v, bigintAsText);

async function writeTable(w: ChunkWriter, table: ExportTable, tz: string, count: () => void): Promise<void> {
  const { title, columns } = table;
  // JSON has no "after the table": what the footnotes say goes with the notes.
  const notes = [...(table.notes ?? []), ...(table.footnotes ?? [])];
  await w.push(
    `{"kind":"table","title":${json(title)},"notes":${json(notes)},"columns":${json(columns)},"rows":[`,
  );
  let first = true;
  const pacer = new Pacer();
  for await (const row of table.rows) {
    const cells: Record<string, unknown> = {};
    for (const c of columns) cells[c.key] = jsonCell(row[c.key], c.kind, tz);
    await w.push(`${first ? '\n' : ',\n'}${json(cells)}`);
    first = false;
    count();
    await pacer.tick();
  }
  await w.push(']}');
}

/**
 * JSON, streamed row by row:
 * `{"title", "timezone", "generated_at", "sections": [{"kind": "table", "title", "notes",
 * "columns": [{key, title, kind}], "rows": [{<key>: value, ...}]}]}`.
 * Every row carries every column (`null` when missing); times are RFC 3339 strings in the
 * document's zone with their offset (`2024-03-01T13:45:12.345+01:00`), which keep the
 * exact instant, so the Unix seconds are not repeated. Images are left out: a JSON reader
 * wants the data behind a chart, which the tables hold. (A Search export is not this
 * document but the list of its events: eventsJsonRenderer.)
 */
export const jsonRenderer: Renderer = {
  ext: 'json',
  mediaType: 'application/json',
  render: (doc: ExportDocument, out: Writable) =>
    rendering(out, async () => {
      let rows = 0;
      const count = () => {
        rows += 1;
      };
      const w = new ChunkWriter(out);
      const tz = doc.timezone;
      await w.push(
        `{"title":${json(doc.title)},"timezone":${json(tz)},` +
          `"generated_at":${json(formatTimeIso(doc.generatedAt.getTime() / 1000, tz))},"sections":[`,
      );
      for (const [i, table] of tablesOf(doc).entries()) {
        if (i > 0) await w.push(',\n');
        await writeTable(w, table, tz, count);
      }
      await w.push(']}\n');
      await w.flush();
      out.end();
      return { rows, truncated: false };
    }),
};
