import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../helpers/app.js';
import { HOUR, seedWeb, T0 } from '../helpers/seed.js';

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

  it('rejects unknown formats and timezones, and other users', async () => {
    const bad = await download(`/api/query/${searchId}/export?ftype=odt`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.ftype[0]).toMatch(/csv, xlsx, docx, pdf, json/);
    const tz = await download(`/api/query/${searchId}/export?timezone=Mars/Olympus`);
    expect(tz.statusCode).toBe(400);
    expect(tz.json().errors.timezone).toBeDefined();
    const other = await t.user('eve');
    expect((await download(`/api/query/${searchId}/export`, other.token)).statusCode).toBe(404);
  });
});
