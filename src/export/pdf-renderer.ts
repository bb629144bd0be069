import type { Writable } from 'node:stream';
import PDFDocument from 'pdfkit';
import { rowTexts, truncateText, truncationNote } from './cells.js';
import { fitColumns } from './column-widths.js';
import { capped, checkPng, pace, rendering } from './output.js';
import type { ExportColumn, ExportDocument, ExportImage, ExportTable, Renderer } from './renderer.js';
import { formatTime } from './time-format.js';

/** Rows per table a pdf holds: past that a table of logs is no longer read, only scrolled. */
export const PDF_MAX_ROWS = 100_000;

const MARGIN = 36; // pt: half an inch
const TITLE_SIZE = 16;
const HEADING_SIZE = 12;
const NOTE_SIZE = 9;
const CELL_SIZE = 7.5;
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
const NOTE_COLOR = '#595959';
const RULE_COLOR = '#d9d9d9';
const HEADER_FILL = '#e7e6e6';

/** TrueType (or OpenType) fonts for text beyond Windows-1252, e.g. DejaVu Sans: a path or the file's bytes. */
export interface PdfFonts {
  regular: string | Buffer;
  bold: string | Buffer;
}

/** Options of the pdf renderer. */
export interface PdfOptions {
  /** rows per table before it is cut short with a visible note */
  maxRows?: number;
  /** fonts to embed; without them the standard Helvetica is used, which covers Windows-1252 only */
  fonts?: PdfFonts;
}

// Characters Windows-1252 (the encoding of pdfkit's standard fonts) has beyond ASCII and
// Latin-1; anything else would come out as unrelated glyphs, so it is shown as "?".
const CP1252_EXTRA = new Set([...'€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ'].map((c) => c.codePointAt(0)));
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** `s` as the standard fonts can show it: tabs as spaces, other characters outside Windows-1252 as "?". */
export function winAnsiText(s: string): string {
  if (PRINTABLE_ASCII.test(s)) return s;
  let out = '';
  for (const ch of s.replace(/\r\n?/g, '\n')) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp === 10 || (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff) || CP1252_EXTRA.has(cp))
      out += ch;
    else out += cp === 9 ? ' ' : '?';
  }
  return out;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F]/g;

/** `s` for an embedded font: tabs as spaces, control characters (no glyph in any font) as "?". */
export function unicodeText(s: string): string {
  return s.replace(/\r\n?/g, '\n').replace(/\t/g, ' ').replace(CONTROL, '?');
}

class PdfWriter {
  readonly pdf: PDFKit.PDFDocument;
  private readonly regular: string;
  private readonly bold: string;
  private readonly text: (s: string) => string;
  private lineHeight = 0;
  private font = '';
  /** font → character → advance width at the cell size */
  private readonly advances = new Map<string, Map<string, number>>();

  constructor(
    readonly doc: ExportDocument,
    private readonly out: Writable,
    private readonly maxRows: number,
    fonts: PdfFonts | undefined,
  ) {
    this.pdf = new PDFDocument({
      size: 'A4',
      layout: 'landscape',
      margin: MARGIN,
      info: { Title: doc.title, Creator: 'Logscope', CreationDate: doc.generatedAt },
    });
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
  }

  private get left(): number {
    return this.pdf.page.margins.left;
  }

  private get width(): number {
    return this.pdf.page.width - this.pdf.page.margins.left - this.pdf.page.margins.right;
  }

  private get bottom(): number {
    return this.pdf.page.height - this.pdf.page.margins.bottom;
  }

  private async newPage(): Promise<void> {
    this.pdf.addPage();
    // pdfkit writes a page out when the next one starts, without regard to `out`.
    await pace(this.out);
  }

  /** Starts a new page unless `height` more points fit on this one. */
  private async room(height: number): Promise<void> {
    if (this.pdf.y + height > this.bottom) await this.newPage();
  }

  private paragraph(s: string, font: string, size: number, color = 'black'): void {
    this.pdf
      .font(font)
      .fontSize(size)
      .fillColor(color)
      .text(this.text(s), this.left, this.pdf.y, { width: this.width });
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

  /**
   * The width of `s` in the current cell font, from cached advance widths. pdfkit's own
   * widthOfString looks up a kerning pair per character and took most of the time of a
   * large table; kerning only narrows text, so the sum errs on the roomy side.
   */
  private measure(s: string): number {
    let widths = this.advances.get(this.font);
    if (widths === undefined) {
      widths = new Map();
      this.advances.set(this.font, widths);
    }
    let w = 0;
    for (const ch of s) {
      let cw = widths.get(ch);
      if (cw === undefined) {
        cw = this.pdf.widthOfString(ch);
        widths.set(ch, cw);
      }
      w += cw;
    }
    return w;
  }

  /** `s` cut to fit `width` with an ellipsis. */
  private ellipsize(s: string, width: number): string {
    let cut = s.trimEnd();
    while (cut !== '' && this.measure(`${cut}…`) > width) cut = cut.slice(0, -1);
    return `${cut}…`;
  }

  /**
   * `text` broken into lines of at most `width` (at spaces, or anywhere in a word longer
   * than a line), at most MAX_CELL_LINES of them, the last ending in an ellipsis when
   * there was more.
   */
  private wrap(text: string, width: number): string[] {
    if (!text.includes('\n') && this.measure(text) <= width) return text === '' ? [] : [text];
    const lines: string[] = [];
    const full = () => lines.length > MAX_CELL_LINES;
    for (const paragraph of text.split('\n')) {
      let line = '';
      let lineWidth = 0;
      for (let word of paragraph.split(/(?<= )/)) {
        const ww = this.measure(word);
        if (lineWidth + ww <= width || (line === '' && ww <= width)) {
          line += word;
          lineWidth += ww;
          continue;
        }
        if (line !== '') lines.push(line.trimEnd());
        if (full()) break;
        while (this.measure(word) > width && !full()) {
          let head = '';
          for (const ch of word) {
            if (head !== '' && this.measure(head + ch) > width) break;
            head += ch;
          }
          lines.push(head);
          word = word.slice(head.length);
        }
        line = word;
        lineWidth = this.measure(word);
      }
      if (full()) break;
      lines.push(line.trimEnd());
    }
    if (lines.length > MAX_CELL_LINES) {
      lines.length = MAX_CELL_LINES;
      lines[MAX_CELL_LINES - 1] = this.ellipsize(lines[MAX_CELL_LINES - 1] ?? '', width);
    }
    return lines;
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

  private drawRow(row: { lines: string[][]; height: number }, widths: number[], header: boolean): void {
    this.cellFont(header);
    const top = this.pdf.y;
    if (header) this.pdf.rect(this.left, top, this.width, row.height).fill(HEADER_FILL);
    this.pdf.fillColor('black');
    let x = this.left;
    for (const [i, lines] of row.lines.entries()) {
      for (const [k, line] of lines.entries()) {
        if (line !== '')
          this.pdf.text(line, x + PAD_X, top + PAD_Y + k * this.lineHeight, { lineBreak: false });
      }
      x += widths[i] ?? 0;
    }
    this.pdf
      .moveTo(this.left, top + row.height)
      .lineTo(this.left + this.width, top + row.height)
      .lineWidth(0.25)
      .strokeColor(RULE_COLOR)
      .stroke();
    this.pdf.x = this.left;
    this.pdf.y = top + row.height;
  }

  private cells(row: Record<string, unknown>, columns: ExportColumn[]): string[] {
    return rowTexts(row, columns, this.doc.timezone).map((t) => this.text(truncateText(t, MAX_CELL_CHARS)));
  }

  /** Writes a table, its header again on top of every page; returns the rows written and whether it was cut. */
  async table(table: ExportTable): Promise<{ rows: number; truncated: boolean }> {
    const { columns } = table;
    let truncated = false;
    const rows = capped(table.rows, this.maxRows, () => {
      truncated = true;
    })[Symbol.asyncIterator]();
    let written = 0;
    try {
      const sample: string[][] = [];
      while (sample.length < SAMPLE_ROWS) {
        const next = await rows.next();
        if (next.done) break;
        sample.push(this.cells(next.value, columns));
      }
      const widths = fitColumns(this.naturalWidths(columns, sample), this.width, MIN_COLUMN_WIDTH);
      const header = this.layout(
        columns.map((c) => this.text(c.title)),
        widths,
        true,
      );

      this.pdf.font(this.bold).fontSize(HEADING_SIZE);
      // Title, notes, header and a first row together, or all on the next page.
      await this.room(this.pdf.currentLineHeight(true) * (3 + (table.notes?.length ?? 0)) + 40);
      this.paragraph(table.title, this.bold, HEADING_SIZE);
      for (const n of table.notes ?? []) this.paragraph(n, this.regular, NOTE_SIZE, NOTE_COLOR);
      this.pdf.moveDown(0.5);
      this.drawRow(header, widths, true);

      const draw = async (cells: string[]) => {
        const row = this.layout(cells, widths, false);
        if (this.pdf.y + row.height > this.bottom) {
          await this.newPage();
          this.drawRow(header, widths, true);
        }
        this.drawRow(row, widths, false);
        written += 1;
      };
      for (const cells of sample) await draw(cells);
      for (;;) {
        const next = await rows.next();
        if (next.done) break;
        await draw(this.cells(next.value, columns));
      }
    } finally {
      await rows.return(undefined);
    }
    this.pdf.moveDown(0.5);
    if (truncated) this.paragraph(truncationNote(this.maxRows), this.bold, NOTE_SIZE, NOTE_COLOR);
    if (written === 0) this.paragraph('No rows.', this.regular, NOTE_SIZE, NOTE_COLOR);
    this.pdf.moveDown();
    return { rows: written, truncated };
  }

  /** Draws a picture under its title, at its size or shrunk to fit a page. */
  async image(image: ExportImage): Promise<void> {
    checkPng(image.png, image.title);
    this.pdf.font(this.bold).fontSize(HEADING_SIZE);
    const titleHeight = this.pdf.heightOfString(this.text(image.title), { width: this.width }) + 4;
    const pageRoom = this.bottom - this.pdf.page.margins.top - titleHeight;
    const scale = Math.min(1, this.width / (image.width * PT_PER_PX), pageRoom / (image.height * PT_PER_PX));
    const w = image.width * PT_PER_PX * scale;
    const h = image.height * PT_PER_PX * scale;
    await this.room(titleHeight + h);
    this.paragraph(image.title, this.bold, HEADING_SIZE);
    this.pdf.y += 4;
    const top = this.pdf.y;
    this.pdf.image(image.png, this.left, top, { fit: [w, h] });
    this.pdf.x = this.left;
    this.pdf.y = top + h;
    this.pdf.moveDown();
  }
}

/**
 * PDF, A4 landscape, streamed page by page: the title, when it was made and the zone its
 * times are in; per table a heading, the notes and a ruled table whose columns are sized
 * from the titles and the first rows, the header repeated on every page, long cells cut
 * at eight lines; pictures shrunk to fit a page. A table stops at `maxRows` (100,000)
 * with a note under it.
 */
export function createPdfRenderer(options: PdfOptions = {}): Renderer {
  const maxRows = options.maxRows ?? PDF_MAX_ROWS;
  return {
    ext: 'pdf',
    mediaType: 'application/pdf',
    render: (doc: ExportDocument, out: Writable) =>
      rendering(out, async () => {
        const w = new PdfWriter(doc, out, maxRows, options.fonts);
        w.pdf.pipe(out);
        w.heading();
        let rows = 0;
        let truncated = false;
        for (const section of doc.sections) {
          switch (section.kind) {
            case 'table': {
              const t = await w.table(section.table);
              rows += t.rows;
              truncated ||= t.truncated;
              break;
            }
            case 'image':
              await w.image(section);
              break;
            default:
              section satisfies never;
          }
        }
        w.pdf.end();
        return { rows, truncated };
      }),
  };
}

export const pdfRenderer: Renderer = createPdfRenderer();
