import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import { percentText } from '../../../src/export/cells.js';
import { type ChartData, chartSpec, chartSvg } from '../../../src/export/charts.js';
import { createDocxRenderer } from '../../../src/export/docx-renderer.js';
import { createPdfRenderer } from '../../../src/export/pdf-renderer.js';
import type { ExportColumn, ExportDocument, ExportTable } from '../../../src/export/renderer.js';
import { RENDERERS } from '../../../src/export/renderers.js';
import { sheetName } from '../../../src/export/xlsx-renderer.js';
import { fixedColors, SEVERITY_COLORS } from '../../../src/shared/chart-colors.js';
import { docxParagraphs, docxTableRows, loadXlsx, makePng, readPdf, Sink } from './export-fixtures.js';

/** How often `needle` occurs in `hay`. */
const occurrences = (hay: string, needle: string) => hay.split(needle).length - 1;

const COLUMNS: ExportColumn[] = [
  { key: 'ts', title: 'time', kind: 'time' },
  { key: 'host', title: 'host', kind: 'string' },
  { key: 'message', title: 'message', kind: 'string' },
  { key: 'count', title: 'events', kind: 'number' },
  { key: 'share', title: 'share', kind: 'percent' },
];
const T0 = Date.UTC(2026, 10, 20, 12) / 1000;

/** A source of `n` rows that records whether it was closed. */
function rowsOf(n: number, state = { closed: false }) {
  return (async function* () {
    try {
      for (let i = 0; i < n; i++)
        yield {
          ts: T0 + i * 60,
          host: `host-${i}`,
          message: `message number ${i} ${'x'.repeat(i % 3 === 0 ? 80 : 10)}`,
          count: 1000 - i,
          share: (1000 - i) / 2_000_000,
        };
    } finally {
      state.closed = true;
    }
  })();
}

const table = (title: string, n: number, extra: Partial<ExportTable> = {}): ExportTable => ({
  title,
  columns: COLUMNS,
  rows: rowsOf(n),
  notes: ['Query: severity:error', 'Time range: last 24 hours'],
  ...extra,
});

const docOf = (tables: ExportTable[], maxPages?: number): ExportDocument => ({
  title: 'Nightly report',
  timezone: 'Asia/Kolkata',
  generatedAt: new Date(Date.UTC(2026, 10, 21, 6)),
  sections: tables.map((t) => ({ kind: 'table' as const, table: t })),
  ...(maxPages === undefined ? {} : { maxPages }),
});

async function render(format: 'pdf' | 'docx' | 'xlsx', doc: ExportDocument) {
  const out = new Sink();
  const result = await RENDERERS[format].render(doc, out);
  return { result, buffer: out.buffer };
}

describe('shares', () => {
  it('are percentages with one decimal', () => {
    expect(percentText(0.4234)).toBe('42.3 %');
    expect(percentText(1)).toBe('100.0 %');
    expect(percentText(0)).toBe('0.0 %');
    expect(percentText(0.0004)).toBe('< 0.1 %');
  });
});

describe('pdf reports', () => {
  it('states each title once, chart included; continuation pages say "(continued)" under the header', async () => {
    const chart = { png: makePng(640, 260), width: 640, height: 260 };
    const doc = docOf([
      table('Latest errors', 120, { chart, footnotes: ['Showing 120 of 5,000.'] }),
      table('Top hosts', 10),
    ]);
    const { result, buffer } = await render('pdf', doc);
    expect(result).toEqual({ rows: 130, truncated: false });
    const { pages, texts, images } = await readPdf(buffer);
    const all = texts.join('\n');
    expect(occurrences(all, 'Latest errors')).toBe(1);
    expect(occurrences(all, 'Top hosts')).toBe(1);
    expect(occurrences(all, 'Query: severity:error')).toBe(2);
    expect(images.reduce((a, b) => a + b, 0)).toBe(1);
    expect(all).toContain('Showing 120 of 5,000.');
    // Shares as percentages, times in the document's zone.
    expect(all).toContain('0.1 %');
    expect(all).toContain('2026-11-20 17:30:00.000+05:30');
    expect(pages).toBeGreaterThan(2);
    for (let p = 1; p < pages; p++) {
      if (texts[p]?.includes('host-') && !texts[p]?.includes('Top hosts')) {
        expect(texts[p]).toContain('(continued)');
        expect(texts[p]).toContain('message');
      }
    }
  });

  it('numbers every page: "Page N of M" with a page cap, "Page N" while streaming without one', async () => {
    for (const maxPages of [50, undefined]) {
      const { texts, pages } = await readPdf(
        (await render('pdf', docOf([table('Events', 150)], maxPages))).buffer,
      );
      expect(pages).toBeGreaterThan(1);
      for (const [i, text] of texts.entries()) {
        const label = maxPages ? `Page ${i + 1} of ${pages}` : `Page ${i + 1}`;
        expect(text.split('\n')).toContain(label);
        expect(text).toContain('Nightly report');
      }
    }
  });

  it('stops at the page cap with a note saying what it left out, closing the row source', async () => {
    const state = { closed: false };
    const doc = docOf([
      { ...table('Everything', 0), rows: rowsOf(5_000, state) },
      table('Top hosts', 10),
      table('Top apps', 10),
    ]);
    doc.maxPages = 3;
    const { result, buffer } = await render('pdf', doc);
    expect(result.truncated).toBe(true);
    expect(result.rows).toBeGreaterThan(50);
    expect(result.rows).toBeLessThan(500);
    expect(state.closed).toBe(true);
    const { pages, texts } = await readPdf(buffer);
    expect(pages).toBe(3);
    const last = (texts[2] ?? '').replace(/\n/g, ' ');
    expect(last).toContain('Page limit reached: this report stops at 3 pages.');
    expect(last).toContain(`the rest of the table above (its first ${result.rows} rows are shown)`);
    expect(last).toMatch(/2 sections: “Top hosts”, “Top apps”/);
    expect(texts[2]).toContain('Page 3 of 3');
  });

  it('a renderer option caps documents that do not set their own', async () => {
    const out = new Sink();
    const result = await createPdfRenderer({ maxPages: 2 }).render(docOf([table('Events', 3_000)]), out);
    expect(result.truncated).toBe(true);
    expect((await readPdf(out.buffer)).pages).toBe(2);
  });
});

describe('docx reports', () => {
  it('has "Page N of M" fields in the footer, each title once, the chart under the notes, numbers right-aligned', async () => {
    const chart = { png: makePng(640, 260), width: 640, height: 260, description: 'events per hour' };
    const { buffer } = await render(
      'docx',
      docOf([table('Latest errors', 30, { chart }), table('Top hosts', 10)], 50),
    );
    const zip = await JSZip.loadAsync(buffer);
    const footers = Object.keys(zip.files).filter((f) => /^word\/footer\d*\.xml$/.test(f));
    expect(footers.length).toBeGreaterThan(0);
    const footer = await zip.file(footers[0] as string)!.async('string');
    expect(footer).toMatch(/PAGE/);
    expect(footer).toMatch(/NUMPAGES/);
    expect(footer).toContain('Nightly report');
    const xml = await zip.file('word/document.xml')!.async('string');
    const paragraphs = docxParagraphs(xml);
    expect(paragraphs.filter((p) => p === 'Latest errors')).toHaveLength(1);
    expect(paragraphs.filter((p) => p.includes('Top hosts'))).toHaveLength(1);
    expect(xml.match(/<w:drawing>/g)).toHaveLength(1);
    expect(xml.indexOf('Query: severity:error')).toBeLessThan(xml.indexOf('<w:drawing>'));
    expect(xml.indexOf('<w:drawing>')).toBeLessThan(xml.indexOf('<w:tbl>'));
    expect(docxTableRows(xml).flat()).toContain('0.1 %');
    expect(xml).toContain('<w:jc w:val="right"/>');
  });

  it('stops at its estimate of the page cap, saying what it left out', async () => {
    const doc = docOf([table('Everything', 2_000), table('Top hosts', 10)], 3);
    const { result, buffer } = await render('docx', doc);
    expect(result.truncated).toBe(true);
    const xml = await (await JSZip.loadAsync(buffer)).file('word/document.xml')!.async('string');
    const rows = docxTableRows(xml).length - 1;
    expect(rows).toBe(result.rows);
    // Three landscape pages hold some 40 one-line rows each.
    expect(rows).toBeGreaterThan(40);
    expect(rows).toBeLessThan(150);
    const text = docxParagraphs(xml).join('\n');
    expect(text).toContain('Page limit reached: this report stops at about 3 pages.');
    expect(text).toContain('the section “Top hosts”');
  });

  it('without a cap keeps every row', async () => {
    const out = new Sink();
    const result = await createDocxRenderer().render(docOf([table('Everything', 600)]), out);
    expect(result).toEqual({ rows: 600, truncated: false });
  });
});

describe('xlsx reports', () => {
  const read = async (buffer: Buffer, part: string) =>
    (await JSZip.loadAsync(buffer)).file(part)!.async('string');

  it('prints landscape, fitted to the page width, the header row repeated on every page', async () => {
    const doc = docOf([
      table('Latest errors', 40, { period: '24h' }),
      table('Top hosts', 10, { period: '24h' }),
    ]);
    const { buffer } = await render('xlsx', doc);
    const sheet = await read(buffer, 'xl/worksheets/sheet1.xml');
    expect(sheet).toMatch(/<sheetPr[^>]*>\s*<pageSetUpPr fitToPage="1"\/>/);
    const setup = /<pageSetup [^>]*\/>/.exec(sheet)?.[0] ?? '';
    expect(setup).toContain('orientation="landscape"');
    expect(setup).toContain('fitToWidth="1"');
    expect(setup).toContain('fitToHeight="0"');
    expect(setup).toContain('paperSize="9"');
    expect(sheet).toContain('Page &amp;P of &amp;N');
    const workbook = await read(buffer, 'xl/workbook.xml');
    // Preface: title, two notes, the zone line, an empty row; the header is row 6.
    expect(workbook).toContain(
      `<definedName name="_xlnm.Print_Titles" localSheetId="0">&apos;Latest errors (24h)&apos;!$6:$6</definedName>`,
    );
    expect(workbook).toContain(`&apos;Top hosts (24h)&apos;!$6:$6`);
    const wb = await loadXlsx(buffer);
    expect(wb.worksheets.map((ws) => ws.name)).toEqual(['Latest errors (24h)', 'Top hosts (24h)']);
    const ws = wb.worksheets[0]!;
    expect(ws.getRow(6).getCell(1).value).toBe('time');
    expect(ws.pageSetup.printTitlesRow).toBe('6:6');
    // Shares are numbers shown with one decimal.
    expect(ws.getRow(7).getCell(5).value).toBeCloseTo(1000 / 2_000_000);
    expect(ws.getRow(7).getCell(5).numFmt).toBe('0.0 %');
  });

  it('sizes columns from their content', async () => {
    const { buffer } = await render('xlsx', docOf([table('Events', 40)]));
    const ws = (await loadXlsx(buffer)).worksheets[0]!;
    const width = (i: number) => ws.getColumn(i).width ?? 0;
    // time, host-NN, message (up to 100 characters), events (4 digits), share
    expect(width(1)).toBeGreaterThanOrEqual(23);
    expect(width(2)).toBeGreaterThanOrEqual(8);
    expect(width(2)).toBeLessThan(14);
    expect(width(3)).toBeGreaterThan(50);
    expect(width(3)).toBeLessThanOrEqual(80);
    expect(width(4)).toBeLessThan(12);
  });

  it('puts a chart under its table on the same sheet', async () => {
    const chart = { png: makePng(640, 260), width: 640, height: 260 };
    const { buffer } = await render('xlsx', docOf([table('Top hosts', 10, { chart })]));
    const ws = (await loadXlsx(buffer)).worksheets[0]!;
    const images = ws.getImages();
    expect(images).toHaveLength(1);
    // Preface of five rows, header on row 6, ten rows, an empty row: the chart starts on row 18 (17 from 0).
    expect(images[0]?.range.tl.nativeRow).toBe(17);
  });

  it('names sheets after the title and the period, within 31 characters, unique, without []:*?/\\ or quotes', () => {
    const used = new Set<string>();
    expect(sheetName('Top hosts', used, '24h')).toBe('Top hosts (24h)');
    expect(sheetName('Top hosts', used, '24h')).toBe('Top hosts (24h) (2)');
    const long = sheetName('Failed logins by source IP address and port', used, '7d');
    expect(long).toHaveLength(31);
    expect(long.endsWith(' (7d)')).toBe(true);
    expect(sheetName("Bob's [errors]: a/b?", used, '11-20 17.30-18.30')).toBe(
      'Bob’s error (11-20 17.30-18.30)',
    );
    for (const name of used) expect(name.length).toBeLessThanOrEqual(31);
  });
});

describe('charts', () => {
  const hours = (tz: string): ChartData => ({
    kind: 'line',
    title: 'Event rate',
    temporal: true,
    timezone: tz,
    step: 3600,
    // 2026-11-20 00:00 to 06:00 UTC: 05:30 to 11:30 in Kolkata.
    points: Array.from({ length: 6 }, (_, i) => ({ x: Date.UTC(2026, 10, 20, i) / 1000, y: 10 + i })),
  });
  const labels = async (c: ChartData) =>
    [...(await chartSvg(c)).matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1] ?? '');

  it('label the time axis in the report zone, 24-hour', async () => {
    const kolkata = await labels(hours('Asia/Kolkata'));
    const times = kolkata.filter((l) => /^\d\d:\d\d$/.test(l));
    expect(times.length).toBeGreaterThan(2);
    // Wall-clock hours of Kolkata (UTC+05:30), not of UTC or of the process.
    expect(times).toContain('08:00');
    expect(times).toContain('11:00');
    expect(times).not.toContain('02:00');
    expect(kolkata).toContain('Time (Asia/Kolkata, UTC+05:30)');
    expect(kolkata.some((l) => /AM|PM/.test(l))).toBe(false);
    const utc = (await labels(hours('UTC'))).filter((l) => /^\d\d:\d\d$/.test(l));
    expect(utc).toContain('02:00');
    expect(utc).not.toContain('08:00');
  });

  it('draw lines straight between buckets, never smoothed', () => {
    const spec = chartSpec(hours('UTC')) as { mark?: { interpolate?: string } };
    expect(spec.mark?.interpolate).toBe('linear');
    const area = chartSpec({ ...hours('UTC'), kind: 'area' }) as { mark?: { interpolate?: string } };
    expect(area.mark?.interpolate).toBe('linear');
  });

  it('colour severities by what they mean', async () => {
    expect(fixedColors(['info', 'error', 'critical', 'warning', 'debug', 'notice', 'other'])).toEqual([
      SEVERITY_COLORS.info,
      SEVERITY_COLORS.error,
      SEVERITY_COLORS.critical,
      SEVERITY_COLORS.warning,
      SEVERITY_COLORS.debug,
      SEVERITY_COLORS.notice,
      expect.any(String),
    ]);
    expect(fixedColors(['web-1', 'web-2'])).toBeNull();
    const [crit, err, warn, notice, info, debug] = [
      'critical',
      'error',
      'warning',
      'notice',
      'info',
      'debug',
    ].map((s) => SEVERITY_COLORS[s] as string);
    const rgb = (hex: string) =>
      [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
    // Red, dark orange, amber; blue; greys, debug lighter than info.
    expect(rgb(crit as string)[0]).toBeGreaterThan(150);
    expect(rgb(crit as string)[1]).toBeLessThan(80);
    expect(rgb(err as string)[0]).toBeGreaterThan(200);
    expect(rgb(err as string)[1]).toBeLessThan(rgb(warn as string)[1]);
    expect(rgb(notice as string)[2]).toBeGreaterThan(rgb(notice as string)[0]);
    const grey = (c: [number, number, number]) => Math.max(...c) - Math.min(...c) < 10;
    expect(grey(rgb(info as string))).toBe(true);
    expect(grey(rgb(debug as string))).toBe(true);
    expect(rgb(debug as string)[0]).toBeGreaterThan(rgb(info as string)[0]);
    const pie: ChartData = {
      kind: 'pie',
      title: 'Severity',
      temporal: false,
      points: [
        { x: 'info', y: 700 },
        { x: 'error', y: 200 },
        { x: 'critical', y: 100 },
      ],
    };
    const svg = await chartSvg(pie);
    for (const s of ['info', 'error', 'critical']) expect(svg).toContain(`fill="${SEVERITY_COLORS[s]}"`);
    // Shares with one decimal, in the legend and on the slices.
    expect(svg).toContain('info  70.0 %');
    expect(svg).toContain('>20.0 %<');
  });

  it('label bars with their count and share', async () => {
    const svg = await chartSvg({
      kind: 'bar',
      title: 'Top hosts',
      temporal: false,
      points: [
        { x: 'web-1', y: 4230, share: 0.423 },
        { x: 'web-2', y: 1000, share: 0.1 },
      ],
    });
    expect(svg).toContain('4,230 (42.3 %)');
    expect(svg).toContain('1,000 (10.0 %)');
  });
});
