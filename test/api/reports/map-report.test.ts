import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../../src/config/config.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { readPdf } from '../../unit/export/export-fixtures.js';

/**
 * A dashboard's map widget in a report: its TopN of addresses read with GeoIP (as the
 * dashboard reads it), drawn as a map image in pdf, docx and xlsx, with a country column
 * in its table and a note on the events no country holds. A map widget over values that
 * are no addresses stays a table, as on the dashboard. The pdf is also written to
 * test-artifacts/reports/ to look at.
 */
describe(`a dashboard report with a map widget on ${BACKEND}`, () => {
  let t: TestApp;
  let dashboardId: number;
  const ARTIFACTS = path.join(PACKAGE_ROOT, 'test-artifacts', 'reports');
  // Public addresses the bundled GeoIP database places (US, GB, AU), and a private one.
  const SOURCES: Array<[string, number]> = [
    ['8.8.8.8', 30],
    ['81.2.69.142', 12],
    ['1.1.1.1', 5],
    ['10.0.0.5', 4],
  ];

  beforeAll(async () => {
    t = await createTestApp();
    const now = Date.now();
    const lines = SOURCES.flatMap(([ip, n]) =>
      Array.from({ length: n }, (_, i) =>
        JSON.stringify({
          time: new Date(now - 60_000 - i * 1000).toISOString(),
          host: `edge-${i % 3}`,
          app: 'firewall',
          level: 'warning',
          msg: `connection from ${ip}`,
          src_ip: ip,
        }),
      ),
    );
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: lines.join('\n'),
    });
    expect(res.json()).toMatchObject({ accepted: lines.length, rejected: 0 });
    const topn = (field: string) => ({
      type: 'TopN',
      params: { field, n: 10, time_range: { preset: 'last_24_hours' } },
    });
    const d = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/dashboards',
      payload: {
        title: 'Edge',
        widgets: [
          { title: 'Sources by country', query: topn('src_ip'), visualization: { kind: 'map' } },
          { title: 'Hosts on a map', query: topn('host'), visualization: { kind: 'map' } },
        ],
      },
    });
    expect(d.statusCode, d.body).toBe(201);
    dashboardId = d.json().id;
  });
  afterAll(() => t.close());

  async function report(ftype: string): Promise<Buffer> {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/reports',
      payload: { ftype, timezone: 'UTC', source: { kind: 'dashboard', dashboard_id: dashboardId } },
    });
    expect(res.statusCode, res.body).toBe(202);
    await t.rt.services.reports.idle();
    const r = (await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${res.json().id}` })).json();
    expect(r.status, r.error).toBe('READY');
    return (await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${r.id}/file` })).rawPayload;
  }

  it('pdf: one vector map, with the countries in its table and the unplaced events in a note', async () => {
    const pdf = await report('pdf');
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(path.join(ARTIFACTS, 'dashboard-map.pdf'), pdf);
    const { texts, images, clips } = await readPdf(pdf);
    // The map widget's map, drawn as vector graphics; the host widget has no addresses to place, so no map.
    expect(images.reduce((a, b) => a + b, 0)).toBe(0);
    expect(clips.reduce((a, b) => a + b, 0)).toBe(1);
    const all = texts.join('\n');
    const map = all.slice(all.indexOf('Sources by country'), all.indexOf('Hosts on a map'));
    const hosts = all.slice(all.indexOf('Hosts on a map'));
    for (const country of ['United States', 'United Kingdom', 'Australia']) expect(map).toContain(country);
    expect(map).toContain('Not placed: 4 events (1 value) with no country (private or unknown addresses).');
    expect(map.split('\n')).toContain('country');
    expect(hosts).toContain('edge-0');
    expect(hosts.split('\n')).not.toContain('country');
    expect(hosts).toContain('No map: none of these values is an address GeoIP places');
    // The map is on the map widget's page.
    const page = texts.findIndex((p) => p.includes('Not placed: 4 events'));
    expect(clips[page]).toBe(1);
  });

  it('docx and xlsx: the map image once', async () => {
    for (const [ftype, media] of [
      ['docx', /^word\/media\/.+\.png$/],
      ['xlsx', /^xl\/media\/.+\.png$/],
    ] as const) {
      const zip = await JSZip.loadAsync(await report(ftype));
      expect(
        Object.keys(zip.files).filter((f) => media.test(f)),
        ftype,
      ).toHaveLength(1);
    }
  });
});
