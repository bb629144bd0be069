import type { LogEvent } from '../../api';
import { formatTs } from '../../format';
import { type ColumnWidths, cellText, columnLabel, MIN_WIDTH } from './columns';

/**
 * How wide the results table's columns are: the one taking the spare width (the message,
 * else the last), the ones the reader resized, and the rest sized to their content.
 */

/** The widest a column sized to its content grows (the reader may drag it wider). */
export const MAX_AUTO_WIDTH = 360;
/** The least the spare column keeps: below it the table scrolls sideways. */
export const SPARE_MIN_WIDTH = 240;
/** Until the first rows come: about what the demo's values take. */
const FALLBACK: Record<string, number> = { time: 200, severity: 92, host: 130, app: 120 };
const FALLBACK_FIELD = 140;
/** The cell's padding (8 px a side, 12 before the first column's: the stripe) and 2 px to spare. */
const CELL_PAD = 18;
const FIRST_PAD = 4;
/** A header's padding, sort mark and resize handle beside its label. */
const HEADER_PAD = 16 + 14 + 8;
/** The severity badge's padding and border. */
const BADGE_PAD = 14;
/** Longer values are cut before measuring: they reach the widest width anyway. */
const MEASURED_CHARS = 120;

/** The column that takes the width the others leave: the message, else the last. */
export const spareColumn = (columns: readonly string[]): string | undefined =>
  columns.includes('message') ? 'message' : columns[columns.length - 1];

/** The fonts a table draws its text in (read once from the page's style). */
export interface TableFonts {
  cell: string;
  header: string;
  mono: string;
  badge: string;
}

export function fontsOf(el: Element): TableFonts {
  const style = getComputedStyle(el);
  const family = style.fontFamily;
  const mono = style.getPropertyValue('--mono').trim() || 'monospace';
  return {
    cell: `${style.fontSize} ${family}`,
    header: `600 ${style.fontSize} ${family}`,
    mono: `12.5px ${mono}`,
    badge: `12px ${family}`,
  };
}

let context: CanvasRenderingContext2D | null | undefined;
/** A text's width in a font, measured on a canvas that is never shown (no layout). */
function textWidth(text: string, font: string): number {
  if (context === undefined) context = document.createElement('canvas').getContext('2d');
  if (!context) return text.length * 8;
  context.font = font;
  return context.measureText(text).width;
}

/** The text a cell shows for a column (the time as the table formats it). */
const shownText = (column: string, ev: LogEvent): string =>
  column === 'time' ? formatTs(ev.ts) : cellText(ev[column]);

/**
 * Widths in px for every column but the spare one, from its header and the values of
 * `rows` (the first page: the widths do not jump as the reader scrolls), within
 * MIN_WIDTH..MAX_AUTO_WIDTH.
 */
export function contentWidths(
  columns: readonly string[],
  rows: readonly LogEvent[],
  fonts: TableFonts,
): Record<string, number> {
  const spare = spareColumn(columns);
  const widths: Record<string, number> = {};
  for (const column of columns) {
    if (column === spare) continue;
    const font =
      column === 'time' || column === 'message'
        ? fonts.mono
        : column === 'severity'
          ? fonts.badge
          : fonts.cell;
    const pad = column === columns[0] ? FIRST_PAD : 0;
    const extra = CELL_PAD + pad + (column === 'severity' ? BADGE_PAD : 0);
    let widest = textWidth(columnLabel(column), fonts.header) + HEADER_PAD + pad;
    const seen = new Set<string>();
    for (const ev of rows) {
      const text = shownText(column, ev).slice(0, MEASURED_CHARS);
      if (seen.has(text)) continue;
      seen.add(text);
      widest = Math.max(widest, textWidth(text, font) + extra);
      if (widest >= MAX_AUTO_WIDTH) break;
    }
    widths[column] = Math.ceil(Math.max(MIN_WIDTH, Math.min(MAX_AUTO_WIDTH, widest)));
  }
  return widths;
}

/**
 * Each column's width (undefined for the spare one): the reader's, else the content's,
 * else a default until the first rows come.
 */
export function columnWidths(
  columns: readonly string[],
  own: ColumnWidths,
  content: Readonly<Record<string, number>> | null,
): Record<string, number | undefined> {
  const spare = spareColumn(columns);
  return Object.fromEntries(
    columns.map((c) => [
      c,
      c === spare ? undefined : (own[c] ?? content?.[c] ?? FALLBACK[c] ?? FALLBACK_FIELD),
    ]),
  );
}

/** The least width the table needs: its sized columns and the spare one's minimum. */
export const tableMinWidth = (widths: Readonly<Record<string, number | undefined>>): number =>
  Object.values(widths).reduce<number>((sum, w) => sum + (w ?? SPARE_MIN_WIDTH), 0);
