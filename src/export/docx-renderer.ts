import { randomUUID } from 'node:crypto';
import type { Writable } from 'node:stream';
import { Document, HeadingLevel, ImageRun, Packer, PageOrientation, Paragraph, TextRun } from 'docx';
import { rowTexts, truncateText, truncationNote, xmlSafe } from './cells.js';
import { fitColumns } from './column-widths.js';
import { CELL_MARGIN, tableXml } from './docx-table-xml.js';
import { capped, checkPng, Pacer, rendering } from './output.js';
import type { ExportDocument, ExportImage, ExportTable, Renderer } from './renderer.js';
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

const TABLE_FONT_SIZE = 16; // half-points: 8 pt
const NOTE_COLOR = '595959';
// A cell of a whole log payload would fill pages; the file says where it was cut.
const MAX_CELL_CHARS = 4_000;
// Widths follow the longest line of a column, counted up to this many characters, at
// a little over the average advance of 8 pt Calibri (fallback fonts run wider).
const MAX_MEASURED_CHARS = 80;
const TWIPS_PER_CHAR = 100;
const MIN_COLUMN_WIDTH = 500;
const DOCUMENT_XML = 'word/document.xml';

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
}

async function tablePart(
  table: ExportTable,
  tz: string,
  maxRows: number,
  marker: string,
): Promise<TablePart> {
  let truncated = false;
  const texts: string[][] = [];
  const pacer = new Pacer();
  for await (const row of capped(table.rows, maxRows, () => {
    truncated = true;
  })) {
    texts.push(rowTexts(row, table.columns, tz).map((t) => truncateText(t, MAX_CELL_CHARS)));
    await pacer.tick();
  }
  const titles = table.columns.map((c) => c.title);
  const children = [
    new Paragraph({
      heading: HeadingLevel.HEADING_1,
      keepNext: true,
      children: [new TextRun(xmlSafe(table.title))],
    }),
    ...(table.notes ?? []).map((n) => note(n)),
  ];
  // Above the table rather than after it: the document is built whole, so the reader can
  // be told before paging through ten thousand rows.
  if (truncated) children.push(note(truncationNote(maxRows), true));
  if (texts.length === 0) children.push(note('No rows.'));
  children.push(new Paragraph({ children: [new TextRun(marker)] }));
  // Word refuses a table row without cells, so a table without columns is left out.
  const xml =
    titles.length === 0 ? '' : tableXml(titles, texts, columnWidths(titles, texts), TABLE_FONT_SIZE);
  return { children, marker, xml, rows: texts.length, truncated };
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
      children: [new TextRun(xmlSafe(image.title))],
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
          altText: {
            name: xmlSafe(image.title),
            title: xmlSafe(image.title),
            description: xmlSafe(image.title),
          },
        }),
      ],
    }),
  ];
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
}

/**
 * Word document, A4 landscape: the title, when it was made and the zone its times are
 * in, then per section a heading, the notes and a table (header repeated on every page)
 * or the picture, shrunk to fit the page. The docx library writes the document and the
 * tables are spliced in as text (see docx-table-xml.ts). The file is still built whole in
 * memory, so each table stops at `maxRows` (10,000) with a note saying so, and the
 * result reports `truncated`.
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
        for (const section of doc.sections) {
          switch (section.kind) {
            case 'table': {
              const t = await tablePart(
                section.table,
                tz,
                maxRows,
                `logscope-table-${nonce}-${tables.length}`,
              );
              tables.push(t);
              children.push(...t.children);
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
          title: xmlSafe(doc.title),
          styles: { default: { document: { run: { size: 20, font: 'Calibri' } } } },
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
