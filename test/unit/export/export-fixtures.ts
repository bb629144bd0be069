import { Writable } from 'node:stream';
import { deflateSync } from 'node:zlib';
import ExcelJS from 'exceljs';
import type { ExportColumn, ExportDocument, ExportSection } from '../../../src/export/renderer.js';

// --- a PNG written by hand: signature, IHDR, IDAT, IEND, each chunk with its CRC-32 ---

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const byte of buf) c = (CRC_TABLE[(c ^ byte) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A solid-colour 8-bit RGB PNG. */
export function makePng(
  width: number,
  height: number,
  rgb: [number, number, number] = [200, 30, 30],
): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // bit depth 8, colour type RGB, deflate, no filter, no interlace
  const line = Buffer.alloc(1 + width * 3); // each scanline starts with filter type 0
  for (let x = 0; x < width; x++) line.set(rgb, 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: height }, () => line));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// --- the sample table ---

/** 2024-01-15T12:00:00.123Z: Paris is at +01:00 then; four days a row, the table crosses into summer time. */
export const BASE_TS = Date.UTC(2024, 0, 15, 12, 0, 0, 123) / 1000;
export const ROW_STEP = 4 * 86_400;
export const ROW_COUNT = 50;

export const COLUMNS: ExportColumn[] = [
  { key: 'ts', title: 'time', kind: 'time' },
  { key: 'host', title: 'host', kind: 'string' },
  { key: 'message', title: 'message', kind: 'string' },
  { key: 'status', title: 'status', kind: 'number' },
  { key: 'bytes', title: 'bytes', kind: 'number' },
  { key: 'fields', title: 'fields', kind: 'json' },
  { key: 'http.method', title: 'http.method', kind: 'string' },
];

export const MESSAGES = [
  'plain message',
  'comma, inside',
  'say "hello"',
  'first line\nsecond line',
  'ünïcödé façade — 日本語 🚀',
  '=1+2',
  'colour \u001b[31mred\u001b[0m',
  "it's <b>&amp;</b>",
];

/** Row `i` of the sample: some cells null, some keys missing, a json object, a dotted key. */
export function sampleRow(i: number): Record<string, unknown> {
  const row: Record<string, unknown> = {
    ts: BASE_TS + i * ROW_STEP,
    host: i % 7 === 3 ? null : `web-${i}`,
    message: MESSAGES[i % MESSAGES.length],
    status: i % 2 === 0 ? 200 : 503,
    fields: { n: i, tags: ['a', 'b'], nested: { ok: i % 2 === 0 } },
    'http.method': 'GET',
  };
  if (i % 5 !== 4) row.bytes = 1000 + i + 0.5;
  return row;
}

export async function* rowsOf(n: number, make = sampleRow): AsyncGenerator<Record<string, unknown>> {
  for (let i = 0; i < n; i++) yield make(i);
}

export function sampleDoc(timezone: string, extra: ExportSection[] = []): ExportDocument {
  return {
    title: 'Search export: errors',
    timezone,
    generatedAt: new Date(Date.UTC(2024, 6, 1, 8, 30, 0)),
    sections: [
      {
        kind: 'table',
        table: {
          title: 'Events',
          columns: COLUMNS,
          rows: rowsOf(ROW_COUNT),
          notes: ['query: severity:error', 'range: 2024-01-15 to 2024-08-01'],
        },
      },
      ...extra,
    ],
  };
}

// --- output capture ---

/** A Writable keeping every byte, for renderers to end. */
export class Sink extends Writable {
  readonly chunks: Buffer[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.chunks.push(chunk);
    done();
  }
  get buffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

// --- readers ---

/** RFC 4180: quoted fields may hold commas, doubled quotes and line breaks; records end in CRLF. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (c === '"') {
        quoted = false;
        i += 1;
      } else {
        field += c;
        i += 1;
      }
    } else if (c === '"') {
      quoted = true;
      i += 1;
    } else if (c === ',') {
      record.push(field);
      field = '';
      i += 1;
    } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else {
      field += c;
      i += 1;
    }
  }
  if (field !== '' || record.length > 0) records.push([...record, field]);
  return records;
}

const decodeXml = (s: string) =>
  s.replace(/&(lt|gt|quot|apos|amp|#\d+|#x[0-9a-f]+);/gi, (_, e: string) => {
    switch (e) {
      case 'lt':
        return '<';
      case 'gt':
        return '>';
      case 'quot':
        return '"';
      case 'apos':
        return "'";
      case 'amp':
        return '&';
      default:
        return String.fromCodePoint(e[1] === 'x' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)));
    }
  });

/** The text of every table cell in a WordprocessingML body, row by row (line breaks as \n). */
export function docxTableRows(documentXml: string): string[][] {
  const rows: string[][] = [];
  for (const tr of documentXml.match(/<w:tr[ >][\s\S]*?<\/w:tr>/g) ?? []) {
    const cells = (tr.match(/<w:tc>[\s\S]*?<\/w:tc>/g) ?? []).map((tc) =>
      decodeXml(
        (tc.match(/<w:t(?: [^>]*)?>[^<]*<\/w:t>|<w:br\/>/g) ?? [])
          .map((t) => (t === '<w:br/>' ? '\n' : t.replace(/<[^>]+>/g, '')))
          .join(''),
      ),
    );
    rows.push(cells);
  }
  return rows;
}

/** Every paragraph's text in a WordprocessingML body (line breaks as \n). */
export function docxParagraphs(documentXml: string): string[] {
  return (documentXml.match(/<w:p[ >][\s\S]*?<\/w:p>/g) ?? []).map((p) =>
    decodeXml(
      (p.match(/<w:t(?: [^>]*)?>[^<]*<\/w:t>|<w:br\/>/g) ?? [])
        .map((t) => (t === '<w:br/>' ? '\n' : t.replace(/<[^>]+>/g, '')))
        .join(''),
    ),
  );
}

/** Every line of every paragraph in a WordprocessingML body. */
export const docxLines = (documentXml: string): string[] =>
  docxParagraphs(documentXml).flatMap((p) => p.split('\n'));

/** The expected text of a sample cell as every tabular format shows it. */
export const fieldsText = (i: number) =>
  JSON.stringify({ n: i, tags: ['a', 'b'], nested: { ok: i % 2 === 0 } });

/** A PDF's page count, its text per page (items joined by newlines) and how many images each page paints. */
/**
 * A pdf's pages: the text of each, the images (XObjects) it paints, and its clips (each
 * vector chart is drawn inside one, svg-to-pdf.ts).
 */
export async function readPdf(
  buf: Buffer,
): Promise<{ pages: number; texts: string[]; images: number[]; clips: number[] }> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const pdf = await pdfjs.getDocument({ data: new Uint8Array(buf), verbosity: 0, isEvalSupported: false })
    .promise;
  const texts: string[] = [];
  const images: number[] = [];
  const clips: number[] = [];
  for (let p = 1; p <= pdf.numPages; p++) {
    const page = await pdf.getPage(p);
    const content = await page.getTextContent();
    texts.push(content.items.map((item) => ('str' in item ? item.str : '')).join('\n'));
    const ops = await page.getOperatorList();
    images.push(ops.fnArray.filter((op) => op === pdfjs.OPS.paintImageXObject).length);
    clips.push(ops.fnArray.filter((op) => op === pdfjs.OPS.clip).length);
  }
  await pdf.destroy();
  return { pages: pdf.numPages, texts, images, clips };
}

/** A workbook read back with exceljs's own reader. */
export async function loadXlsx(buf: Buffer): Promise<ExcelJS.Workbook> {
  const wb = new ExcelJS.Workbook();
  // exceljs declares its own `Buffer` (an ArrayBuffer); JSZip underneath takes either.
  const bytes = new ArrayBuffer(buf.byteLength);
  buf.copy(new Uint8Array(bytes));
  await wb.xlsx.load(bytes);
  return wb;
}
