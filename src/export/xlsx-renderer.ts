import type { Writable } from 'node:stream';
import ExcelJS from 'exceljs';
import { cellText, timeOf, truncateText, xmlSafe } from './cells.js';
import { checkPng, pace, rendering } from './output.js';
import type {
  ColumnKind,
  ExportColumn,
  ExportDocument,
  ExportImage,
  ExportTable,
  Renderer,
} from './renderer.js';
import { formatTime, zonedTime } from './time-format.js';
import { canAnchorPictures, PictureAnchors } from './xlsx-drawing.js';

/** Excel's limits: rows in a sheet, characters in a cell, characters in a sheet name. */
export const XLSX_MAX_SHEET_ROWS = 1_048_576;
const MAX_CELL_TEXT = 32_767;
const MAX_SHEET_NAME = 31;

const TIME_FORMAT = 'yyyy-mm-dd hh:mm:ss.000';
const PACE_EVERY_ROWS = 1_000;
const TITLE_FONT: Partial<ExcelJS.Font> = { bold: true, size: 14 };
const NOTE_FONT: Partial<ExcelJS.Font> = { italic: true, color: { argb: 'FF595959' } };
const HEADER_FONT: Partial<ExcelJS.Font> = { bold: true };
const HEADER_FILL: ExcelJS.Fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFE7E6E6' } };

/** `s` cut to `max` UTF-16 units without splitting a surrogate pair. */
function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  const last = s.charCodeAt(max - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/**
 * A sheet name Excel accepts, unique in `used` (which it joins): at most 31 characters,
 * none of `[]:*?/\`, no quote at either end, not the reserved "History"; Excel compares
 * names case-insensitively.
 */
export function sheetName(title: string, used: Set<string>): string {
  let base = xmlSafe(title)
    .replace(/[[\]:*?/\\]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^'+|'+$/g, '')
    .trim();
  if (base === '' || base.toLowerCase() === 'history') base = base === '' ? 'Sheet' : `${base} 1`;
  base = cut(base, MAX_SHEET_NAME).trimEnd();
  let name = base;
  for (let n = 2; used.has(name.toLowerCase()); n++) {
    const suffix = ` (${n})`;
    name = `${cut(base, MAX_SHEET_NAME - suffix.length).trimEnd()}${suffix}`;
  }
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
  if (typeof value === 'boolean') return value;
  if (typeof value === 'bigint')
    return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  return truncateText(cellText(value, kind, tz), MAX_CELL_TEXT);
}

function columnWidth(c: ExportColumn): number {
  switch (c.kind) {
    case 'time':
      return 24;
    case 'number':
      return Math.max(10, c.title.length + 2);
    case 'string':
      return Math.min(Math.max(12, c.title.length + 2), 50);
    case 'json':
      return 40;
    default:
      return c.kind satisfies never;
  }
}

interface SheetContext {
  wb: ExcelJS.stream.xlsx.WorkbookWriter;
  out: Writable;
  doc: ExportDocument;
  names: Set<string>;
  maxSheetRows: number;
  anchors?: PictureAnchors;
}

/** Rows above a table: its title, its notes, where the times are, then an empty row. */
function preface(ctx: SheetContext, table: ExportTable, continued: boolean): string[] {
  const { doc } = ctx;
  return [
    continued ? `${table.title} (continued)` : table.title,
    ...(table.notes ?? []),
    `Times in ${doc.timezone}. Generated ${formatTime(doc.generatedAt.getTime() / 1000, doc.timezone)}.`,
    '',
  ];
}

function openSheet(
  ctx: SheetContext,
  table: ExportTable,
  part: number,
): { ws: ExcelJS.Worksheet; headerRow: number } {
  const lines = preface(ctx, table, part > 1);
  const headerRow = lines.length + 1;
  const name = sheetName(part > 1 ? `${table.title} (${part})` : table.title, ctx.names);
  const ws = ctx.wb.addWorksheet(name, { views: [{ state: 'frozen', ySplit: headerRow }] });
  ws.columns = table.columns.map((c) => ({ width: columnWidth(c) }));
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
  let part = 1;
  let { ws, headerRow } = openSheet(ctx, table, part);
  let lastRow = headerRow;
  let sincePause = 0;
  for await (const row of table.rows) {
    // `> headerRow`: every sheet takes at least one row, however long the preface.
    if (lastRow >= ctx.maxSheetRows && lastRow > headerRow) {
      // Past Excel's row limit the table goes on in a sheet of its own, header repeated.
      closeSheet(ws, headerRow, lastRow, columns.length);
      part += 1;
      ({ ws, headerRow } = openSheet(ctx, table, part));
      lastRow = headerRow;
    }
    const r = ws.addRow(columns.map((c) => xlsxCell(row[c.key], c.kind, ctx.doc.timezone)));
    for (const i of timeColumns) r.getCell(i).numFmt = TIME_FORMAT;
    r.commit();
    lastRow += 1;
    count();
    sincePause += 1;
    if (sincePause === PACE_EVERY_ROWS) {
      sincePause = 0;
      await pace(ctx.out);
    }
  }
  closeSheet(ws, headerRow, lastRow, columns.length);
}

function writeImage(ctx: SheetContext, image: ExportImage): void {
  checkPng(image.png, image.title);
  const ws = ctx.wb.addWorksheet(sheetName(image.title, ctx.names));
  const title = ws.addRow([truncateText(xmlSafe(image.title), MAX_CELL_TEXT)]);
  title.font = TITLE_FONT;
  title.commit();
  if (canAnchorPictures(ctx.wb, ws)) {
    ctx.anchors ??= new PictureAnchors(ctx.wb);
    ctx.anchors.anchor(ws, image.png, 2, image.width, image.height, image.title);
  } else {
    // A background picture is tiled and not printed, but keeps the chart in the file.
    ws.addBackgroundImage(ctx.wb.addImage({ base64: image.png.toString('base64'), extension: 'png' }));
  }
  ws.commit();
}

/** Options of the xlsx renderer; the default is what Excel allows. */
export interface XlsxOptions {
  /** rows per sheet (preface and header included) before a table continues on a new sheet */
  maxSheetRows?: number;
}

/**
 * Office Open XML workbook, streamed with exceljs's WorkbookWriter (no shared strings, so
 * memory stays flat). One sheet per table: title, notes and the zone above a bold,
 * frozen, filterable header. Times are real dates (wall-clock time in the document's
 * zone, shown `yyyy-mm-dd hh:mm:ss.000`; the zone is named above the header since cells
 * carry no offset). A table longer than a sheet goes on in "<title> (2)" and so on.
 * Each image gets a sheet of its own, the picture at its size under the title.
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
          const ws = wb.addWorksheet(sheetName(doc.title, ctx.names));
          ws.addRow([truncateText(xmlSafe(doc.title), MAX_CELL_TEXT)]).commit();
          ws.commit();
        }
        await wb.commit();
        return { rows, truncated: false };
      }),
  };
}

export const xlsxRenderer: Renderer = createXlsxRenderer();
