import type { Writable } from 'node:stream';
import {
  Document,
  HeadingLevel,
  ImageRun,
  Packer,
  PageOrientation,
  Paragraph,
  ShadingType,
  Table,
  TableCell,
  TableLayoutType,
  TableRow,
  TextRun,
  WidthType,
} from 'docx';
import { countText, rowTexts, truncateText, truncationNote, xmlSafe } from './cells.js';
import { capped, checkPng, rendering } from './output.js';
import type { ExportDocument, ExportImage, ExportTable, Renderer } from './renderer.js';
import { formatTime } from './time-format.js';

/** Rows per table a docx holds: the docx library builds the whole document in memory. */
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

const TABLE_FONT_SIZE = 16; // half-points: 8 pt
const NOTE_COLOR = '595959';
const HEADER_SHADING = { type: ShadingType.CLEAR, color: 'auto', fill: 'E7E6E6' } as const;
// A cell of a whole log payload would fill pages; the file says where it was cut.
const MAX_CELL_CHARS = 4_000;
// Column widths follow the longest line seen, up to this many characters.
const MAX_WEIGHT = 50;
const MIN_WEIGHT = 4;

const clean = (s: string) => xmlSafe(s);

function runs(text: string, options: { bold?: boolean } = {}): TextRun[] {
  return clean(text)
    .split(/\r\n|\r|\n/)
    .map(
      (line, i) =>
        new TextRun({ text: line, break: i > 0 ? 1 : undefined, size: TABLE_FONT_SIZE, ...options }),
    );
}

const note = (text: string, bold = false) =>
  new Paragraph({ children: [new TextRun({ text: clean(text), italics: true, bold, color: NOTE_COLOR })] });

const longestLine = (s: string) => s.split(/\r\n|\r|\n/).reduce((max, line) => Math.max(max, line.length), 0);

/** Twips per column, in proportion to the longest line of each (titles included). */
function columnWidths(titles: string[], rows: string[][]): number[] {
  const weights = titles.map((t) => Math.min(Math.max(longestLine(t), MIN_WEIGHT), MAX_WEIGHT));
  for (const row of rows) {
    for (const [i, text] of row.entries()) {
      const w = Math.min(longestLine(text), MAX_WEIGHT);
      if (w > (weights[i] ?? 0)) weights[i] = w;
    }
  }
  const total = weights.reduce((a, b) => a + b, 0) || 1;
  return weights.map((w) => Math.floor((w / total) * CONTENT_WIDTH));
}

function tableBlock(titles: string[], rows: string[][]): Table {
  const widths = columnWidths(titles, rows);
  const cell = (text: string, i: number, header: boolean) =>
    new TableCell({
      width: { size: widths[i] ?? 0, type: WidthType.DXA },
      shading: header ? HEADER_SHADING : undefined,
      children: [new Paragraph({ children: runs(text, header ? { bold: true } : {}) })],
    });
  return new Table({
    width: { size: CONTENT_WIDTH, type: WidthType.DXA },
    columnWidths: widths,
    // Fixed layout: Word need not measure ten thousand rows to open the file.
    layout: TableLayoutType.FIXED,
    rows: [
      // tableHeader repeats the header row on every page.
      new TableRow({ tableHeader: true, children: titles.map((t, i) => cell(t, i, true)) }),
      ...rows.map((r) => new TableRow({ cantSplit: false, children: r.map((t, i) => cell(t, i, false)) })),
    ],
  });
}

async function tableChildren(
  table: ExportTable,
  tz: string,
  maxRows: number,
  onTruncated: () => void,
): Promise<{ children: Array<Paragraph | Table>; rows: number }> {
  let truncated = false;
  const texts: string[][] = [];
  for await (const row of capped(table.rows, maxRows, () => {
    truncated = true;
  })) {
    texts.push(rowTexts(row, table.columns, tz).map((t) => truncateText(t, MAX_CELL_CHARS)));
  }
  if (truncated) onTruncated();
  const children: Array<Paragraph | Table> = [
    new Paragraph({ heading: HeadingLevel.HEADING_1, children: [new TextRun(clean(table.title))] }),
    ...(table.notes ?? []).map((n) => note(n)),
  ];
  // Above the table rather than after it: the document is built whole, so the reader can
  // be told before paging through ten thousand rows.
  if (truncated) children.push(note(truncationNote(maxRows), true));
  if (texts.length === 0) children.push(note('No rows.'));
  children.push(
    tableBlock(
      table.columns.map((c) => c.title),
      texts,
    ),
  );
  return { children, rows: texts.length };
}

function imageChildren(image: ExportImage): Paragraph[] {
  checkPng(image.png, image.title);
  const maxW = CONTENT_WIDTH / TWIPS_PER_PX;
  const maxH = (CONTENT_HEIGHT - IMAGE_TITLE_ALLOWANCE) / TWIPS_PER_PX;
  const scale = Math.min(1, maxW / image.width, maxH / image.height);
  return [
    new Paragraph({
      heading: HeadingLevel.HEADING_1,
      keepNext: true,
      children: [new TextRun(clean(image.title))],
    }),
    new Paragraph({
      children: [
        new ImageRun({
          type: 'png',
          data: image.png,
          transformation: {
            width: Math.round(image.width * scale),
            height: Math.round(image.height * scale),
          },
          altText: { name: clean(image.title), title: clean(image.title), description: clean(image.title) },
        }),
      ],
    }),
  ];
}

/** Options of the docx renderer. */
export interface DocxOptions {
  /** rows per table before it is cut short with a visible note */
  maxRows?: number;
}

/**
 * Word document, A4 landscape: the title, when it was made and the zone its times are
 * in, then per section a heading, the notes and a table (header repeated on every page)
 * or the picture, shrunk to fit the page. docx builds in memory, so each table stops at
 * `maxRows` (10,000) with a note saying so, and the result reports `truncated`.
 */
export function createDocxRenderer(options: DocxOptions = {}): Renderer {
  const maxRows = options.maxRows ?? DOCX_MAX_ROWS;
  return {
    ext: 'docx',
    mediaType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    render: (doc: ExportDocument, out: Writable) =>
      rendering(out, async () => {
        let rows = 0;
        let truncated = false;
        const tz = doc.timezone;
        const children: Array<Paragraph | Table> = [
          new Paragraph({ heading: HeadingLevel.TITLE, children: [new TextRun(clean(doc.title))] }),
          note(`Generated ${formatTime(doc.generatedAt.getTime() / 1000, tz)}. Times in ${tz}.`),
        ];
        for (const section of doc.sections) {
          switch (section.kind) {
            case 'table': {
              const t = await tableChildren(section.table, tz, maxRows, () => {
                truncated = true;
              });
              children.push(...t.children);
              rows += t.rows;
              break;
            }
            case 'image':
              children.push(...imageChildren(section));
              break;
            default:
              section satisfies never;
          }
        }
        const file = new Document({
          creator: 'Logscope',
          title: clean(doc.title),
          description: `${countText(rows)} rows`,
          sections: [
            {
              properties: {
                page: {
                  size: { width: A4_SHORT, height: A4_LONG, orientation: PageOrientation.LANDSCAPE },
                  margin: { top: MARGIN, bottom: MARGIN, left: MARGIN, right: MARGIN },
                },
              },
              children,
            },
          ],
        });
        out.end(await Packer.toBuffer(file));
        return { rows, truncated };
      }),
  };
}

export const docxRenderer: Renderer = createDocxRenderer();
