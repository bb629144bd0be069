import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { storedEvents } from '../../helpers/events.js';
import { HOUR, seedWeb, T0 } from '../../helpers/seed.js';

describe(`query exports on ${BACKEND}`, () => {
  let t: TestApp;
  let searchId: string;
  let topnId: string;
  beforeAll(async () => {
    t = await createTestApp();
    await seedWeb(t);
    const post = (payload: object) => t.as(t.adminToken, { method: 'POST', url: '/api/query', payload });
    searchId = (
      await post({ type: 'Search', params: { time_range: HOUR, query: 'status:404', page_size: 5 } })
    ).json().query_id;
    topnId = (await post({ type: 'TopN', params: { time_range: HOUR, field: 'host' } })).json().query_id;
  });
  afterAll(() => t.close());

  const download = (url: string, token = t.adminToken) => t.as(token, { method: 'GET', url });

  it('exports every matching event of a Search as CSV, not just the page', async () => {
    const res = await download(`/api/query/${searchId}/export?ftype=csv&filename=not-found`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="not-found.csv"');
    const lines = res.body
      .replace(/^\uFEFF/, '')
      .trim()
      .split(/\r?\n/);
    expect(lines).toHaveLength(101);
    expect(lines[0]).toMatch(/^time,host/);
    expect(lines.slice(1).every((l) => l.includes(',404,'))).toBe(true);
  });

  it('renders times in the requested timezone', async () => {
    const utc = (await download(`/api/query/${searchId}/export?ftype=csv`)).body;
    const paris = (await download(`/api/query/${searchId}/export?ftype=csv&timezone=Europe/Paris`)).body;
    // The oldest 404 is event 4: T0 + 24 s, 12:00:24 UTC is 13:00:24 in Paris (UTC+1 in November).
    expect(utc).toContain('2026-11-20 12:00:24.000');
    expect(paris).toContain('2026-11-20 13:00:24.000');
    expect(T0).toBe(Date.UTC(2026, 10, 20, 12));
  });

  it('exports xlsx readable by exceljs, and the xslx alias', async () => {
    for (const ftype of ['xlsx', 'xslx']) {
      const res = await download(`/api/query/${topnId}/export?ftype=${ftype}`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe(
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      );
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.load(res.rawPayload as unknown as ArrayBuffer);
      const ws = wb.worksheets[0];
      const values = ws?.getColumn(1).values.filter(Boolean).map(String);
      expect(values).toEqual(expect.arrayContaining(['value', 'web-1', 'web-2', 'web-3']));
    }
  });

  it("sizes a Search's xlsx columns from their content: the message as wide as its text, within 80", async () => {
    // Issue 29: with a Search's many columns sharing one print width, message came out 13 wide.
    const wide = `xlsx-width ${'long words of a message '.repeat(8)}`;
    const records = [
      {
        host: 'h1',
        app: 'a',
        message: 'xlsx-width short',
        src_ip: '10.0.0.1',
        user: 'u',
        status: 200,
        'http.method': 'GET',
      },
      { host: 'h2', app: 'a', message: wide, src_ip: '10.0.0.2', user: 'u', status: 500, 'url.path': '/x' },
    ];
    await t.as(t.adminToken, { method: 'POST', url: '/api/ingest', payload: records });
    const q = (
      await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/query',
        payload: {
          type: 'Search',
          params: { time_range: { preset: 'last_hour' }, query: 'message:"xlsx-width"' },
        },
      })
    ).json();
    const res = await download(`/api/query/${q.query_id}/export?ftype=xlsx`);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(res.rawPayload as unknown as ArrayBuffer);
    const ws = wb.worksheets[0]!;
    let messageColumn = 0;
    ws.eachRow((row) =>
      row.eachCell((cell, c) => {
        if (cell.value === 'message') messageColumn = c;
      }),
    );
    expect(messageColumn).toBeGreaterThan(0);
    const width = ws.getColumn(messageColumn).width ?? 0;
    expect(width).toBeGreaterThanOrEqual(Math.min(80, wide.length));
    expect(width).toBeLessThanOrEqual(80);
  });

  it('exports json, docx and pdf', async () => {
    const json = (await download(`/api/query/${topnId}/export`)).json();
    expect(JSON.stringify(json)).toContain('web-2');
    const docx = await download(`/api/query/${topnId}/export?ftype=docx`);
    const zip = await JSZip.loadAsync(docx.rawPayload);
    expect(await zip.file('word/document.xml')?.async('string')).toContain('web-3');
    const pdf = await download(`/api/query/${topnId}/export?ftype=pdf`);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('exports a Search as json (the list of its events) and ndjson that POST /api/ingest takes back', async () => {
    const page = (await download(`/api/query/${searchId}`)).json().results.events as Array<
      Record<string, unknown>
    >;
    const json = await download(`/api/query/${searchId}/export?ftype=json&filename=found`);
    expect(json.statusCode).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.headers['content-disposition']).toBe('attachment; filename="found.json"');
    const list = json.json() as Array<Record<string, unknown>>;
    expect(Array.isArray(list)).toBe(true);
    expect(list).toHaveLength(100);
    // The same objects as the Search results' events, in the same order.
    expect(list.slice(0, page.length)).toEqual(page);
    expect(list[0]).toMatchObject({ 'http.method': expect.any(String), status: 404 });
    expect(typeof list[0]?.ts).toBe('number');

    const nd = await download(`/api/query/${searchId}/export?ftype=NDJSON`);
    expect(nd.statusCode).toBe(200);
    expect(nd.headers['content-type']).toBe('application/x-ndjson');
    expect(nd.headers['content-disposition']).toMatch(/\.ndjson"$/);
    const lines = nd.body.trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual(list);

    // Sent back, to a fresh store, each file gives the same events.
    const target = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
    try {
      const messages = list.map((e) => e.message).sort();
      const asJson = await target.as(target.adminToken, {
        method: 'POST',
        url: '/api/ingest',
        headers: { 'content-type': 'application/json' },
        payload: json.body,
      });
      expect(asJson.json()).toMatchObject({ accepted: 100, rejected: 0 });
      const asNd = await target.as(target.adminToken, {
        method: 'POST',
        url: '/api/ingest',
        headers: { 'content-type': 'application/x-ndjson' },
        payload: nd.body,
      });
      expect(asNd.json()).toMatchObject({ accepted: 100, rejected: 0 });
      const rows = await storedEvents(target);
      expect(rows).toHaveLength(200);
      expect(rows.map((r) => r.message).sort()).toEqual([...messages, ...messages].sort());
      const again = (
        await target.as(target.adminToken, {
          method: 'POST',
          url: '/api/query',
          payload: { type: 'Search', params: { time_range: HOUR, query: 'status:404', page_size: 1 } },
        })
      ).json();
      expect(again.results.total).toBe(200);
      expect(again.results.events[0]).toMatchObject({
        message: list[0]?.message,
        host: list[0]?.host,
        ts: list[0]?.ts,
        'http.path': list[0]?.['http.path'],
      });
    } finally {
      await target.close();
    }
  });

  it('keeps the document shape for other types in json, one row a line in ndjson', async () => {
    const doc = (await download(`/api/query/${topnId}/export?ftype=json`)).json();
    expect(doc.sections[0].kind).toBe('table');
    const nd = await download(`/api/query/${topnId}/export?ftype=ndjson`);
    const rows = nd.body
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => r.value).sort()).toEqual(['web-1', 'web-2', 'web-3']);
    expect(rows[0]).toEqual({ value: expect.any(String), count: 200, share: expect.any(Number) });
  });

  it('rejects unknown formats and timezones, and other users', async () => {
    const bad = await download(`/api/query/${searchId}/export?ftype=odt`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.ftype[0]).toMatch(/csv, xlsx, docx, pdf, json, ndjson/);
    const tz = await download(`/api/query/${searchId}/export?timezone=Mars/Olympus`);
    expect(tz.statusCode).toBe(400);
    expect(tz.json().errors.timezone).toBeDefined();
    const other = await t.user('eve');
    expect((await download(`/api/query/${searchId}/export`, other.token)).statusCode).toBe(404);
  });
});
