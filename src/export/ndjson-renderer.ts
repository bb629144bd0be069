import type { Writable } from 'node:stream';
import { json, jsonCell } from './json-renderer.js';
import { ChunkWriter, Pacer, rendering, tablesOf } from './output.js';
import type { ExportDocument, Renderer } from './renderer.js';

/**
 * NDJSON, streamed: one line per row, `{<key>: value, ...}` with the cells of the json
 * format (every column, `null` when missing, times as RFC 3339 text in the document's
 * zone). A document of several tables adds the table's title to each line as `_table`.
 * Titles, notes and images are left out. (A Search export holds its events instead:
 * eventsNdjsonRenderer.)
 */
export const ndjsonRenderer: Renderer = {
  ext: 'ndjson',
  mediaType: 'application/x-ndjson',
  render: (doc: ExportDocument, out: Writable) =>
    rendering(out, async () => {
      let rows = 0;
      const w = new ChunkWriter(out);
      const tables = tablesOf(doc);
      const pacer = new Pacer();
      for (const table of tables) {
        for await (const row of table.rows) {
          const cells: Record<string, unknown> = tables.length > 1 ? { _table: table.title } : {};
          for (const c of table.columns) cells[c.key] = jsonCell(row[c.key], c.kind, doc.timezone);
          await w.push(`${json(cells)}\n`);
          rows += 1;
          await pacer.tick();
        }
      }
      await w.flush();
      out.end();
      return { rows, truncated: false };
    }),
};
