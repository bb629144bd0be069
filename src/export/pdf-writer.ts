/**
 * Drawing a report on A4 landscape pages with pdfkit: headings and notes, ruled tables
 * whose header repeats on every page, charts and pictures, footers, and the note a page
 * cap leaves. The renderer (pdf-renderer.ts) walks the document's sections through it.
 */
import type { Writable } from 'node:stream';
import PDFDocument from 'pdfkit';
import { countText, rowTexts, truncateText, truncationNote } from './cells.js';
import { fitColumns } from './column-widths.js';
import { capped, checkPng, pace } from './output.js';
import { CellText, unicodeText, winAnsiText } from './pdf-text.js';
import type {
  ExportChart,
  ExportColumn,
  ExportDocument,
  ExportImage,
  ExportSection,
  ExportTable,
} from './renderer.js';
import { REPORT_COLORS, REPORT_TYPE } from './report-style.js';
import { drawSvg } from './svg-to-pdf.js';
import { formatTime } from './time-format.js';

const MARGIN = 36; // pt: half an inch
const {
  title: TITLE_SIZE,
  heading: HEADING_SIZE,
  note: NOTE_SIZE,
  cell: CELL_SIZE,
  footer: FOOTER_SIZE,
} = REPORT_TYPE.pdf;
const PAD_X = 3;
const PAD_Y = 2;
// Each cell shows at most this many lines, the last ending in an ellipsis when cut.
const MAX_CELL_LINES = 8;
const MAX_CELL_CHARS = 2_000;
// Widths are measured on the first rows only: the rest stream past once drawn.
const SAMPLE_ROWS = 200;
const MAX_MEASURED_CHARS = 300;
const MIN_COLUMN_WIDTH = 28;
const PT_PER_PX = 0.75;
const { note: NOTE_COLOR, rule: RULE_COLOR, headerFill: HEADER_FILL } = REPORT_COLORS;
// The footer's baseline sits this far above the page's lower edge, inside the margin.
const FOOTER_RISE = 22;
// Room kept at the foot of the last page a capped document may have, for the note saying what was cut.
const CUT_RESERVE = 60;
const MAX_CUT_NOTE_CHARS = 600;
// A chart takes at most this share of a page's height, so its table starts beside or under it.
const MAX_CHART_SHARE = 0.55;
const GAP = 14;

/** TrueType (or OpenType) fonts for text beyond Windows-1252, e.g. DejaVu Sans: a path or the file's bytes. */
export interface PdfFonts {
  regular: string | Buffer;
  bold: string | Buffer;
}

/** Thrown when a document needs a page beyond its cap: what is left is not drawn. */
export class PageLimit extends Error {}

type Align = 'left' | 'right';

/** Where a table is drawn: its left edge, its column widths, how each column is aligned. */
interface TableFrame {
  left: number;
  widths: number[];
  aligns: Align[];
}

/** The section being drawn, for the note that says what a page cap left out. */
interface Progress {
  title: string;
  /** its title is on the page */
  started: boolean;
  rows: number;
  /** every row is on the page (what may follow are notes) */
  done: boolean;
}

export class PdfWriter {
  readonly pdf: PDFKit.PDFDocument;
  private readonly regular: string;
  private readonly bold: string;
  private readonly text: (s: string) => string;
  private lineHeight = 0;
  private font = '';
  private readonly cellText: CellText;
  /** pages so far */
  pages = 1;
  progress: Progress | null = null;

  constructor(
    readonly doc: ExportDocument,
    private readonly out: Writable,
    private readonly maxRows: number,
    readonly maxPages: number,
    fonts: PdfFonts | undefined,
  ) {
    this.pdf = new PDFDocument({
      size: 'A4',
      layout: 'landscape',
      margin: MARGIN,
      // Held until the end so that every page can say how many there are; only a
      // capped document, whose pages are few, is held.
      bufferPages: this.capped,
      info: { Title: doc.title, Creator: 'Logscope', CreationDate: doc.generatedAt },
    });
    this.cellText = new CellText(this.pdf);
    if (fonts) {
      this.pdf.registerFont('regular', fonts.regular);
      this.pdf.registerFont('bold', fonts.bold);
      this.regular = 'regular';
      this.bold = 'bold';
      this.text = unicodeText;
    } else {
      this.regular = 'Helvetica';
      this.bold = 'Helvetica-Bold';
      this.text = winAnsiText;
    }
    if (!this.capped) this.footer(1);
  }

  get capped(): boolean {
    return Number.isFinite(this.maxPages);
  }

  private get left(): number {
    return this.pdf.page.margins.left;
  }

  private get width(): number {
    return this.pdf.page.width - this.pdf.page.margins.left - this.pdf.page.margins.right;
  }

  private get top(): number {
    return this.pdf.page.margins.top;
  }

  /** The lowest point content may reach; the last page a cap allows keeps room for the cut note. */
  private get bottom(): number {
    const reserve = this.pages >= this.maxPages ? CUT_RESERVE : 0;
    return this.pdf.page.height - this.pdf.page.margins.bottom - reserve;
  }

  private async newPage(): Promise<void> {
    if (this.pages >= this.maxPages) throw new PageLimit();
    this.pdf.addPage();
    this.pages += 1;
    if (!this.capped) this.footer(this.pages);
    // pdfkit writes a page out when the next one starts, without regard to `out`.
    await pace(this.out);
  }

  /** Starts a new page unless `height` more points fit on this one. */
  private async room(height: number): Promise<void> {
    if (this.pdf.y + height > this.bottom) await this.newPage();
  }

  /** The document's title and the page number, inside the bottom margin of the current page. */
  footer(page: number, total?: number): void {
    const { pdf } = this;
    const { x, y } = pdf;
    const margins = pdf.page.margins;
    // Text below the bottom margin would make pdfkit start a page.
    const bottom = margins.bottom;
    margins.bottom = 0;
    const at = pdf.page.height - FOOTER_RISE;
    pdf.font(this.regular).fontSize(FOOTER_SIZE).fillColor(NOTE_COLOR);
    const label = total === undefined ? `Page ${page}` : `Page ${page} of ${total}`;
    const labelWidth = pdf.widthOfString(label);
    pdf.text(label, this.left + this.width - labelWidth, at, { lineBreak: false });
    const title = this.text(truncateText(this.doc.title, 120));
    pdf.text(title, this.left, at, {
      width: this.width - labelWidth - GAP,
      lineBreak: false,
      ellipsis: true,
    });
    margins.bottom = bottom;
    pdf.x = x;
    pdf.y = y;
  }

  /** Numbers every held page "Page N of M" (capped documents only). */
  numberPages(): void {
    const range = this.pdf.bufferedPageRange();
    for (let i = range.start; i < range.start + range.count; i++) {
      this.pdf.switchToPage(i);
      this.footer(i + 1, range.count);
    }
  }

  private paragraph(s: string, font: string, size: number, color = 'black'): void {
    this.pdf
      .font(font)
      .fontSize(size)
      .fillColor(color)
      .text(this.text(s), this.left, this.pdf.y, { width: this.width });
  }

  private paragraphHeight(s: string, font: string, size: number): number {
    return this.pdf.font(font).fontSize(size).heightOfString(this.text(s), { width: this.width });
  }

  /** A paragraph, on a new page unless it fits on this one. */
  private async block(s: string, font: string, size: number, color = 'black'): Promise<void> {
    await this.room(this.paragraphHeight(s, font, size));
    this.paragraph(s, font, size, color);
  }

  heading(): void {
    const { doc } = this;
    this.paragraph(doc.title, this.bold, TITLE_SIZE);
    this.paragraph(
      `Generated ${formatTime(doc.generatedAt.getTime() / 1000, doc.timezone)}. Times in ${doc.timezone}.`,
      this.regular,
      NOTE_SIZE,
      NOTE_COLOR,
    );
    this.pdf.moveDown();
  }

  private cellFont(header: boolean): void {
    this.font = header ? this.bold : this.regular;
    this.pdf.font(this.font).fontSize(CELL_SIZE);
    this.lineHeight = this.pdf.currentLineHeight(true);
  }

  /** The width of `s` in the current cell font. */
  private measure(s: string): number {
    return this.cellText.measure(this.font, s);
  }

  /** `text` in lines of at most `width`, at most MAX_CELL_LINES (cell-text.ts). */
  private wrap(text: string, width: number): string[] {
    return this.cellText.wrap(this.font, text, width, MAX_CELL_LINES);
  }

  private naturalWidths(columns: ExportColumn[], sample: string[][]): number[] {
    const longest = (s: string) =>
      s.split('\n').reduce((max, line) => Math.max(max, this.measure(line.slice(0, MAX_MEASURED_CHARS))), 0);
    this.cellFont(true);
    const widths = columns.map((c) => longest(this.text(c.title)));
    this.cellFont(false);
    for (const row of sample) {
      for (const [i, t] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, longest(t));
    }
    return widths.map((w) => w + 2 * PAD_X + 1);
  }

  /** Each cell's lines and the row's height, in the font the row is drawn in. */
  private layout(cells: string[], widths: number[], header: boolean): { lines: string[][]; height: number } {
    this.cellFont(header);
    const lines = cells.map((t, i) => this.wrap(t, (widths[i] ?? 0) - 2 * PAD_X));
    const most = lines.reduce((max, l) => Math.max(max, l.length), 1);
    return { lines, height: most * this.lineHeight + 2 * PAD_Y };
  }

  private drawRow(row: { lines: string[][]; height: number }, frame: TableFrame, header: boolean): void {
    this.cellFont(header);
    const top = this.pdf.y;
    const tableWidth = frame.widths.reduce((a, b) => a + b, 0);
    if (header) this.pdf.rect(frame.left, top, tableWidth, row.height).fill(HEADER_FILL);
    this.pdf.fillColor('black');
    let x = frame.left;
    for (const [i, lines] of row.lines.entries()) {
      const w = frame.widths[i] ?? 0;
      for (const [k, line] of lines.entries()) {
        if (line === '') continue;
        // Numbers line up on their last digit.
        const at = frame.aligns[i] === 'right' ? x + w - PAD_X - this.measure(line) : x + PAD_X;
        this.pdf.text(line, at, top + PAD_Y + k * this.lineHeight, { lineBreak: false });
      }
      x += w;
    }
    this.pdf
      .moveTo(frame.left, top + row.height)
      .lineTo(frame.left + tableWidth, top + row.height)
      .lineWidth(0.25)
      .strokeColor(RULE_COLOR)
      .stroke();
    this.pdf.x = this.left;
    this.pdf.y = top + row.height;
  }

  private cells(row: Record<string, unknown>, columns: ExportColumn[]): string[] {
    return rowTexts(row, columns, this.doc.timezone).map((t) => this.text(truncateText(t, MAX_CELL_CHARS)));
  }

  /** A chart's display size in points: its own, shrunk to `maxWidth` and to a share of the page. */
  private chartSize(chart: ExportChart, maxWidth: number): { w: number; h: number } {
    const pageHeight = this.pdf.page.height - this.top - this.pdf.page.margins.bottom;
    const scale = Math.min(
      1,
      maxWidth / (chart.width * PT_PER_PX),
      (pageHeight * MAX_CHART_SHARE) / (chart.height * PT_PER_PX),
    );
    return { w: chart.width * PT_PER_PX * scale, h: chart.height * PT_PER_PX * scale };
  }

  /**
   * Writes a table: its title once, its notes, its chart, then the rows under a header
   * that is repeated (after a small "(continued)") on top of every further page. A short,
   * narrow table goes beside its chart. Returns the rows written and whether a cap cut it.
   */
  async table(table: ExportTable): Promise<{ rows: number; truncated: boolean }> {
    const { columns } = table;
    const progress: Progress = { title: table.title, started: false, rows: 0, done: false };
    this.progress = progress;
    let truncated = false;
    const rows = capped(table.rows, this.maxRows, () => {
      truncated = true;
    })[Symbol.asyncIterator]();
    try {
      const sample: string[][] = [];
      let ended = false;
      while (sample.length < SAMPLE_ROWS) {
        const next = await rows.next();
        if (next.done) {
          ended = true;
          break;
        }
        sample.push(this.cells(next.value, columns));
      }
      const natural = this.naturalWidths(columns, sample);
      const aligns: Align[] = columns.map((c) =>
        c.kind === 'number' || c.kind === 'percent' ? 'right' : 'left',
      );

      // Beside the chart when the whole table fits there, else under it at full width.
      const chart = table.chart;
      let beside = false;
      let chartSize = { w: 0, h: 0 };
      let frame: TableFrame = {
        left: this.left,
        widths: fitColumns(natural, this.width, MIN_COLUMN_WIDTH),
        aligns,
      };
      if (chart) {
        chartSize = this.chartSize(chart, this.width);
        const room = this.width - chartSize.w - GAP;
        const needed = natural.reduce((a, b) => a + b, 0);
        if (ended && needed <= room) {
          const widths = fitColumns(natural, Math.min(room, needed * 1.4), MIN_COLUMN_WIDTH);
          const height =
            this.layout(
              columns.map((c) => this.text(c.title)),
              widths,
              true,
            ).height + sample.reduce((h, cells) => h + this.layout(cells, widths, false).height, 0);
          if (height <= chartSize.h) {
            beside = true;
            frame = { left: this.left + chartSize.w + GAP, widths, aligns };
          }
        }
      }
      const header = this.layout(
        columns.map((c) => this.text(c.title)),
        frame.widths,
        true,
      );

      // Title, notes, chart, header and a first row together, or all on the next page.
      const notes = table.notes ?? [];
      const titleHeight = this.paragraphHeight(table.title, this.bold, HEADING_SIZE);
      const notesHeight = notes.reduce((h, n) => h + this.paragraphHeight(n, this.regular, NOTE_SIZE), 0);
      const firstRow = sample[0] ? this.layout(sample[0], frame.widths, false).height : 0;
      const head = titleHeight + notesHeight + 6 + chartSize.h + (chart ? 6 : 0);
      // A short table is kept whole rather than leave a few rows to the next page.
      const wholeTable =
        ended && !beside
          ? header.height + sample.reduce((h, cells) => h + this.layout(cells, frame.widths, false).height, 0)
          : 0;
      const pageHeight = this.pdf.page.height - this.top - this.pdf.page.margins.bottom;
      await this.room(
        head + wholeTable <= pageHeight * 0.8
          ? head + wholeTable
          : head + (beside ? 0 : header.height + firstRow),
      );
      this.paragraph(table.title, this.bold, HEADING_SIZE);
      progress.started = true;
      for (const n of notes) this.paragraph(n, this.regular, NOTE_SIZE, NOTE_COLOR);
      this.pdf.moveDown(0.5);
      if (chart) {
        checkPng(chart.png, table.title);
        const top = this.pdf.y;
        this.picture(chart, this.left, top, chartSize.w, chartSize.h);
        if (!beside) this.pdf.y = top + chartSize.h + 6;
      }
      const chartBottom = this.pdf.y + (beside ? chartSize.h : 0);
      this.drawRow(header, frame, true);

      const draw = async (cells: string[]) => {
        const row = this.layout(cells, frame.widths, false);
        if (this.pdf.y + row.height > this.bottom) {
          await this.newPage();
          this.paragraph('(continued)', this.regular, NOTE_SIZE, NOTE_COLOR);
          this.pdf.y += 2;
          this.drawRow(header, frame, true);
        }
        this.drawRow(row, frame, false);
        progress.rows += 1;
      };
      for (const cells of sample) await draw(cells);
      for (;;) {
        const next = await rows.next();
        if (next.done) break;
        await draw(this.cells(next.value, columns));
      }
      if (beside) this.pdf.y = Math.max(this.pdf.y, chartBottom);
      progress.done = true;
    } finally {
      await rows.return(undefined);
    }
    this.pdf.moveDown(0.5);
    if (truncated) await this.block(truncationNote(this.maxRows), this.bold, NOTE_SIZE, NOTE_COLOR);
    if (progress.rows === 0) await this.block('No rows.', this.regular, NOTE_SIZE, NOTE_COLOR);
    for (const n of table.footnotes ?? []) await this.block(n, this.regular, NOTE_SIZE, NOTE_COLOR);
    this.pdf.moveDown();
    this.progress = null;
    return { rows: progress.rows, truncated };
  }

  /**
   * A chart as vector graphics with real text (searchable, sharp in print) when it comes
   * with its SVG; else its PNG. Fitted into the box, keeping its proportions.
   */
  private picture(p: { png: Buffer; svg?: string | undefined }, x: number, y: number, w: number, h: number) {
    if (p.svg) drawSvg(this.pdf, p.svg, x, y, [w, h], this.regular);
    else this.pdf.image(p.png, x, y, { fit: [w, h] });
  }

  /** Draws a picture under its title, at its size or shrunk to fit a page. */
  async image(image: ExportImage): Promise<void> {
    checkPng(image.png, image.title);
    this.progress = { title: image.title, started: false, rows: 0, done: false };
    this.pdf.font(this.bold).fontSize(HEADING_SIZE);
    const titleHeight = this.pdf.heightOfString(this.text(image.title), { width: this.width }) + 4;
    const pageRoom =
      this.pdf.page.height - this.pdf.page.margins.bottom - CUT_RESERVE - this.top - titleHeight;
    const scale = Math.min(1, this.width / (image.width * PT_PER_PX), pageRoom / (image.height * PT_PER_PX));
    const w = image.width * PT_PER_PX * scale;
    const h = image.height * PT_PER_PX * scale;
    await this.room(titleHeight + h);
    this.paragraph(image.title, this.bold, HEADING_SIZE);
    this.progress.started = true;
    this.pdf.y += 4;
    const top = this.pdf.y;
    this.picture(image, this.left, top, w, h);
    this.pdf.x = this.left;
    this.pdf.y = top + h;
    this.pdf.moveDown();
    this.progress = null;
  }

  /**
   * The note a page cap ends the document with, in the room kept for it: what was left
   * out. The section being drawn is "the table above" (its title is already on the page
   * once); the sections not begun are named.
   */
  cutNote(rest: readonly ExportSection[]): void {
    const parts: string[] = [];
    const current = this.progress;
    if (current?.started && current.done) parts.push('the notes under the table above');
    else if (current?.started)
      parts.push(
        current.rows > 0
          ? `the rest of the table above (its first ${countText(current.rows)} rows are shown)`
          : 'the rows of the table above',
      );
    const left = [...(current && !current.started ? [current.title] : []), ...rest.map(sectionTitle)];
    if (left.length) {
      const named = left.map((t) => `“${truncateText(t, 60)}”`).join(', ');
      parts.push(`${left.length === 1 ? 'the section' : `${left.length} sections:`} ${named}`);
    }
    const note = truncateText(
      `Page limit reached: this report stops at ${countText(this.maxPages)} pages. Left out: ${parts.join('; ')}.`,
      MAX_CUT_NOTE_CHARS,
    );
    this.pdf.y = Math.min(this.pdf.y, this.bottom) + 6;
    this.paragraph(note, this.bold, NOTE_SIZE, NOTE_COLOR);
    this.paragraph(
      'Narrow the time range or the queries, or export the data as csv or xlsx for every row.',
      this.regular,
      NOTE_SIZE,
      NOTE_COLOR,
    );
  }
}

const sectionTitle = (s: ExportSection) => (s.kind === 'table' ? s.table.title : s.title);
