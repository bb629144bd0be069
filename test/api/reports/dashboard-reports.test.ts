import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoGenerator } from '../../../src/cli/demo-generator.js';
import { BUILTIN_TEMPLATES } from '../../../src/features/dashboards/builtin-templates.js';
import type { WidgetDefinition } from '../../../src/features/dashboards/dashboard-model.js';
import { REPORT_MAX_PAGES } from '../../../src/features/reports/reports-service.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { docxParagraphs, docxTableRows, loadXlsx, readPdf } from '../../unit/export/export-fixtures.js';

/**
 * Reports of the built-in dashboards over a day of demo events, as a manager gets them:
 * what each widget shows (not every event), within a page cap, titled once, numbered,
 * in the report's zone.
 */
describe(`dashboard reports of the built-in templates on ${BACKEND}`, () => {
  let t: TestApp;
  const TZ = 'Asia/Kolkata';
  const boards = new Map<string, number>();

  beforeAll(async () => {
    t = await createTestApp();
    // What `logscope demo --backfill 3000 --rate 0` sends: a day of events, NDJSON over HTTP.
    const gen = demoGenerator(3);
    const now = Date.now();
    const lines = Array.from({ length: 3000 }, (_, i) =>
      JSON.stringify(gen.next(now - 86_340_000 + Math.floor((i / 3000) * 86_280_000))),
    );
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: lines.join('\n'),
    });
    expect(res.json()).toMatchObject({ accepted: 3000, rejected: 0 });
    for (const template of Object.keys(BUILTIN_TEMPLATES)) {
      const d = await t.as(t.adminToken, { method: 'POST', url: '/api/dashboards', payload: { template } });
      expect(d.statusCode, d.body).toBe(201);
      boards.set(template, d.json().id);
    }
  });
  afterAll(() => t.close());

  async function report(source: object, ftype: string): Promise<Buffer> {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/reports',
      payload: { ftype, timezone: TZ, source },
    });
    expect(res.statusCode, res.body).toBe(202);
    await t.rt.services.reports.idle();
    const r = (await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${res.json().id}` })).json();
    expect(r.status, r.error).toBe('READY');
    return (await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${r.id}/file` })).rawPayload;
  }
  const dashboard = (template: string, ftype: string) =>
    report({ kind: 'dashboard', dashboard_id: boards.get(template) }, ftype);

  const occurrences = (hay: string, needle: string) => hay.split(needle).length - 1;
  const TIME_CELL = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\+05:30$/;
  const SHARE_CELL = /^(\d+\.\d|< 0\.1) %$/;
  /** How many values a TopN widget's query has (its n, or fewer when fewer values occur), asked of the query API. */
  async function topnItems(w: WidgetDefinition): Promise<number> {
    let q = (await t.as(t.adminToken, { method: 'POST', url: '/api/query', payload: w.query })).json();
    for (let i = 0; i < 100 && (q.status === 'PENDING' || q.status === 'IN_PROGRESS'); i++) {
      await new Promise((done) => setTimeout(done, 50));
      q = (await t.as(t.adminToken, { method: 'GET', url: `/api/query/${q.query_id}` })).json();
    }
    expect(q.status, w.title).toBe('SUCCESS');
    return q.results.items.length;
  }
  /** The rows of a widget a table shows: its page size, or its n values. */
  async function expectedRows(w: WidgetDefinition): Promise<number> {
    const p = w.query.params as { n?: number; page_size?: number };
    if (w.query.type === 'Search') return p.page_size ?? 50;
    const items = await topnItems(w);
    expect(items, w.title).toBeLessThanOrEqual(p.n ?? 10);
    return items;
  }

  /** Each widget's part of the text: from its title to the next widget's. */
  function segments(all: string, widgets: readonly WidgetDefinition[]): Map<string, string> {
    const at = widgets.map((w) => all.indexOf(w.title));
    return new Map(widgets.map((w, i) => [w.title, all.slice(at[i], at[i + 1] ?? all.length)]));
  }

  it.each(Object.keys(BUILTIN_TEMPLATES))(
    '%s as pdf: a few numbered pages, each widget titled once with its query, range and rows',
    async (template) => {
      const def = BUILTIN_TEMPLATES[template]!;
      const { pages, texts, images, clips } = await readPdf(await dashboard(template, 'pdf'));
      // A day of events made 30 to 120 pages before (every event of a Search, 1,440 rows a Timeline).
      expect(pages).toBeLessThanOrEqual(8);
      expect(pages).toBeLessThanOrEqual(REPORT_MAX_PAGES);
      for (const [i, text] of texts.entries())
        expect(text.split('\n')).toContain(`Page ${i + 1} of ${pages}`);
      const all = texts.join('\n');
      for (const w of def.widgets) expect(occurrences(all, w.title), w.title).toBe(1);
      expect(all).not.toContain('Page limit reached');
      const charted = def.widgets.filter((w) =>
        ['bar', 'line', 'area', 'pie'].includes(w.visualization.kind),
      );
      // Each chart drawn as vector graphics (in a clip of its own), none as an image.
      expect(images.reduce((a, b) => a + b, 0)).toBe(0);
      expect(clips.reduce((a, b) => a + b, 0)).toBe(charted.length);
      const parts = segments(all, def.widgets);
      for (const w of def.widgets) {
        const part = parts.get(w.title) ?? '';
        expect(occurrences(part, 'Query: '), w.title).toBe(1);
        expect(occurrences(part, 'Time range: last 24 hours: '), w.title).toBe(1);
        expect(part, w.title).toContain(`(${TZ})`);
        const lines = part.split('\n');
        switch (w.query.type) {
          case 'Search':
            expect(lines.filter((l) => TIME_CELL.test(l))).toHaveLength(await expectedRows(w));
            expect(part).toMatch(/Showing the first 50 of [\d,]+ matching events/);
            break;
          case 'TopN':
            expect(
              lines.filter((l) => SHARE_CELL.test(l)),
              w.title,
            ).toHaveLength(await expectedRows(w));
            break;
          case 'Timeline': {
            // A chart and a summary, not a row per bucket.
            const times = lines.filter((l) => TIME_CELL.test(l));
            expect(times.length, w.title).toBeGreaterThanOrEqual(1);
            expect(times.length, w.title).toBeLessThanOrEqual(6);
            expect(part).toContain('all events');
            expect(part).toContain('The chart adds the minute buckets up to 15 min buckets.');
            break;
          }
          default:
            break;
        }
      }
    },
  );

  it('overview as docx: footer page fields, each widget titled once, the Search at its page size', async () => {
    const def = BUILTIN_TEMPLATES['builtin/overview']!;
    const zip = await JSZip.loadAsync(await dashboard('builtin/overview', 'docx'));
    const footers = Object.keys(zip.files).filter((f) => /^word\/footer\d*\.xml$/.test(f));
    const footer = (await Promise.all(footers.map((f) => zip.file(f)!.async('string')))).join('');
    expect(footer).toContain('PAGE');
    expect(footer).toContain('NUMPAGES');
    const xml = await zip.file('word/document.xml')!.async('string');
    const paragraphs = docxParagraphs(xml);
    for (const w of def.widgets)
      expect(
        paragraphs.filter((p) => p === w.title),
        w.title,
      ).toHaveLength(1);
    const tables = xml.match(/<w:tbl>[\s\S]*?<\/w:tbl>/g) ?? [];
    expect(tables).toHaveLength(def.widgets.length);
    const rows = tables.map((tbl) => docxTableRows(tbl).length - 1);
    // Event rate (a summary row), Top hosts, Top apps, Severity breakdown, Latest errors.
    expect(rows[0]).toBe(1);
    expect(rows[1]).toBe(await expectedRows(def.widgets[1]!));
    expect(rows[4]).toBe(50);
    expect(
      docxTableRows(tables[1] ?? '')
        .flat()
        .some((c) => SHARE_CELL.test(c)),
    ).toBe(true);
  });

  it('overview as xlsx: a sheet per widget named with its range, printed landscape on one page width, header repeated', async () => {
    const def = BUILTIN_TEMPLATES['builtin/overview']!;
    const buf = await dashboard('builtin/overview', 'xlsx');
    const zip = await JSZip.loadAsync(buf);
    const workbook = await zip.file('xl/workbook.xml')!.async('string');
    const wb = await loadXlsx(buf);
    expect(wb.worksheets.map((ws) => ws.name)).toEqual(def.widgets.map((w) => `${w.title} (24h)`));
    for (const [i, ws] of wb.worksheets.entries()) {
      const w = def.widgets[i]!;
      const sheet = await zip.file(`xl/worksheets/sheet${i + 1}.xml`)!.async('string');
      const setup = /<pageSetup [^>]*\/>/.exec(sheet)?.[0] ?? '';
      expect(setup, w.title).toContain('orientation="landscape"');
      expect(setup, w.title).toContain('fitToWidth="1"');
      expect(setup, w.title).toContain('fitToHeight="0"');
      expect(sheet).toContain('<pageSetUpPr fitToPage="1"/>');
      // The header row: the first row with a bold, shaded cell under the preface.
      let header = 0;
      ws.eachRow((row, n) => {
        const fill = row.getCell(1).fill;
        if (!header && fill?.type === 'pattern' && fill.pattern === 'solid') header = n;
      });
      expect(header, w.title).toBeGreaterThan(1);
      expect(ws.pageSetup.printTitlesRow, w.title).toBe(`${header}:${header}`);
      expect(workbook).toContain(`&apos;${ws.name}&apos;!$${header}:$${header}`);
      let rows = 0;
      for (let r = header + 1; r <= ws.rowCount && ws.getRow(r).getCell(1).value !== null; r++) rows++;
      if (w.query.type === 'Search' || w.query.type === 'TopN')
        expect(rows, w.title).toBe(await expectedRows(w));
      if (w.query.type === 'TopN') {
        const share = ws.getRow(header + 1).getCell(3);
        expect(share.numFmt).toBe('0.0 %');
        expect(Number(share.value)).toBeLessThan(1);
      }
    }
  });

  it('a query report of a Timeline holds every bucket in csv, a chart and a summary in pdf', async () => {
    const query = { type: 'Timeline', params: { time_range: { preset: 'last_24_hours' }, interval: '1h' } };
    const csv = (await report({ kind: 'query', query }, 'csv')).toString('utf8').trim().split('\r\n');
    // The header and a row per hour (25 when the day does not start on the hour).
    expect(csv.length).toBeGreaterThanOrEqual(25);
    const pdf = await report({ kind: 'query', query }, 'pdf');
    const { texts, images } = await readPdf(pdf);
    // The chart is vector graphics with real text (issue 29: it was a blurry PNG whose
    // labels could be neither searched nor selected): no image, its axis labels as text.
    expect(images.reduce((a, b) => a + b, 0)).toBe(0);
    const lines = texts.join('\n').split('\n');
    expect(lines.some((l) => /^events per/.test(l))).toBe(true);
    expect(lines.filter((l) => /^\d{2}:00$/.test(l)).length).toBeGreaterThanOrEqual(3);
    // And as DOCX: an SVG part beside its PNG fallback, the labels in the SVG as text.
    const docx = await JSZip.loadAsync(await report({ kind: 'query', query }, 'docx'));
    const media = Object.keys(docx.files).filter((f) => f.startsWith('word/media/'));
    const svgName = media.find((f) => f.endsWith('.svg'));
    expect(svgName, media.join()).toBeDefined();
    expect(media.some((f) => f.endsWith('.png'))).toBe(true);
    expect(await docx.file(svgName!)!.async('string')).toMatch(/<text[^>]*>events per/);
    expect(lines).toContain('all events');
    expect(lines.filter((l) => TIME_CELL.test(l))).toHaveLength(1);
  });

  it('a query report longer than the page cap stops there, saying what it left out', async () => {
    const buf = await report(
      { kind: 'query', query: { type: 'Search', params: { time_range: { preset: 'last_24_hours' } } } },
      'pdf',
    );
    const { pages, texts } = await readPdf(buf);
    expect(pages).toBe(REPORT_MAX_PAGES);
    const last = (texts.at(-1) ?? '').replace(/\n/g, ' ');
    expect(last).toContain(`Page limit reached: this report stops at ${REPORT_MAX_PAGES} pages.`);
    expect(last).toMatch(/the rest of the table above \(its first [\d,]+ rows are shown\)/);
    expect(last).toContain(`Page ${REPORT_MAX_PAGES} of ${REPORT_MAX_PAGES}`);
  });
});

describe(`the report page cap is a setting (reportMaxPages) on ${BACKEND}`, () => {
  it('stops a pdf at LOGSCOPE_REPORT_MAX_PAGES pages, saying so', async () => {
    const t = await createTestApp({ LOGSCOPE_REPORT_MAX_PAGES: '3' });
    try {
      const lines = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ message: `line ${i}` }));
      await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/ingest',
        headers: { 'content-type': 'application/x-ndjson' },
        payload: lines.join('\n'),
      });
      const res = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/reports',
        payload: { ftype: 'pdf', source: { kind: 'query', query: { type: 'Search', params: {} } } },
      });
      expect(res.statusCode, res.body).toBe(202);
      await t.rt.services.reports.idle();
      const file = await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${res.json().id}/file` });
      const { pages, texts } = await readPdf(file.rawPayload);
      expect(pages).toBe(3);
      expect((texts.at(-1) ?? '').replace(/\n/g, ' ')).toContain(
        'Page limit reached: this report stops at 3 pages.',
      );
    } finally {
      await t.close();
    }
  });
});
