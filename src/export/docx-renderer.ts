import { randomUUID } from 'node:crypto';
import type { Writable } from 'node:stream';
import {
  Document,
  Footer,
  HeadingLevel,
  ImageRun,
  Packer,
  PageNumber,
  PageOrientation,
  Paragraph,
  TabStopType,
  TextRun,
} from 'docx';
import { countText, rowTexts, truncateText, truncationNote, xmlSafe } from './cells.js';
import { fitColumns } from './column-widths.js';
import { CELL_MARGIN, tableXml } from './docx-table-xml.js';
import { capped, checkPng, Pacer, rendering } from './output.js';
import type {
  ExportChart,
  ExportDocument,
  ExportImage,
  ExportSection,
  ExportTable,
  Renderer,
} from './renderer.js';
import { docxColor, REPORT_COLORS, REPORT_TYPE } from './report-style.js';
import { formatTime } from './time-format.js';
import { readZipEntry } from './zip-entry.js';

/** Rows per table a docx holds: the file is built whole in memory before it is sent. */
export const DOCX_MAX_ROWS = 10_000;

// A4 landscape (log tables are wide) with 2 cm margins, in twips (1/20 pt; 15 per CSS px).
const A4_SHORT = 11_906;
const A4_LONG = 16_838;
const MARGIN = 1_134;
const CONTENT_WIDTH = A4_LONG - 2 * MARGIN;
const CONTENT_HEIGHT = A4_SHORT - 2 * MARGIN;
const TWIPS_PER_PX = 15;
// Room kept under a picture's title on the page.
const IMAGE_TITLE_ALLOWANCE = 1_200;

// DOCX sizes are in half-points.
const TABLE_FONT_SIZE = 2 * REPORT_TYPE.docx.cell;
const CAPTION_SIZE = 2 * REPORT_TYPE.docx.caption;
const NOTE_COLOR = docxColor(REPORT_COLORS.note);
// A cell of a whole log payload would fill pages; the file says where it was cut.
const MAX_CELL_CHARS = 4_000;
// Widths follow the longest line of a column, counted up to this many characters, at
// a little over the average advance of 8 pt Calibri (fallback fonts run wider).
const MAX_MEASURED_CHARS = 80;
const TWIPS_PER_CHAR = 100;
const MIN_COLUMN_WIDTH = 500;
const DOCUMENT_XML = 'word/document.xml';
// A chart takes at most this share of a page's height.
const MAX_CHART_SHARE = 0.55;

/*
 * Word lays the pages out, so a page cap is kept on an estimate of the height each part
 * takes (twips): a heading, a line of a note, a line of a table cell (8 pt), characters
 * per line of a note. Only this share of each page counts as filled, for what headings
 * kept with the next part and rows that do not split leave empty.
 */
const HEADING_HEIGHT = 720;
const NOTE_LINE_HEIGHT = 290;
const NOTE_CHARS_PER_LINE = 140;
const CELL_LINE_HEIGHT = 200;
const CELL_TWIPS_PER_CHAR = 85;
const PAGE_FILL = 0.85;
// Room above a section's heading, setting it apart from the notes of the one before.
const HEADING_SPACE = 360;

/** The estimated height used so far against what the page cap allows. */
interface PageBudget {
  used: number;
  limit: number;
  maxPages: number;
}

const noteHeight = (text: string) =>
  Math.max(1, Math.ceil(text.length / NOTE_CHARS_PER_LINE)) * NOTE_LINE_HEIGHT;

function rowHeight(cells: readonly string[], widths: readonly number[]): number {
  let lines = 1;
  for (const [i, text] of cells.entries()) {
    const perLine = Math.max(
      1,
      Math.floor(((widths[i] ?? MIN_COLUMN_WIDTH) - 2 * CELL_MARGIN) / CELL_TWIPS_PER_CHAR),
    );
    const n = text
      .split(/\r\n|\r|\n/)
      .reduce((sum, line) => sum + Math.max(1, Math.ceil(line.length / perLine)), 0);
    if (n > lines) lines = n;
  }
  return lines * CELL_LINE_HEIGHT;
}

const note = (text: string, bold = false) =>
  new Paragraph({ children: [new TextRun({ text: xmlSafe(text), italics: true, bold, color: NOTE_COLOR })] });

const longestLine = (s: string) => s.split(/\r\n|\r|\n/).reduce((max, line) => Math.max(max, line.length), 0);

/** Twips per column: what the longest line of each needs (titles included), fitted to the page. */
function columnWidths(titles: string[], rows: string[][]): number[] {
  const chars = titles.map((t) => Math.min(longestLine(t) + 1, MAX_MEASURED_CHARS));
  for (const row of rows) {
    for (const [i, text] of row.entries()) {
      const n = Math.min(longestLine(text), MAX_MEASURED_CHARS);
      if (n > (chars[i] ?? 0)) chars[i] = n;
    }
  }
  const natural = chars.map((n) => n * TWIPS_PER_CHAR + 2 * CELL_MARGIN);
  return fitColumns(natural, CONTENT_WIDTH, MIN_COLUMN_WIDTH).map(Math.floor);
}

interface TablePart {
  children: Paragraph[];
  /** the text standing where the table goes, until the table XML replaces its paragraph */
  marker: string;
  xml: string;
  rows: number;
  truncated: boolean;
  /** the page cap cut the table: nothing after it goes in */
  cut: boolean;
}

/** The size (px) a chart is drawn at: its own, shrunk to the page's width and a share of its height. */
function chartSize(
  chart: ExportChart | ExportImage,
  maxHeightTwips: number,
): { width: number; height: number } {
  const maxW = CONTENT_WIDTH / TWIPS_PER_PX;
  const maxH = maxHeightTwips / TWIPS_PER_PX;
  const scale = Math.min(1, maxW / chart.width, maxH / chart.height);
  return { width: Math.round(chart.width * scale), height: Math.round(chart.height * scale) };
}

function chartRun(chart: ExportChart | ExportImage, title: string, maxHeightTwips: number): ImageRun {
  checkPng(chart.png, title);
  const description = xmlSafe(('description' in chart ? chart.description : undefined) ?? title);
  const common = {
    transformation: chartSize(chart, maxHeightTwips),
    altText: { name: xmlSafe(title), title: xmlSafe(title), description },
  };
  // Vector with real text where the chart has its SVG (Word 2016+ and LibreOffice draw
  // it); the PNG stays as the fallback older readers show.
  return chart.svg
    ? new ImageRun({
        type: 'svg',
        data: Buffer.from(chart.svg),
        fallback: { type: 'png', data: chart.png },
        ...common,
      })
    : new ImageRun({ type: 'png', data: chart.png, ...common });
}

function chartParagraph(chart: ExportChart | ExportImage, title: string, maxHeightTwips: number): Paragraph {
  return new Paragraph({ keepNext: true, children: [chartRun(chart, title, maxHeightTwips)] });
}

/**
 * The notes under a heading and the chart under them, as one paragraph (lines broken)
 * that is kept whole and with what follows: word processors keep a short chain of
 * paragraphs together more reliably than a long one (LibreOffice broke a heading from
 * its notes).
 */
function preamble(notes: readonly string[], chart: ExportChart | undefined, title: string): Paragraph | null {
  if (notes.length === 0 && !chart) return null;
  const children: Array<TextRun | ImageRun> = notes.map(
    (n, i) =>
      new TextRun({ text: xmlSafe(n), italics: true, color: NOTE_COLOR, ...(i > 0 ? { break: 1 } : {}) }),
  );
  if (chart) {
    if (notes.length) children.push(new TextRun({ break: 1 }));
    children.push(chartRun(chart, title, CONTENT_HEIGHT * MAX_CHART_SHARE));
  }
  return new Paragraph({ keepNext: true, keepLines: true, children });
}

async function tablePart(
  table: ExportTable,
  tz: string,
  maxRows: number,
  marker: string,
  budget: PageBudget,
): Promise<TablePart> {
  let truncated = false;
  let texts: string[][] = [];
  const pacer = new Pacer();
  for await (const row of capped(table.rows, maxRows, () => {
    truncated = true;
  })) {
    texts.push(rowTexts(row, table.columns, tz).map((t) => truncateText(t, MAX_CELL_CHARS)));
    await pacer.tick();
  }
  const titles = table.columns.map((c) => c.title);
  const widths = columnWidths(titles, texts);
  const notes = table.notes ?? [];
  const children = [
    new Paragraph({
      heading: HeadingLevel.HEADING_1,
      keepNext: true,
      spacing: { before: HEADING_SPACE },
      children: [new TextRun(xmlSafe(table.title))],
    }),
  ];
  const head = preamble(notes, table.chart, table.title);
  if (head) children.push(head);
  budget.used += HEADING_HEIGHT + notes.reduce((h, n) => h + noteHeight(n), 0);
  if (table.chart)
    budget.used +=
      chartSize(table.chart, CONTENT_HEIGHT * MAX_CHART_SHARE).height * TWIPS_PER_PX + NOTE_LINE_HEIGHT;
  // Rows past the page cap's estimate are left out; the caller says so after the table.
  let cut = false;
  budget.used += rowHeight(titles, widths);
  for (const [i, cells] of texts.entries()) {
    budget.used += rowHeight(cells, widths);
    if (budget.used > budget.limit) {
      cut = true;
      texts = texts.slice(0, i);
      break;
    }
  }
  // Above the table rather than after it: the document is built whole, so the reader can
  // be told before paging through ten thousand rows.
  if (truncated) children.push(note(truncationNote(maxRows), true));
  if (texts.length === 0 && !cut) children.push(note('No rows.'));
  children.push(new Paragraph({ children: [new TextRun(marker)] }));
  if (!cut) {
    for (const n of table.footnotes ?? []) {
      children.push(note(n));
      budget.used += noteHeight(n);
    }
  }
  // Word refuses a table row without cells, so a table without columns is left out.
  const aligns = table.columns.map((c) => (c.kind === 'number' || c.kind === 'percent' ? 'right' : 'left'));
  const xml = titles.length === 0 ? '' : tableXml(titles, texts, widths, TABLE_FONT_SIZE, aligns);
  return { children, marker, xml, rows: texts.length, truncated: truncated || cut, cut };
}

function imageChildren(image: ExportImage): Paragraph[] {
  return [
    new Paragraph({
      heading: HeadingLevel.HEADING_1,
      keepNext: true,
      children: [new TextRun(xmlSafe(image.title))],
    }),
    chartParagraph(image, image.title, CONTENT_HEIGHT - IMAGE_TITLE_ALLOWANCE),
  ];
}

const sectionTitle = (s: ExportSection) => (s.kind === 'table' ? s.table.title : s.title);

/** What a page cap left out, after the last part that went in. */
function cutNotes(maxPages: number, rows: number | null, rest: readonly ExportSection[]): Paragraph[] {
  const parts: string[] = [];
  if (rows !== null)
    parts.push(
      rows > 0
        ? `the rest of the table above (its first ${countText(rows)} rows are shown)`
        : 'the rows of the table above',
    );
  if (rest.length) {
    const named = rest.map((s) => `“${truncateText(sectionTitle(s), 60)}”`).join(', ');
    parts.push(`${rest.length === 1 ? 'the section' : `${rest.length} sections:`} ${named}`);
  }
  return [
    note(
      truncateText(
        `Page limit reached: this report stops at about ${countText(maxPages)} pages. Left out: ${parts.join('; ')}.`,
        600,
      ),
      true,
    ),
    note('Narrow the time range or the queries, or export the data as csv or xlsx for every row.'),
  ];
}

/** The page footer: the document's title on the left, "Page N of M" (Word's fields) on the right. */
function footer(title: string): Footer {
  return new Footer({
    children: [
      new Paragraph({
        tabStops: [{ type: TabStopType.RIGHT, position: CONTENT_WIDTH }],
        children: [
          new TextRun({ text: xmlSafe(truncateText(title, 120)), size: CAPTION_SIZE, color: NOTE_COLOR }),
          new TextRun({
            children: ['\tPage ', PageNumber.CURRENT, ' of ', PageNumber.TOTAL_PAGES],
            size: CAPTION_SIZE,
            color: NOTE_COLOR,
          }),
        ],
      }),
    ],
  });
}

/** `xml` with the paragraph holding each marker replaced by its table. */
function spliceTables(xml: string, tables: readonly TablePart[]): string {
  let out = xml;
  for (const t of tables) {
    const at = out.indexOf(t.marker);
    // '<w:p>' or '<w:p ', not '<w:pPr>': the paragraph itself, not its properties.
    const start = at < 0 ? -1 : Math.max(out.lastIndexOf('<w:p>', at), out.lastIndexOf('<w:p ', at));
    const end = at < 0 ? -1 : out.indexOf('</w:p>', at);
    if (start < 0 || end < 0) throw new Error('docx: table placeholder not found in the document');
    out = `${out.slice(0, start)}${t.xml}${out.slice(end + '</w:p>'.length)}`;
  }
  return out;
}

/** Options of the docx renderer. */
export interface DocxOptions {
  /** rows per table before it is cut short with a visible note */
  maxRows?: number;
  /** most pages (estimated) unless the document sets its own `maxPages`; the rest is left out with a note */
  maxPages?: number;
}

/**
 * Word document, A4 landscape: the title, when it was made and the zone its times are
 * in, then per section a heading, the notes and the chart kept with it, a table (header
 * repeated on every page, numbers right-aligned) and its footnotes; or a picture, shrunk
 * to fit the page. The footer holds the title and "Page N of M" (Word's fields). The
 * docx library writes the document and the tables are spliced in as text (see
 * docx-table-xml.ts). The file is still built whole in memory, so each table stops at
 * `maxRows` (10,000) with a note saying so, and the result reports `truncated`. With a
 * page cap (the document's `maxPages`, or the renderer's) the content stops where an
 * estimate of its height reaches the cap, with a note saying what was left out.
 */
export function createDocxRenderer(options: DocxOptions = {}): Renderer {
  const maxRows = options.maxRows ?? DOCX_MAX_ROWS;
  return {
    ext: 'docx',
    mediaType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    render: (doc: ExportDocument, out: Writable) =>
      rendering(out, async () => {
        const tz = doc.timezone;
        // Random so that no text of the document can pass for a placeholder.
        const nonce = randomUUID();
        const tables: TablePart[] = [];
        const children: Paragraph[] = [
          new Paragraph({ heading: HeadingLevel.TITLE, children: [new TextRun(xmlSafe(doc.title))] }),
          note(`Generated ${formatTime(doc.generatedAt.getTime() / 1000, tz)}. Times in ${tz}.`),
        ];
        const maxPages = Math.max(1, doc.maxPages ?? options.maxPages ?? Number.POSITIVE_INFINITY);
        const budget: PageBudget = {
          used: 2 * HEADING_HEIGHT,
          limit: maxPages * CONTENT_HEIGHT * PAGE_FILL,
          maxPages,
        };
        for (const [i, section] of doc.sections.entries()) {
          const rest = doc.sections.slice(i + 1);
          if (section.kind === 'table') {
            const t = await tablePart(
              section.table,
              tz,
              maxRows,
              `logscope-table-${nonce}-${tables.length}`,
              budget,
            );
            tables.push(t);
            children.push(...t.children);
            if (t.cut) {
              children.push(...cutNotes(maxPages, t.rows, rest));
              break;
            }
          } else if (section.kind === 'image') {
            const size = chartSize(section, CONTENT_HEIGHT - IMAGE_TITLE_ALLOWANCE);
            budget.used += HEADING_HEIGHT + size.height * TWIPS_PER_PX;
            if (budget.used > budget.limit) {
              children.push(...cutNotes(maxPages, null, [section, ...rest]));
              break;
            }
            children.push(...imageChildren(section));
          } else {
            section satisfies never;
          }
        }
        const file = new Document({
          creator: 'Logscope',
          title: xmlSafe(doc.title),
          styles: { default: { document: { run: { size: 20, font: 'Calibri' } } } },
          sections: [
            {
              properties: {
                page: {
                  size: { width: A4_SHORT, height: A4_LONG, orientation: PageOrientation.LANDSCAPE },
                  margin: { top: MARGIN, bottom: MARGIN, left: MARGIN, right: MARGIN, footer: MARGIN / 2 },
                },
              },
              footers: { default: footer(doc.title) },
              children,
            },
          ],
        });
        // Packing the same File again gives the same parts (relationship ids included), so
        // the first pass's document.xml, tables spliced in, can stand in for the second's.
        const skeleton = readZipEntry(await Packer.toBuffer(file), DOCUMENT_XML);
        if (skeleton === undefined) throw new Error(`docx: ${DOCUMENT_XML} missing from the package`);
        const documentXml = spliceTables(skeleton.toString('utf8'), tables);
        out.end(await Packer.toBuffer(file, false, [{ path: DOCUMENT_XML, data: documentXml }]));
        return {
          rows: tables.reduce((n, t) => n + t.rows, 0),
          truncated: tables.some((t) => t.truncated),
        };
      }),
  };
}

export const docxRenderer: Renderer = createDocxRenderer();
