import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { demoGenerator } from '../../../src/cli/demo-generator.js';
import { notFound } from '../../../src/errors/errors.js';
import { BUILTIN_TEMPLATES } from '../../../src/features/dashboards/builtin-templates.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { reportFileKept, storedReportFiles } from '../../helpers/report-files.js';
import { HOUR, seedWeb } from '../../helpers/seed.js';
import { docxParagraphs, docxTableRows, loadXlsx, readPdf } from '../../unit/export/export-fixtures.js';

describe(`reports on ${BACKEND}`, () => {
  let t: TestApp;
  let bob: { id: number; token: string };
  beforeAll(async () => {
    t = await createTestApp();
    await seedWeb(t);
    bob = await t.user('bob');
  });
  afterAll(() => t.close());

  const create = (payload: object, token = t.adminToken) =>
    t.as(token, { method: 'POST', url: '/api/reports', payload });
  const ready = async (id: number) => {
    await t.rt.services.reports.idle();
    return (await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${id}` })).json();
  };

  it('generates a query report in the background and serves the file', async () => {
    const res = await create({
      title: 'Top hosts',
      ftype: 'xlsx',
      source: { kind: 'query', query: { type: 'TopN', params: { time_range: HOUR, field: 'host' } } },
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({
      title: 'Top hosts',
      ftype: 'xlsx',
      filename: 'Top hosts.xlsx',
      owner: 1,
      timezone: 'UTC',
    });
    const r = await ready(res.json().id);
    expect(r.status).toBe('READY');
    expect(r.size).toBeGreaterThan(1000);
    const file = await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${r.id}/file?saveas=hosts` });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-disposition']).toBe('attachment; filename="hosts.xlsx"');
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(file.rawPayload as unknown as ArrayBuffer);
    const cells = wb.worksheets.flatMap((ws) => ws.getColumn(1).values.map(String));
    expect(cells).toEqual(expect.arrayContaining(['web-1', 'web-2', 'web-3']));
  });

  it('puts the chart of an aggregation into pdf and docx reports', async () => {
    for (const ftype of ['pdf', 'docx']) {
      const res = await create({
        ftype,
        source: { kind: 'query', query: { type: 'Timeline', params: { time_range: HOUR, interval: '5m' } } },
      });
      const r = await ready(res.json().id);
      expect(r.status, r.error).toBe('READY');
      const file = await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${r.id}/file` });
      if (ftype === 'docx') {
        const zip = await JSZip.loadAsync(file.rawPayload);
        expect(Object.keys(zip.files).some((f) => f.startsWith('word/media/'))).toBe(true);
      } else {
        expect(file.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
        // Drawn as vector graphics with its labels as text, not an image.
        const { images, clips, texts } = await readPdf(file.rawPayload);
        expect(images.reduce((a, b) => a + b, 0)).toBe(0);
        expect(clips.reduce((a, b) => a + b, 0)).toBe(1);
        expect(texts.join('\n')).toMatch(/events per/);
      }
    }
  });

  it('keeps reports private, deletes the file with the report', async () => {
    const res = await create({
      ftype: 'csv',
      source: { kind: 'query', query: { type: 'Search', params: { time_range: HOUR } } },
    });
    const r = await ready(res.json().id);
    expect(await reportFileKept(t, r.id)).toBe(true);
    for (const url of [`/api/reports/${r.id}`, `/api/reports/${r.id}/file`]) {
      expect((await t.as(bob.token, { method: 'GET', url })).statusCode).toBe(404);
    }
    expect((await t.as(bob.token, { method: 'DELETE', url: `/api/reports/${r.id}` })).statusCode).toBe(404);
    expect((await t.as(bob.token, { method: 'GET', url: '/api/reports' })).json().count).toBe(0);
    expect((await t.as(t.adminToken, { method: 'DELETE', url: `/api/reports/${r.id}` })).statusCode).toBe(
      204,
    );
    expect(await reportFileKept(t, r.id)).toBe(false);
    expect((await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${r.id}` })).statusCode).toBe(404);
  });

  it('answers 409 for the file of a report not READY', async () => {
    const res = await create({
      ftype: 'json',
      source: { kind: 'query', query: { type: 'Search', params: { time_range: HOUR } } },
    });
    const early = await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${res.json().id}/file` });
    expect([200, 409]).toContain(early.statusCode);
    if (early.statusCode === 409) expect(early.json().code).toBe('conflict');
    await t.rt.services.reports.idle();
  });

  it.each([
    [{ ftype: 'odt', source: { kind: 'query', query: { type: 'Search' } } }, 'ftype'],
    [{ ftype: 'csv', source: { kind: 'query', query: { type: 'Nope' } } }, 'type'],
    [{ ftype: 'csv', source: { kind: 'query', query: { type: 'TopN', params: {} } } }, 'params.field'],
    [{ ftype: 'csv', source: { kind: 'dashboard', dashboard_id: 9999 } }, 'source.dashboard_id'],
    [{ ftype: 'csv', source: { kind: 'mystery' } }, 'source'],
    [
      { ftype: 'csv', timezone: 'Nowhere/Land', source: { kind: 'query', query: { type: 'Search' } } },
      'timezone',
    ],
  ])('rejects %j naming %s, creating nothing', async (payload, field) => {
    const before = (await t.as(t.adminToken, { method: 'GET', url: '/api/reports' })).json().count;
    const res = await create(payload);
    expect(res.statusCode, res.body).toBe(400);
    expect(Object.keys(res.json().errors ?? {}).some((k) => k.startsWith(field))).toBe(true);
    expect((await t.as(t.adminToken, { method: 'GET', url: '/api/reports' })).json().count).toBe(before);
  });
  describe('of a dashboard', () => {
    // Three aggregations drawn as charts, one shown as a table (no chart), one search.
    const CHARTS = ['Events per 5 minutes', 'Busiest hosts', 'Status mix'];
    const board = {
      title: 'Web board',
      widgets: [
        {
          title: 'Events per 5 minutes',
          query: { type: 'Timeline', params: { time_range: HOUR, interval: '5m' } },
          visualization: { kind: 'line' },
        },
        {
          title: 'Busiest hosts',
          query: { type: 'TopN', params: { time_range: HOUR, field: 'host' } },
          visualization: { kind: 'bar' },
        },
        {
          title: 'Status mix',
          query: { type: 'Summary', params: { time_range: HOUR, group_by: ['status'] } },
          visualization: { kind: 'pie' },
        },
        {
          title: 'Paths',
          query: { type: 'TopN', params: { time_range: HOUR, field: 'http.path' } },
          visualization: { kind: 'table' },
        },
        {
          title: 'Server errors',
          query: {
            type: 'Search',
            params: {
              time_range: HOUR,
              query: 'status:500',
              sort: ['ts'],
              fields: ['ts', 'host', 'message'],
            },
          },
        },
      ],
    };
    // The first status-500 event of seedWeb (i = 5).
    const FIRST_500 = 'GET /page/5 status 500';
    let dashboardId: number;
    beforeAll(async () => {
      const res = await t.as(t.adminToken, { method: 'POST', url: '/api/dashboards', payload: board });
      expect(res.statusCode, res.body).toBe(201);
      dashboardId = res.json().id;
    });
    const fileOf = async (ftype: string) => {
      const res = await create({ ftype, source: { kind: 'dashboard', dashboard_id: dashboardId } });
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json()).toMatchObject({ title: 'Web board', filename: `Web board.${ftype}` });
      const r = await ready(res.json().id);
      expect(r.status, r.error).toBe('READY');
      const file = await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${r.id}/file` });
      expect(file.statusCode).toBe(200);
      expect(file.rawPayload.length).toBe(r.size);
      return file.rawPayload;
    };
    const reportRows = async () =>
      Number(
        (
          await t.rt.meta.db
            .selectFrom('reports')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const reportFiles = () => storedReportFiles(t);

    it('pdf: one vector chart per charted aggregation, searches and the rest as tables', async () => {
      const { pages, texts, images, clips } = await readPdf(await fileOf('pdf'));
      expect(pages).toBeGreaterThanOrEqual(1);
      expect(images.reduce((a, b) => a + b, 0)).toBe(0);
      expect(clips.reduce((a, b) => a + b, 0)).toBe(CHARTS.length);
      // Each page that draws a chart carries that chart's title.
      for (const [p, n] of clips.entries()) {
        if (n)
          expect(
            CHARTS.some((c) => texts[p]?.includes(c)),
            `page ${p + 1}`,
          ).toBe(true);
      }
      const all = texts.join('\n');
      for (const w of board.widgets) expect(all).toContain(w.title);
      for (const cell of ['web-1', 'web-2', 'web-3', '/page/0', '/page/9', FIRST_500])
        expect(all).toContain(cell);
      // The search table holds only what its query matched.
      expect(all).not.toContain('status 200');
    });

    it('docx: the charts under word/media, drawn in the body; the search as a table', async () => {
      const zip = await JSZip.loadAsync(await fileOf('docx'));
      // Each chart as SVG (vector, real text) with its PNG fallback.
      const media = Object.keys(zip.files).filter((f) => f.startsWith('word/media/'));
      expect(media.filter((f) => f.endsWith('.svg'))).toHaveLength(CHARTS.length);
      expect(media.filter((f) => f.endsWith('.png'))).toHaveLength(CHARTS.length);
      const xml = await zip.file('word/document.xml')!.async('string');
      expect(xml.match(/<w:drawing>/g)).toHaveLength(CHARTS.length);
      const paragraphs = docxParagraphs(xml);
      for (const w of board.widgets) expect(paragraphs).toContain(w.title);
      const cells = docxTableRows(xml).flat();
      expect(cells).toEqual(expect.arrayContaining([FIRST_500, 'web-1', '/page/0']));
      expect(cells.some((c) => c.includes('status 200'))).toBe(false);
    });

    it('xlsx: the charts under xl/media, each anchored on a sheet; the search as rows', async () => {
      const buf = await fileOf('xlsx');
      const zip = await JSZip.loadAsync(buf);
      expect(Object.keys(zip.files).filter((f) => f.startsWith('xl/media/'))).toHaveLength(CHARTS.length);
      const wb = await loadXlsx(buf);
      const withImages = wb.worksheets.filter((ws) => ws.getImages().length > 0);
      expect(withImages.map((ws) => ws.getCell('A1').value)).toEqual(CHARTS);
      const values = wb.worksheets.flatMap((ws) =>
        ws.getSheetValues().flatMap((row) => (Array.isArray(row) ? row.map(String) : [])),
      );
      expect(values).toEqual(expect.arrayContaining([FIRST_500, 'web-1', '/page/0']));
    });

    it('is 400 for a missing or invisible dashboard, storing no row and no file', async () => {
      const gone = (
        await t.as(t.adminToken, { method: 'POST', url: '/api/dashboards', payload: { title: 'gone' } })
      ).json().id;
      await t.as(t.adminToken, { method: 'DELETE', url: `/api/dashboards/${gone}` });
      const before = [await reportRows(), await reportFiles()];
      for (const [token, id] of [
        [t.adminToken, gone],
        [bob.token, dashboardId],
      ] as const) {
        const res = await create({ ftype: 'pdf', source: { kind: 'dashboard', dashboard_id: id } }, token);
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().errors).toHaveProperty(['source.dashboard_id']);
        // Nothing tells bob whether the dashboard exists.
        expect(res.json().detail).toBe('source.dashboard_id: No such dashboard.');
      }
      await t.rt.services.reports.idle();
      expect([await reportRows(), await reportFiles()]).toEqual(before);
    });

    it('a dashboard gone before generation ends the report in ERROR, with no file', async () => {
      const spy = vi
        .spyOn(t.rt.services.dashboards, 'reportable')
        .mockResolvedValueOnce({ title: 'Soon gone', description: '', widgets: [] })
        .mockRejectedValueOnce(notFound('No such dashboard.'));
      try {
        const res = await create({ ftype: 'pdf', source: { kind: 'dashboard', dashboard_id: dashboardId } });
        expect(res.statusCode, res.body).toBe(202);
        const r = await ready(res.json().id);
        expect(r).toMatchObject({ status: 'ERROR', size: 0, error: 'No such dashboard.' });
        expect(await reportFileKept(t, r.id)).toBe(false);
        const file = await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${r.id}/file` });
        expect(file.statusCode).toBe(409);
      } finally {
        spy.mockRestore();
      }
    });

    it('a failing metadata store is a 500, not a “no such dashboard” 400', async () => {
      const before = await reportRows();
      const spy = vi
        .spyOn(t.rt.services.dashboards, 'reportable')
        .mockRejectedValueOnce(new Error('connection reset'));
      try {
        const res = await create({ ftype: 'pdf', source: { kind: 'dashboard', dashboard_id: dashboardId } });
        expect(res.statusCode, res.body).toBe(500);
        expect(res.body).not.toContain('connection reset');
      } finally {
        spy.mockRestore();
      }
      expect(await reportRows()).toBe(before);
    });
  });
});

describe(`reports of the built-in templates over demo data on ${BACKEND}`, () => {
  let t: TestApp;
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
  });
  afterAll(() => t.close());

  const CHART_KINDS = ['bar', 'line', 'area', 'pie'];

  it.each(Object.keys(BUILTIN_TEMPLATES))(
    '%s renders to a pdf with its charts and data',
    async (template) => {
      const def = BUILTIN_TEMPLATES[template]!;
      const d = await t.as(t.adminToken, { method: 'POST', url: '/api/dashboards', payload: { template } });
      expect(d.statusCode, d.body).toBe(201);
      // What each TopN widget ranks highest (and how often), asked of the query API directly.
      const tops: string[] = [];
      for (const w of def.widgets.filter((x) => x.query.type === 'TopN')) {
        let q = (await t.as(t.adminToken, { method: 'POST', url: '/api/query', payload: w.query })).json();
        for (let i = 0; i < 100 && (q.status === 'PENDING' || q.status === 'IN_PROGRESS'); i++) {
          await new Promise((done) => setTimeout(done, 50));
          q = (await t.as(t.adminToken, { method: 'GET', url: `/api/query/${q.query_id}` })).json();
        }
        expect(q.status, `${w.title}: ${q.error}`).toBe('SUCCESS');
        expect(q.results.items.length, w.title).toBeGreaterThan(0);
        tops.push(String(q.results.items[0].value), String(q.results.items[0].count));
      }
      expect(tops.length).toBeGreaterThan(0);

      const res = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/reports',
        payload: { ftype: 'pdf', source: { kind: 'dashboard', dashboard_id: d.json().id } },
      });
      expect(res.statusCode, res.body).toBe(202);
      await t.rt.services.reports.idle();
      const r = (await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${res.json().id}` })).json();
      expect(r.status, r.error).toBe('READY');
      const file = await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${r.id}/file` });
      const { pages, texts, images, clips } = await readPdf(file.rawPayload);
      expect(pages).toBeGreaterThanOrEqual(1);
      const charted = def.widgets.filter((w) => CHART_KINDS.includes(w.visualization.kind));
      expect(images.reduce((a, b) => a + b, 0)).toBe(0);
      expect(clips.reduce((a, b) => a + b, 0)).toBe(charted.length);
      const all = texts.join('\n');
      for (const w of def.widgets) expect(all).toContain(w.title);
      for (const cell of tops) expect(all).toContain(cell);
    },
  );
});
