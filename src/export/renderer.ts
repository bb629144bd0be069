import type { Writable } from 'node:stream';

/**
 * How a column's values are read and shown:
 * - `time`: Unix seconds (number, millisecond precision), shown in the document's timezone;
 * - `number`, `string`: shown as they are;
 * - `percent`: a share as a fraction (0.423), shown with one decimal ("42.3 %"); a number
 *   in xlsx and json;
 * - `json`: any value (usually an object), shown as compact JSON text in tabular formats.
 * Missing cells (`undefined`, `null`) are empty in every format (`null` in json).
 */
export type ColumnKind = 'time' | 'number' | 'string' | 'percent' | 'json';

/** One column of an exported table; `key` picks the cell from each row (dotted names are plain keys). */
export interface ExportColumn {
  key: string;
  title: string;
  kind: ColumnKind;
}

/**
 * A table to export. `rows` is consumed once, lazily and in order, so a million rows
 * stream through a renderer without being held in memory; a renderer that stops early
 * (a row cap, a failed write) ends the iteration, which lets the source release its cursor.
 */
export interface ExportTable {
  title: string;
  columns: ExportColumn[];
  rows: AsyncIterable<Record<string, unknown>>;
  /** notes printed under the title, e.g. the query and time range */
  notes?: string[];
  /**
   * A chart of the table's data, drawn between the notes and the table by the formats
   * with room for pictures (pdf, docx, xlsx); the title above stands for both.
   */
  chart?: ExportChart;
  /** notes printed after the table, e.g. what a cap left out (xlsx puts them with the notes) */
  footnotes?: string[];
  /** a short name of the time range, e.g. "24h", for where room is scarce (xlsx sheet names) */
  period?: string;
}

/** A picture of a table's data. `width` and `height` are its display size in CSS pixels (96 per inch). */
export interface ExportChart {
  png: Buffer;
  /** The vector form (PDF draws it, DOCX embeds it with `png` as its fallback); absent: `png` only. */
  svg?: string;
  width: number;
  height: number;
  /** what the picture shows, for readers that cannot see it */
  description?: string;
}

/** A picture, e.g. a dashboard chart. `width` and `height` are its display size in CSS pixels (96 per inch). */
export interface ExportImage {
  title: string;
  png: Buffer;
  /** As ExportChart's. */
  svg?: string;
  width: number;
  height: number;
}

export type ExportSection = { kind: 'table'; table: ExportTable } | ({ kind: 'image' } & ExportImage);

/** What an export or a report holds, independent of the file format it is rendered in. */
export interface ExportDocument {
  title: string;
  /** IANA zone every `time` cell is shown in; check it with `isValidTimeZone` first. */
  timezone: string;
  generatedAt: Date;
  sections: ExportSection[];
  /**
   * Most pages a paged format (pdf, docx) may take; the content past it is left out and a
   * note on the last page says what. Unset: no cap (exports), a report sets one.
   */
  maxPages?: number;
}

export interface RenderResult {
  /** data rows written, over all tables */
  rows: number;
  /** whether a row cap of the format cut a table short (the file says so visibly too) */
  truncated: boolean;
}

/**
 * Writes a document as one file format to `out`. `render` ends `out` and resolves once
 * it has finished; on failure (a row source that throws, a closed client) it destroys
 * `out`, so a partial file is never mistaken for a whole one, and rejects with the cause.
 * Formats without room for pictures (csv, json) leave image sections out.
 */
export interface Renderer {
  /** file name extension, without the dot */
  readonly ext: string;
  /** the Content-Type of the file */
  readonly mediaType: string;
  render(doc: ExportDocument, out: Writable): Promise<RenderResult>;
}
