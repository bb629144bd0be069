import { csvRenderer } from './csv-renderer.js';
import type { ExportFormat } from './export-format.js';
import { jsonRenderer } from './json-renderer.js';
import { ndjsonRenderer } from './ndjson-renderer.js';
import type { Renderer } from './renderer.js';

/**
 * A renderer whose module (and the library it draws with: exceljs, docx, pdfkit) is
 * loaded on its first document, not at start-up: they take about a second to load, and
 * most runs of the server, and every CLI command, never write such a file.
 */
function lazy(ext: string, mediaType: string, load: () => Promise<Renderer>): Renderer {
  let loaded: Promise<Renderer> | undefined;
  return {
    ext,
    mediaType,
    async render(doc, out) {
      loaded ??= load();
      return (await loaded).render(doc, out);
    },
  };
}

/**
 * The renderer of every export format, with default options. Adding a format is adding
 * an entry here (and its name to EXPORT_FORMATS); the compiler points at the gap.
 */
export const RENDERERS: Readonly<Record<ExportFormat, Renderer>> = {
  csv: csvRenderer,
  xlsx: lazy(
    'xlsx',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    async () => (await import('./xlsx-renderer.js')).xlsxRenderer,
  ),
  docx: lazy(
    'docx',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    async () => (await import('./docx-renderer.js')).docxRenderer,
  ),
  pdf: lazy('pdf', 'application/pdf', async () => (await import('./pdf-renderer.js')).pdfRenderer),
  json: jsonRenderer,
  ndjson: ndjsonRenderer,
};
