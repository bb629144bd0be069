import type { Writable } from 'node:stream';
import { json } from './json-renderer.js';
import { ChunkWriter, Pacer, rendering, tablesOf } from './output.js';
import type { ExportDocument, Renderer } from './renderer.js';

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/**
 * An exported Search row back in the API's event representation (presentEvent: every
 * column, every extra field by its dotted name, times as Unix seconds). The export table
 * of a Search without a projection keeps the extra fields together under `fields` (one
 * cell for tabular formats); they are spread again here, columns winning as in
 * presentEvent. A projected row already is the projection.
 */
export function exportRowToEvent(row: Record<string, unknown>): Record<string, unknown> {
  const fields = row.fields;
  if (!isRecord(fields) && fields !== null) return row;
  const out: Record<string, unknown> = Object.assign({}, fields);
  // Assignment runs the `__proto__` setter; an ingested field of that name is defined instead.
  const proto = fields ? Object.getOwnPropertyDescriptor(fields, '__proto__') : undefined;
  if (proto) Object.defineProperty(out, '__proto__', proto);
  for (const key of Object.keys(row)) {
    if (key !== 'fields') out[key] = row[key];
  }
  return out;
}

function eventsRenderer(ndjson: boolean): Renderer {
  return {
    ext: ndjson ? 'ndjson' : 'json',
    mediaType: ndjson ? 'application/x-ndjson' : 'application/json',
    render: (doc: ExportDocument, out: Writable) =>
      rendering(out, async () => {
        let rows = 0;
        const w = new ChunkWriter(out);
        const pacer = new Pacer();
        if (!ndjson) await w.push('[');
        for (const table of tablesOf(doc)) {
          for await (const row of table.rows) {
            const text = json(exportRowToEvent(row));
            await w.push(ndjson ? `${text}\n` : `${rows === 0 ? '\n' : ',\n'}${text}`);
            rows += 1;
            await pacer.tick();
          }
        }
        if (!ndjson) await w.push(rows === 0 ? ']\n' : '\n]\n');
        await w.flush();
        out.end();
        return { rows, truncated: false };
      }),
  };
}

/**
 * A Search exported as `json`: the JSON array of its events, each as in the Search
 * results' `events` (presentEvent), streamed one event at a time. It can be sent back
 * as is to `POST /api/ingest`.
 */
export const eventsJsonRenderer: Renderer = eventsRenderer(false);

/** A Search exported as `ndjson`: one event per line (`application/x-ndjson`), as eventsJsonRenderer. */
export const eventsNdjsonRenderer: Renderer = eventsRenderer(true);

/** The renderer of a Search's events for a format, when that format is a list of events. */
export function eventsRendererFor(format: string): Renderer | null {
  if (format === 'json') return eventsJsonRenderer;
  if (format === 'ndjson') return eventsNdjsonRenderer;
  return null;
}
