import { readFileSync } from 'node:fs';
import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import {
  eventsJsonRenderer,
  eventsNdjsonRenderer,
  exportRowToEvent,
} from '../../../src/export/events-renderer.js';
import { EXPORT_FORMATS } from '../../../src/export/export-format.js';
import { createPdfRenderer } from '../../../src/export/pdf-renderer.js';
import { RENDERERS } from '../../../src/export/renderers.js';
import {
  BASE_TS,
  COLUMNS,
  docxLines,
  docxTableRows,
  fieldsText,
  loadXlsx,
  MESSAGES,
  parseCsv,
  ROW_COUNT,
  ROW_STEP,
  readPdf,
  Sink,
  sampleDoc,
  sampleRow,
} from './export-fixtures.js';

async function render(format: (typeof EXPORT_FORMATS)[number], timezone: string) {
  const out = new Sink();
  const result = await RENDERERS[format].render(sampleDoc(timezone), out);
  return { result, buffer: out.buffer };
}

// Written by hand, not by the code under test: row 0 is in winter, row 40 in summer.
const ROW0 = { UTC: '2024-01-15 12:00:00.123+00:00', 'Europe/Paris': '2024-01-15 13:00:00.123+01:00' };
const ROW40 = { UTC: '2024-06-23 12:00:00.123+00:00', 'Europe/Paris': '2024-06-23 14:00:00.123+02:00' };
const ZONES = ['UTC', 'Europe/Paris'] as const;

/** The text each tabular format shows for cell `key` of sample row `i` (times excepted). */
function expectedText(i: number, key: string): string {
  const row = sampleRow(i);
  const v = row[key];
  if (v === null || v === undefined) return '';
  if (key === 'fields') return fieldsText(i);
  return String(v);
}

describe('csv', () => {
  it.each(ZONES)('round-trips the sample through an RFC 4180 reader (%s)', async (tz) => {
    const { result, buffer } = await render('csv', tz);
    expect(result).toEqual({ rows: ROW_COUNT, truncated: false });
    expect([...buffer.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = buffer.toString('utf8').slice(1);
    expect(text.endsWith('\r\n')).toBe(true);
    const records = parseCsv(text);
    expect(records).toHaveLength(ROW_COUNT + 1);
    expect(records[0]).toEqual(COLUMNS.map((c) => c.title));
    expect(records[1]?.[0]).toBe(ROW0[tz]);
    expect(records[41]?.[0]).toBe(ROW40[tz]);
    for (let i = 0; i < ROW_COUNT; i++) {
      const record = records[i + 1];
      expect(record).toHaveLength(COLUMNS.length);
      for (const [c, col] of COLUMNS.entries()) {
        if (col.key === 'ts') continue;
        const want = expectedText(i, col.key);
        expect(record?.[c], `row ${i} ${col.key}`).toBe(want === '=1+2' ? "'=1+2" : want);
      }
    }
  });
});

describe('json', () => {
  it.each(ZONES)('streams valid JSON with RFC 3339 times in the zone (%s)', async (tz) => {
    const { result, buffer } = await render('json', tz);
    expect(result).toEqual({ rows: ROW_COUNT, truncated: false });
    const doc = JSON.parse(buffer.toString('utf8'));
    expect(doc.title).toBe('Search export: errors');
    expect(doc.timezone).toBe(tz);
    expect(doc.generated_at).toBe(
      tz === 'UTC' ? '2024-07-01T08:30:00.000+00:00' : '2024-07-01T10:30:00.000+02:00',
    );
    expect(doc.sections).toHaveLength(1);
    const [table] = doc.sections;
    expect(table.kind).toBe('table');
    expect(table.title).toBe('Events');
    expect(table.notes).toEqual(['query: severity:error', 'range: 2024-01-15 to 2024-08-01']);
    expect(table.columns).toEqual(COLUMNS);
    expect(table.rows).toHaveLength(ROW_COUNT);
    expect(table.rows[0].ts).toBe(ROW0[tz].replace(' ', 'T'));
    expect(table.rows[40].ts).toBe(ROW40[tz].replace(' ', 'T'));
    for (const [i, row] of table.rows.entries()) {
      const src = sampleRow(i);
      expect(Object.keys(row)).toEqual(COLUMNS.map((c) => c.key));
      expect(Date.parse(row.ts) / 1000).toBeCloseTo(BASE_TS + i * ROW_STEP, 3);
      expect(row.host).toBe(src.host);
      expect(row.message).toBe(src.message);
      expect(row.bytes).toBe(src.bytes ?? null);
      expect(row.fields).toEqual(src.fields);
      expect(row['http.method']).toBe('GET');
    }
  });
});

describe('ndjson', () => {
  it('streams one row a line with the cells of json', async () => {
    const { result, buffer } = await render('ndjson', 'Europe/Paris');
    expect(result).toEqual({ rows: ROW_COUNT, truncated: false });
    const text = buffer.toString('utf8');
    expect(text.endsWith('\n')).toBe(true);
    const rows = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(ROW_COUNT);
    expect(rows[0].ts).toBe(ROW0['Europe/Paris'].replace(' ', 'T'));
    expect(Object.keys(rows[3])).toEqual(COLUMNS.map((c) => c.key));
    expect(rows[3].message).toBe(sampleRow(3).message);
  });
});

describe('events (a Search as json or ndjson)', () => {
  const row = (i: number) => ({
    ev_id: `ev${i}`,
    ts: 1_700_000_000.5 + i,
    host: 'h',
    message: `m${i}`,
    // Extra fields, kept together by the Search export table.
    fields: i === 1 ? null : { 'http.status': 500 + i, host: 'shadowed', big: 12n },
  });
  async function* rows(n: number) {
    for (let i = 0; i < n; i++) yield row(i);
  }
  const doc = (n: number) => ({
    title: 'Search x',
    timezone: 'Europe/Paris',
    generatedAt: new Date(0),
    sections: [
      {
        kind: 'table' as const,
        table: {
          title: 'Search x',
          columns: [{ key: 'ts', title: 'time', kind: 'time' as const }],
          rows: rows(n),
        },
      },
    ],
  });

  it('spreads the extra fields again, columns winning, times as Unix seconds', () => {
    expect(exportRowToEvent(row(0))).toEqual({
      ev_id: 'ev0',
      ts: 1_700_000_000.5,
      host: 'h',
      message: 'm0',
      'http.status': 500,
      big: 12n,
    });
    expect(exportRowToEvent(row(1))).toEqual({ ev_id: 'ev1', ts: 1_700_000_001.5, host: 'h', message: 'm1' });
    expect(exportRowToEvent({ ts: 1, app: null })).toEqual({ ts: 1, app: null });
  });

  it('json is the array of events, ndjson one event a line', async () => {
    const out = new Sink();
    expect(await eventsJsonRenderer.render(doc(3), out)).toEqual({ rows: 3, truncated: false });
    const list = JSON.parse(out.buffer.toString());
    expect(list.map((e: { message: string }) => e.message)).toEqual(['m0', 'm1', 'm2']);
    expect(list[2]).toMatchObject({ 'http.status': 502, big: '12', host: 'h', ts: 1_700_000_002.5 });
    const nd = new Sink();
    await eventsNdjsonRenderer.render(doc(3), nd);
    const lines = nd.buffer.toString().trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual(list);
    expect(eventsNdjsonRenderer.mediaType).toBe('application/x-ndjson');
    const empty = new Sink();
    await eventsJsonRenderer.render(doc(0), empty);
    expect(JSON.parse(empty.buffer.toString())).toEqual([]);
  });
});

describe('xlsx', () => {
  it('escapes cell text once in the sheet XML', async () => {
    const { buffer } = await render('xlsx', 'UTC');
    const sheet = await (await JSZip.loadAsync(buffer)).file('xl/worksheets/sheet1.xml')!.async('string');
    expect(sheet).toContain('<v>it&apos;s &lt;b&gt;&amp;amp;&lt;/b&gt;</v>');
  });

  it.each(ZONES)('reads back with exceljs: header, dates in the zone, values (%s)', async (tz) => {
    const { result, buffer } = await render('xlsx', tz);
    expect(result).toEqual({ rows: ROW_COUNT, truncated: false });
    const wb = await loadXlsx(buffer);
    expect(wb.worksheets.map((ws) => ws.name)).toEqual(['Events']);
    const ws = wb.worksheets[0]!;
    expect(ws.getCell('A1').value).toBe('Events');
    expect(ws.getCell('A1').font?.bold).toBe(true);
    expect(ws.getCell('A2').value).toBe('query: severity:error');
    expect(String(ws.getCell('A4').value)).toContain(`Times in ${tz}.`);
    const headerRow = 6;
    const header = ws.getRow(headerRow);
    expect(COLUMNS.map((_, c) => header.getCell(c + 1).value)).toEqual(COLUMNS.map((c) => c.title));
    expect(header.getCell(1).font?.bold).toBe(true);
    expect(ws.views[0]).toMatchObject({ state: 'frozen', ySplit: headerRow });
    expect(ws.rowCount).toBe(headerRow + ROW_COUNT);

    // Spreadsheet dates hold the wall-clock time: read as UTC they show the zone's clock.
    const wall = (s: string) => new Date(`${s.slice(0, 23).replace(' ', 'T')}Z`);
    const first = ws.getRow(headerRow + 1).getCell(1);
    expect(first.value).toEqual(wall(ROW0[tz]));
    expect(first.numFmt).toBe('yyyy-mm-dd hh:mm:ss.000');
    expect(ws.getRow(headerRow + 41).getCell(1).value).toEqual(wall(ROW40[tz]));

    for (let i = 0; i < ROW_COUNT; i++) {
      const src = sampleRow(i);
      const row = ws.getRow(headerRow + 1 + i);
      expect(row.getCell(2).value ?? null).toBe(src.host);
      // exceljs drops the control characters XML cannot hold, and its reader decodes
      // entities twice (the file itself holds `&amp;amp;`, checked below).
      expect(row.getCell(3).value).toBe(
        (src.message as string).replaceAll('\u001b', '').replace('&amp;', '&'),
      );
      expect(row.getCell(4).value).toBe(src.status);
      expect(row.getCell(5).value ?? undefined).toBe(src.bytes);
      expect(row.getCell(6).value).toBe(fieldsText(i));
      expect(row.getCell(7).value).toBe('GET');
    }
  });
});

describe('docx', () => {
  it.each(ZONES)('holds title, notes and every cell in word/document.xml (%s)', async (tz) => {
    const { result, buffer } = await render('docx', tz);
    expect(result).toEqual({ rows: ROW_COUNT, truncated: false });
    const zip = await JSZip.loadAsync(buffer);
    const xml = await zip.file('word/document.xml')!.async('string');
    const paragraphs = docxLines(xml);
    expect(paragraphs).toContain('Search export: errors');
    expect(paragraphs).toContain('query: severity:error');
    expect(paragraphs.some((p) => p.includes(`Times in ${tz}.`))).toBe(true);
    expect(xml).toContain('w:orient="landscape"');
    expect(xml).toContain('<w:tblHeader');

    const rows = docxTableRows(xml);
    expect(rows).toHaveLength(ROW_COUNT + 1);
    expect(rows[0]).toEqual(COLUMNS.map((c) => c.title));
    expect(rows[1]?.[0]).toBe(ROW0[tz]);
    expect(rows[41]?.[0]).toBe(ROW40[tz]);
    for (let i = 0; i < ROW_COUNT; i++) {
      for (const [c, col] of COLUMNS.entries()) {
        if (col.key === 'ts') continue;
        // Word cannot hold the ESC character; the rest of the text stays.
        expect(rows[i + 1]?.[c], `row ${i} ${col.key}`).toBe(
          expectedText(i, col.key).replaceAll('\u001b', ''),
        );
      }
    }
  });
});

describe('pdf', () => {
  it.each(ZONES)('shows title, notes, header and cell values as text (%s)', async (tz) => {
    const { result, buffer } = await render('pdf', tz);
    expect(result).toEqual({ rows: ROW_COUNT, truncated: false });
    expect(buffer.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const { pages, texts } = await readPdf(buffer);
    const all = texts.join('\n');
    expect(all).toContain('Search export: errors');
    expect(all).toContain('query: severity:error');
    expect(all).toContain(`Times in ${tz}.`);
    expect(all).toContain(ROW0[tz]);
    expect(all).toContain(ROW40[tz]);
    // The header is repeated on top of every page.
    for (const text of texts) expect(text).toContain('http.method');
    expect(pages).toBeGreaterThan(1);
    for (let i = 0; i < ROW_COUNT; i++) {
      if (sampleRow(i).host !== null) expect(all).toContain(`web-${i}`);
    }
    for (const m of ['plain message', 'comma, inside', 'say "hello"', 'first line', 'second line', '=1+2']) {
      expect(all).toContain(m);
    }
    // Helvetica covers Windows-1252: accents and the dash stay, CJK and emoji become "?".
    expect(all).toContain('ünïcödé façade — ??? ?');
    expect(all).toContain('1048.5');
    expect(all).toContain(fieldsText(1));
  });
});

it('every format has a renderer with its media type and extension', () => {
  expect(Object.keys(RENDERERS).sort()).toEqual([...EXPORT_FORMATS].sort());
  expect(
    Object.fromEntries(EXPORT_FORMATS.map((f) => [f, [RENDERERS[f].ext, RENDERERS[f].mediaType]])),
  ).toEqual({
    csv: ['csv', 'text/csv; charset=utf-8'],
    json: ['json', 'application/json'],
    ndjson: ['ndjson', 'application/x-ndjson'],
    pdf: ['pdf', 'application/pdf'],
    xlsx: ['xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
    docx: ['docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  });
  expect(MESSAGES.length).toBeGreaterThan(0);
});

it('pdf with embedded TrueType fonts shows text beyond Windows-1252', async () => {
  // Liberation Sans (Latin, Greek, Cyrillic) ships with pdfjs-dist, so the test needs no system font.
  const font = (name: string) =>
    readFileSync(new URL(`../../../node_modules/pdfjs-dist/standard_fonts/${name}.ttf`, import.meta.url));
  const renderer = createPdfRenderer({
    fonts: { regular: font('LiberationSans-Regular'), bold: font('LiberationSans-Bold') },
  });
  const doc = sampleDoc('Europe/Paris');
  doc.title = 'Журнал ошибок';
  doc.sections = [
    {
      kind: 'table',
      table: {
        title: 'Ελληνικά',
        columns: [{ key: 'm', title: 'сообщение', kind: 'string' }],
        rows: (async function* () {
          yield { m: 'Привет, мир — ünïcödé' };
          yield { m: 'bell\u0007here' };
        })(),
      },
    },
  ];
  const out = new Sink();
  expect(await renderer.render(doc, out)).toEqual({ rows: 2, truncated: false });
  const text = (await readPdf(out.buffer)).texts.join('\n');
  for (const s of ['Журнал ошибок', 'Ελληνικά', 'сообщение', 'Привет, мир — ünïcödé', 'bell?here']) {
    expect(text).toContain(s);
  }
});
