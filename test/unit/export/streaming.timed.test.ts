import { Writable } from 'node:stream';
import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import { createDocxRenderer } from '../../../src/export/docx-renderer.js';
import { EXPORT_FORMATS, type ExportFormat } from '../../../src/export/export-format.js';
import { createPdfRenderer } from '../../../src/export/pdf-renderer.js';
import type { ExportDocument, ExportTable } from '../../../src/export/renderer.js';
import { RENDERERS } from '../../../src/export/renderers.js';
import { createXlsxRenderer } from '../../../src/export/xlsx-renderer.js';
import {
  COLUMNS,
  docxParagraphs,
  docxTableRows,
  loadXlsx,
  parseCsv,
  readPdf,
  Sink,
  sampleRow,
} from './export-fixtures.js';

/** A row source that records how far it was read and whether it was closed. */
function trackedRows(n: number, make: (i: number) => Record<string, unknown> = sampleRow, failAt?: number) {
  const state = { read: 0, closed: false };
  async function* rows() {
    try {
      for (let i = 0; i < n; i++) {
        if (i === failAt) throw new Error('store went away');
        state.read += 1;
        yield make(i);
      }
    } finally {
      state.closed = true;
    }
  }
  return { state, rows: rows() };
}

const docOf = (...tables: ExportTable[]): ExportDocument => ({
  title: 'Export',
  timezone: 'UTC',
  generatedAt: new Date(Date.UTC(2024, 0, 1)),
  sections: tables.map((table) => ({ kind: 'table', table })),
});

/** Counts bytes, optionally taking its time over each chunk like a slow client. */
class Counter extends Writable {
  bytes = 0;
  maxBuffered = 0;
  constructor(private readonly slow = false) {
    super({ highWaterMark: 16 * 1024 });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.bytes += chunk.length;
    this.maxBuffered = Math.max(this.maxBuffered, this.writableLength);
    if (this.slow) setImmediate(done);
    else done();
  }
}

describe('streaming', () => {
  it('csv streams 200,000 rows without holding them', async () => {
    const message = 'x'.repeat(400);
    const heapBefore = process.memoryUsage().heapUsed;
    let heapPeak = heapBefore;
    async function* rows() {
      for (let i = 0; i < 200_000; i++) {
        if (i % 10_000 === 0) heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
        yield { ...sampleRow(i % 50), message: `${i} ${message}` };
      }
    }
    const out = new Counter();
    const started = Date.now();
    const result = await RENDERERS.csv.render(
      docOf({ title: 'Events', columns: COLUMNS, rows: rows() }),
      out,
    );
    expect(result).toEqual({ rows: 200_000, truncated: false });
    // Held in memory, the rows' text alone would be some 160 MB (UTF-16).
    expect(out.bytes).toBeGreaterThan(80_000_000);
    expect(heapPeak - heapBefore).toBeLessThan(100 * 1024 * 1024);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it.each(['csv', 'json', 'xlsx'] as const)(
    '%s waits for a slow client instead of buffering',
    async (format) => {
      const out = new Counter(true);
      const { rows } = trackedRows(20_000, (i) => ({
        ...sampleRow(i % 50),
        message: `row ${i} ${'y'.repeat(200)}`,
      }));
      const result = await RENDERERS[format].render(docOf({ title: 'Events', columns: COLUMNS, rows }), out);
      expect(result.rows).toBe(20_000);
      // Far below the several megabytes the file takes.
      expect(out.maxBuffered).toBeLessThan(1024 * 1024);
    },
  );
});

describe('row caps', () => {
  it('docx stops at its cap with a visible note and closes the source', async () => {
    const { state, rows } = trackedRows(60);
    const out = new Sink();
    const result = await createDocxRenderer({ maxRows: 25 }).render(
      docOf({ title: 'Events', columns: COLUMNS, rows }),
      out,
    );
    expect(result).toEqual({ rows: 25, truncated: true });
    expect(state).toEqual({ read: 26, closed: true });
    const xml = await (await JSZip.loadAsync(out.buffer)).file('word/document.xml')!.async('string');
    expect(docxParagraphs(xml)).toContain('…truncated at 25 rows');
    expect(docxTableRows(xml)).toHaveLength(26);
  });

  it('pdf stops at its cap with a visible note', async () => {
    const { state, rows } = trackedRows(60);
    const out = new Sink();
    const result = await createPdfRenderer({ maxRows: 30 }).render(
      docOf({ title: 'Events', columns: COLUMNS, rows }),
      out,
    );
    expect(result).toEqual({ rows: 30, truncated: true });
    expect(state.closed).toBe(true);
    const text = (await readPdf(out.buffer)).texts.join('\n');
    expect(text).toContain('…truncated at 30 rows');
    expect(text).toContain('web-29');
    expect(text).not.toContain('web-30');
  });

  it('xlsx carries a table past the sheet limit onto further sheets, header repeated', async () => {
    const { rows } = trackedRows(60);
    const out = new Sink();
    const result = await createXlsxRenderer({ maxSheetRows: 30 }).render(
      docOf({ title: 'Events', columns: COLUMNS, rows }),
      out,
    );
    expect(result).toEqual({ rows: 60, truncated: false });
    const wb = await loadXlsx(out.buffer);
    expect(wb.worksheets.map((ws) => ws.name)).toEqual(['Events', 'Events (2)', 'Events (3)']);
    const hosts: unknown[] = [];
    for (const ws of wb.worksheets) {
      expect(ws.rowCount).toBeLessThanOrEqual(30);
      // Preface of three lines and a blank row (no notes here), then the header.
      expect(ws.getRow(4).getCell(1).value).toBe('time');
      expect(ws.autoFilter).toEqual(`A4:G${ws.rowCount}`);
      for (let r = 5; r <= ws.rowCount; r++) hosts.push(ws.getRow(r).getCell(2).value ?? null);
    }
    expect(hosts).toEqual(Array.from({ length: 60 }, (_, i) => sampleRow(i).host));
  });
});

describe('failures', () => {
  it.each(EXPORT_FORMATS)(
    '%s: a failing source rejects the render and destroys the output',
    async (format) => {
      const { state, rows } = trackedRows(100, sampleRow, 10);
      const out = new Sink();
      await expect(
        RENDERERS[format].render(docOf({ title: 'Events', columns: COLUMNS, rows }), out),
      ).rejects.toThrow('store went away');
      expect(out.destroyed).toBe(true);
      expect(state.closed).toBe(true);
    },
  );

  it.each(['csv', 'json', 'ndjson', 'xlsx', 'pdf'] as const)(
    '%s: a client that goes away stops the export and closes the source',
    async (format) => {
      const { state, rows } = trackedRows(1_000_000, (i) => ({
        ...sampleRow(i % 50),
        message: 'z'.repeat(300),
      }));
      const out = new Counter(true);
      const gone = setTimeout(() => out.destroy(), 50);
      await expect(
        RENDERERS[format].render(docOf({ title: 'Events', columns: COLUMNS, rows }), out),
      ).rejects.toThrow();
      clearTimeout(gone);
      expect(state.closed).toBe(true);
      expect(state.read).toBeLessThan(1_000_000);
    },
  );
});

describe('document shapes', () => {
  it.each(EXPORT_FORMATS)(
    '%s: a document without sections is still a valid file',
    async (format: ExportFormat) => {
      const out = new Sink();
      const result = await RENDERERS[format].render({ ...docOf(), title: 'Nothing' }, out);
      expect(result).toEqual({ rows: 0, truncated: false });
      const buf = out.buffer;
      switch (format) {
        case 'csv':
          expect(buf.toString().replace('\uFEFF', '')).toBe('');
          break;
        case 'json':
          expect(JSON.parse(buf.toString()).sections).toEqual([]);
          break;
        case 'xlsx':
          expect((await loadXlsx(buf)).worksheets.map((ws) => ws.name)).toEqual(['Nothing']);
          break;
        case 'docx':
          expect(
            docxParagraphs(await (await JSZip.loadAsync(buf)).file('word/document.xml')!.async('string')),
          ).toContain('Nothing');
          break;
        case 'pdf':
          expect((await readPdf(buf)).texts.join('\n')).toContain('Nothing');
          break;
        case 'ndjson':
          expect(buf.toString()).toBe('');
          break;
        default:
          format satisfies never;
      }
    },
  );

  it('csv writes several tables one after another, each under its title', async () => {
    const out = new Sink();
    const small = (title: string, n: number): ExportTable => ({
      title,
      columns: [
        { key: 'value', title: 'value', kind: 'string' },
        { key: 'count', title: 'count', kind: 'number' },
      ],
      rows: trackedRows(n, (i) => ({ value: `${title}-${i}`, count: i })).rows,
    });
    const result = await RENDERERS.csv.render(docOf(small('hosts', 2), small('apps', 1)), out);
    expect(result.rows).toBe(3);
    expect(parseCsv(out.buffer.toString().slice(1))).toEqual([
      ['hosts'],
      ['value', 'count'],
      ['hosts-0', '0'],
      ['hosts-1', '1'],
      [''],
      ['apps'],
      ['value', 'count'],
      ['apps-0', '0'],
    ]);
  });

  it('every format shows an empty table with its header', async () => {
    for (const format of EXPORT_FORMATS) {
      const out = new Sink();
      const { rows } = trackedRows(0);
      const result = await RENDERERS[format].render(docOf({ title: 'Empty', columns: COLUMNS, rows }), out);
      expect(result, format).toEqual({ rows: 0, truncated: false });
    }
  });
});
