import { csvRenderer } from './csv-renderer.js';
import { docxRenderer } from './docx-renderer.js';
import type { ExportFormat } from './export-format.js';
import { jsonRenderer } from './json-renderer.js';
import { ndjsonRenderer } from './ndjson-renderer.js';
import { pdfRenderer } from './pdf-renderer.js';
import type { Renderer } from './renderer.js';
import { xlsxRenderer } from './xlsx-renderer.js';

/**
 * The renderer of every export format, with default options. Adding a format is adding
 * an entry here (and its name to EXPORT_FORMATS); the compiler points at the gap.
 */
export const RENDERERS: Readonly<Record<ExportFormat, Renderer>> = {
  csv: csvRenderer,
  xlsx: xlsxRenderer,
  docx: docxRenderer,
  pdf: pdfRenderer,
  json: jsonRenderer,
  ndjson: ndjsonRenderer,
};
