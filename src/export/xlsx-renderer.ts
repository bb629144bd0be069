import type { Writable } from 'node:stream';
import ExcelJS from 'exceljs';
import { cellText, timeOf, truncateText, xmlSafe } from './cells.js';
import { checkPng, pace, rendering } from './output.js';
import type {
  ColumnKind,
  ExportChart,
  ExportColumn,
  ExportDocument,
  ExportImage,
  ExportTable,
  Renderer,
} from './renderer.js';
import { REPORT_COLORS, REPORT_FONTS, REPORT_TYPE, xlsxColor } from './report-style.js';
import { formatTime, zonedTime } from './time-format.js';
import { canAnchorPictures, PictureAnchors } from './xlsx-drawing.js';

/** Excel's limits: rows in a sheet, characters in a cell, characters in a sheet name. */
export const XLSX_MAX_SHEET_ROWS = 1_048_576;
const MAX_CELL_TEXT = 32_767;
const MAX_SHEET_NAME = 31;

const TIME_FORMAT = 'yyyy-mm-dd hh:mm:ss.000';
// A share with one decimal and a space before the sign, as the other formats show it.
const PERCENT_FORMAT = '0.0 %';
// Digits are wider than the average character a column width counts in.
const TIME_WIDTH = 25;
// Column widths (in characters) follow the header and the first rows' longest lines.
const SAMPLE_ROWS = 200;
const MIN_COLUMN_CHARS = 6;
const MAX_COLUMN_CHARS = 80;

/**
 * Printing: A4 landscape, every column on one page width (as many pages down as it
 * takes), the header row on top of every page and the page number in the footer.
 */
const PAGE_SETUP: Partial<ExcelJS.PageSetup> = {
  paperSize: 9,
  orientation: 'landscape',
  fitToPage: true,
  fitToWidth: 1,
  fitToHeight: 0,
  margins: { left: 0.4, right: 0.4, top: 0.5, bottom: 0.6, header: 0.3, footer: 0.3 },
};
const HEADER_FOOTER: Partial<ExcelJS.HeaderFooter> = { oddFooter: '&L&A&RPage &P of &N' };
const PACE_EVERY_ROWS = 1_000;
// Named, as the cells' own font is: without a name a reader falls back to its own default (a serif).
const FONT = REPORT_FONTS.xlsx;
const TITLE_FONT: Partial<ExcelJS.Font> = { name: FONT, bold: true, size: REPORT_TYPE.xlsx.title };
const NOTE_FONT: Partial<ExcelJS.Font> = {
  name: FONT,
  size: REPORT_TYPE.xlsx.note,
  italic: true,
  color: { argb: xlsxColor(REPORT_COLORS.note) },
};
const HEADER_FONT: Partial<ExcelJS.Font> = { name: FONT, size: REPORT_TYPE.xlsx.header, bold: true };
// Times read from the left like the text around them (dates are right-aligned by default).
const TIME_ALIGNMENT: Partial<ExcelJS.Alignment> = { horizontal: 'left' };
const HEADER_FILL: ExcelJS.Fill = {
  type: 'pattern',
  pattern: 'solid',
  fgColor: { argb: xlsxColor(REPORT_COLORS.headerFill) },
};

/** `s` cut to `max` UTF-16 units without splitting a surrogate pair. */
function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  const last = s.charCodeAt(max - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

const cleanName = (s: string) =>
  xmlSafe(s)
    .replace(/[[\]:*?/\\]/g, ' ')
    // A quote inside is legal but breaks the sheet references of defined names (print titles).
    .replace(/'/g, '\u2019')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^\u2019+|\u2019+$/g, '')
    .trim();

/**
 * A sheet name Excel accepts, unique in `used` (which it joins): at most 31 characters,
 * none of `[]:*?/\`, no quote, not the reserved "History"; Excel compares names
 * case-insensitively. A `period` (e.g. "24h") is kept whole after the title, which is
 * cut to make room.
 */
export function sheetName(title: string, used: Set<string>, period?: string): string {
  let base = cleanName(title);
  if (base === '' || base.toLowerCase() === 'history') base = base === '' ? 'Sheet' : `${base} 1`;
  const when = period ? cleanName(period) : '';
  const tail = when ? ` (${cut(when, MAX_SHEET_NAME - 8)})` : '';
  const make = (suffix: string) =>
    `${cut(base, MAX_SHEET_NAME - tail.length - suffix.length).trimEnd()}${tail}${suffix}`;
  let name = make('');
  for (let n = 2; used.has(name.toLowerCase()); n++) name = make(` (${n})`);
  used.add(name.toLowerCase());
  return name;
}

// Spreadsheet dates carry no zone: a time becomes the wall-clock time in the document's
// zone, so it reads as the other formats do and still sorts, filters and subtracts as a date.
function xlsxCell(value: unknown, kind: ColumnKind, tz: string): ExcelJS.CellValue {
  if (value === null || value === undefined) return null;
  const seconds = timeOf(value, kind);
  if (seconds !== undefined) return new Date(zonedTime(seconds, tz).wallMs);
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (
    kind === 'percent' &&
    typeof value === 'string' &&
    value.trim() !== '' &&
    Number.isFinite(Number(value))
  )
    return Number(value);
  if (typeof value === 'boolean') return value;
  if (typeof value === 'bigint')
    return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  return truncateText(cellText(value, kind, tz), MAX_CELL_TEXT);
}

const longestLine = (s: string) =>
  s.split(/\r\n|\r|\n/).reduce((max, line) => Math.max(max, Math.min(line.length, MAX_COLUMN_CHARS)), 0);

/** What a column needs, in characters, for its title and the cells of `sample`. */
function naturalWidth(c: ExportColumn, sample: readonly Record<string, unknown>[], tz: string): number {
  // The header is bold and carries the filter button.
  let chars = longestLine(c.title) + 3;
  for (const row of sample) {
    const v = row[c.key];
    if (v === null || v === undefined) continue;
    const n =
      c.kind === 'time' && timeOf(v, c.kind) !== undefined
        ? TIME_WIDTH
        : c.kind === 'percent'
          ? 8
          : longestLine(cellText(v, c.kind, tz));
    if (n + 1 > chars) chars = n + 1;
  }
  return Math.min(Math.max(chars, MIN_COLUMN_CHARS), MAX_COLUMN_CHARS);
}

/**
 * Column widths in characters, each from its own content (the header and the first
 * rows' longest lines) between MIN_COLUMN_CHARS and MAX_COLUMN_CHARS. A sheet scrolls
 * sideways, and its print setup fits every column on one page width, so no column is
 * squeezed for the others' sake (a Search's message column once came out 13 wide).
 */
export function xlsxColumnWidths(
  columns: readonly ExportColumn[],
  sample: readonly Record<string, unknown>[],
  tz: string,
): number[] {
  return columns.map((c) => naturalWidth(c, sample, tz));
}

interface SheetContext {
  wb: ExcelJS.stream.xlsx.WorkbookWriter;
  out: Writable;
  doc: ExportDocument;
  names: Set<string>;
  maxSheetRows: number;
  anchors?: PictureAnchors;
}

/**
 * Rows above a table: its title, its notes and footnotes (a sheet has no room after a
 * table that may grow to a million rows), where the times are, then an empty row.
 */
function preface(ctx: SheetContext, table: ExportTable, continued: boolean): string[] {
  const { doc } = ctx;
  return [
    continued ? `${table.title} (continued)` : table.title,
    ...(table.notes ?? []),
    ...(table.footnotes ?? []),
    `Times in ${doc.timezone}. Generated ${formatTime(doc.generatedAt.getTime() / 1000, doc.timezone)}.`,
    '',
  ];
}

function addSheet(ctx: SheetContext, name: string, headerRow: number): ExcelJS.Worksheet {
  return ctx.wb.addWorksheet(name, {
    views: headerRow > 0 ? [{ state: 'frozen', ySplit: headerRow }] : [],
    pageSetup: headerRow > 0 ? { ...PAGE_SETUP, printTitlesRow: `${headerRow}:${headerRow}` } : PAGE_SETUP,
    headerFooter: HEADER_FOOTER,
  });
}

function openSheet(
  ctx: SheetContext,
  table: ExportTable,
  part: number,
  widths: number[],
): { ws: ExcelJS.Worksheet; headerRow: number } {
  const lines = preface(ctx, table, part > 1);
  const headerRow = lines.length + 1;
  const name = sheetName(part > 1 ? `${table.title} (${part})` : table.title, ctx.names, table.period);
  const ws = addSheet(ctx, name, headerRow);
  ws.columns = table.columns.map((_, i) => ({ width: widths[i] ?? MIN_COLUMN_CHARS }));
  for (const [i, line] of lines.entries()) {
    const row = ws.addRow([truncateText(line, MAX_CELL_TEXT)]);
    row.font = i === 0 ? TITLE_FONT : NOTE_FONT;
    row.commit();
  }
  const header = ws.addRow(table.columns.map((c) => truncateText(c.title, MAX_CELL_TEXT)));
  header.eachCell((cell) => {
    cell.font = HEADER_FONT;
    cell.fill = HEADER_FILL;
  });
  header.commit();
  return { ws, headerRow };
}

function closeSheet(ws: ExcelJS.Worksheet, headerRow: number, lastRow: number, columns: number): void {
  // The streaming writer writes the filter at commit, so it can span the rows now known.
  ws.autoFilter = { from: { row: headerRow, column: 1 }, to: { row: lastRow, column: Math.max(columns, 1) } };
  ws.commit();
}

async function writeTable(ctx: SheetContext, table: ExportTable, count: () => void): Promise<void> {
  const { columns } = table;
  const timeColumns = columns.flatMap((c, i) => (c.kind === 'time' ? [i + 1] : []));
  const percentColumns = columns.flatMap((c, i) => (c.kind === 'percent' ? [i + 1] : []));
  const rows = table.rows[Symbol.asyncIterator]();
  try {
    // The columns are written before the first row: their widths come from the rows ahead.
    const sample: Record<string, unknown>[] = [];
    while (sample.length < SAMPLE_ROWS) {
      const next = await rows.next();
      if (next.done) break;
      sample.push(next.value);
    }
    const widths = xlsxColumnWidths(columns, sample, ctx.doc.timezone);
    let part = 1;
    let { ws, headerRow } = openSheet(ctx, table, part, widths);
    let lastRow = headerRow;
    let sincePause = 0;
    const write = async (row: Record<string, unknown>) => {
      // `> headerRow`: every sheet takes at least one row, however long the preface.
      if (lastRow >= ctx.maxSheetRows && lastRow > headerRow) {
        // Past Excel's row limit the table goes on in a sheet of its own, header repeated.
        closeSheet(ws, headerRow, lastRow, columns.length);
        part += 1;
        ({ ws, headerRow } = openSheet(ctx, table, part, widths));
        lastRow = headerRow;
      }
      const r = ws.addRow(columns.map((c) => xlsxCell(row[c.key], c.kind, ctx.doc.timezone)));
      for (const i of timeColumns) {
        const cell = r.getCell(i);
        cell.numFmt = TIME_FORMAT;
        cell.alignment = TIME_ALIGNMENT;
      }
      for (const i of percentColumns) r.getCell(i).numFmt = PERCENT_FORMAT;
      r.commit();
      lastRow += 1;
      count();
      sincePause += 1;
      if (sincePause === PACE_EVERY_ROWS) {
        sincePause = 0;
        await pace(ctx.out);
      }
    };
    for (const row of sample) await write(row);
    for (;;) {
      const next = await rows.next();
      if (next.done) break;
      await write(next.value);
    }
    // The chart under the table, after an empty row; printing takes it along.
    if (table.chart) anchorPicture(ctx, ws, table.chart, lastRow + 1, table.title);
    closeSheet(ws, headerRow, lastRow, columns.length);
  } finally {
    await rows.return?.(undefined);
  }
}

/** Puts a picture on `ws` with its top-left corner at 0-based `row`, or as a background where that cannot be done. */
function anchorPicture(
  ctx: SheetContext,
  ws: ExcelJS.Worksheet,
  image: ExportChart,
  row: number,
  title: string,
) {
  checkPng(image.png, title);
  if (canAnchorPictures(ctx.wb, ws)) {
    ctx.anchors ??= new PictureAnchors(ctx.wb);
    ctx.anchors.anchor(ws, image.png, row, image.width, image.height, image.description ?? title);
  } else {
    // A background picture is tiled and not printed, but keeps the chart in the file.
    ws.addBackgroundImage(ctx.wb.addImage({ base64: image.png.toString('base64'), extension: 'png' }));
  }
}

function writeImage(ctx: SheetContext, image: ExportImage): void {
  checkPng(image.png, image.title);
  const ws = addSheet(ctx, sheetName(image.title, ctx.names), 0);
  const title = ws.addRow([truncateText(xmlSafe(image.title), MAX_CELL_TEXT)]);
  title.font = TITLE_FONT;
  title.commit();
  anchorPicture(ctx, ws, image, 2, image.title);
  ws.commit();
}

/** Options of the xlsx renderer; the default is what Excel allows. */
export interface XlsxOptions {
  /** rows per sheet (preface and header included) before a table continues on a new sheet */
  maxSheetRows?: number;
}

/**
 * Office Open XML workbook, streamed with exceljs's WorkbookWriter (no shared strings, so
 * memory stays flat). One sheet per table, named after its title and period: title,
 * notes and the zone above a bold, frozen, filterable header, columns as wide as the
 * header and the first rows need, the table's chart under its rows. Sheets print on A4
 * landscape, fitted to one page width, the header row repeated on every page, the page
 * number in the footer. Times are real dates (wall-clock time in the document's zone,
 * shown `yyyy-mm-dd hh:mm:ss.000`; the zone is named above the header since cells carry
 * no offset); shares are numbers shown `0.0 %`. A table longer than a sheet goes on in
 * "<title> (2)" and so on. Each image gets a sheet of its own, the picture at its size
 * under the title.
 */
export function createXlsxRenderer(options: XlsxOptions = {}): Renderer {
  const maxSheetRows = options.maxSheetRows ?? XLSX_MAX_SHEET_ROWS;
  return {
    ext: 'xlsx',
    mediaType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    render: (doc: ExportDocument, out: Writable) =>
      rendering(out, async () => {
        let rows = 0;
        const count = () => {
          rows += 1;
        };
        const wb = new ExcelJS.stream.xlsx.WorkbookWriter({
          stream: out,
          useStyles: true,
          useSharedStrings: false,
        });
        wb.creator = 'Logscope';
        wb.title = doc.title;
        wb.created = doc.generatedAt;
        const ctx: SheetContext = { wb, out, doc, names: new Set(), maxSheetRows };
        // Sheets are written one after the other and each is committed before the next
        // opens: the archive takes entries in order, so an open sheet holds back the rest.
        for (const section of doc.sections) {
          switch (section.kind) {
            case 'table':
              await writeTable(ctx, section.table, count);
              break;
            case 'image':
              writeImage(ctx, section);
              break;
            default:
              section satisfies never;
          }
        }
        if (ctx.names.size === 0) {
          // Excel refuses a workbook without sheets.
          const ws = addSheet(ctx, sheetName(doc.title, ctx.names), 0);
          ws.addRow([truncateText(xmlSafe(doc.title), MAX_CELL_TEXT)]).commit();
          ws.commit();
        }
        await wb.commit();
        return { rows, truncated: false };
      }),
  };
}

export const xlsxRenderer: Renderer = createXlsxRenderer();
