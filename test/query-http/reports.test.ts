import { existsSync } from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../helpers/app.js';
import { HOUR, seedWeb } from '../helpers/seed.js';

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
        expect(file.rawPayload.toString('latin1')).toContain('/Subtype /Image');
      }
    }
  });

  it('keeps reports private, deletes the file with the report', async () => {
    const res = await create({
      ftype: 'csv',
      source: { kind: 'query', query: { type: 'Search', params: { time_range: HOUR } } },
    });
    const r = await ready(res.json().id);
    const file = path.join(t.dataDir, 'reports', `${r.id}.csv`);
    expect(existsSync(file)).toBe(true);
    for (const url of [`/api/reports/${r.id}`, `/api/reports/${r.id}/file`]) {
      expect((await t.as(bob.token, { method: 'GET', url })).statusCode).toBe(404);
    }
    expect((await t.as(bob.token, { method: 'DELETE', url: `/api/reports/${r.id}` })).statusCode).toBe(404);
    expect((await t.as(bob.token, { method: 'GET', url: '/api/reports' })).json().count).toBe(0);
    expect((await t.as(t.adminToken, { method: 'DELETE', url: `/api/reports/${r.id}` })).statusCode).toBe(
      204,
    );
    expect(existsSync(file)).toBe(false);
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
});
