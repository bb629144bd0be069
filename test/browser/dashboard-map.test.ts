import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { COUNTRY_MAP_COLORS, COUNTRY_MAP_NO_DATA, COUNTRY_MAP_STEPS } from '../../src/shared/country-map.js';
import {
  axe,
  type Browsing,
  closeAll,
  createUser,
  describeBrowser,
  ingest,
  type LiveApp,
  openBrowser,
  shot,
  startApp,
} from './browser.js';

// The map visualization in Chromium: a dashboard's map widget over a TopN of source
// addresses (placed by GeoIP, which the dashboard subscription asks for on map widgets)
// draws the countries filled by their events, with a tooltip per country, an accessible
// name, a legend, the unplaced events and a table; the map's code is a chunk of its own,
// loaded only when a map is drawn. A map widget over host names stays a table. Light and
// dark themes, axe, screenshots (test-artifacts/ui/dashboard-map*.png).

const USER = { username: 'map-viewer', password: 'map-viewer-password-1', admin: true };
// Public addresses the bundled GeoIP database places (US, GB, AU), and a private one.
const SOURCES: Array<[string, number]> = [
  ['8.8.8.8', 30],
  ['81.2.69.142', 12],
  ['1.1.1.1', 5],
  ['10.0.0.5', 4],
];

describeBrowser('test/browser/dashboard-map.test.ts', 'the map visualization in Chromium', () => {
  let live: LiveApp;
  let b: Browsing;
  let page: Page;
  let dashboardId: number;
  const consoleErrors: string[] = [];
  const requested: string[] = [];

  const region = (title: string) => page.getByRole('region', { name: title, exact: true });
  const mapChunkLoaded = () => requested.some((u) => /\/assets\/CountryMap-[\w-]+\.js$/.test(u));
  const country = (code: string) =>
    region('Sources by country').locator(`svg[role="img"] path[data-country="${code}"]`);

  beforeAll(async () => {
    live = await startApp();
    const token = await createUser(live.t, USER);
    const now = Date.now();
    await ingest(
      live.t,
      SOURCES.flatMap(([ip, n]) =>
        Array.from({ length: n }, (_, i) => ({
          time: new Date(now - 120_000 - i * 1000).toISOString(),
          host: `edge-${i % 3}`,
          app: 'firewall',
          level: 'warning',
          msg: `connection from ${ip}`,
          src_ip: ip,
        })),
      ),
    );
    const topn = (field: string) => ({
      type: 'TopN',
      params: { field, n: 10, time_range: { preset: 'last_24_hours' } },
    });
    const d = await live.t.as(token, {
      method: 'POST',
      url: '/api/dashboards',
      payload: {
        title: 'Edge traffic',
        widgets: [
          {
            title: 'Sources by country',
            query: topn('src_ip'),
            visualization: { kind: 'map' },
            position: { x: 0, y: 0, w: 8, h: 6 },
          },
          {
            title: 'Hosts on a map',
            query: topn('host'),
            visualization: { kind: 'map' },
            position: { x: 8, y: 0, w: 4, h: 6 },
          },
        ],
      },
    });
    expect(d.statusCode, d.body).toBe(201);
    dashboardId = d.json().id;
    b = await openBrowser({ token, consoleErrors });
    page = b.page;
    page.on('request', (r: Request) => requested.push(r.url()));
  }, 120_000);

  afterAll(() => closeAll(b, live), 30_000);

  it('loads the map code only when a map is drawn', async () => {
    await page.goto(`${live.base}/search`);
    await page.getByRole('button', { name: 'Search' }).waitFor();
    expect(mapChunkLoaded()).toBe(false);
  });

  it('draws the countries of the sources, filled by their events, with tooltips, legend and the unplaced', async () => {
    await page.goto(`${live.base}/dashboards/${dashboardId}`);
    await region('Sources by country').waitFor();
    // The subscription's updates carry GeoIP on a map widget's values: the map replaces the table.
    await expect.poll(() => country('US').count(), { timeout: 20_000 }).toBe(1);
    expect(mapChunkLoaded()).toBe(true);
    const light = COUNTRY_MAP_COLORS.light;
    // 30 events is the largest count (the darkest step); 12 and 5 in lighter steps.
    expect(await country('US').getAttribute('fill')).toBe(light[COUNTRY_MAP_STEPS - 1]);
    for (const code of ['GB', 'AU']) {
      const fill = await country(code).getAttribute('fill');
      expect(light, code).toContain(fill);
      expect(fill, code).not.toBe(light[COUNTRY_MAP_STEPS - 1]);
    }
    expect(await country('GB').getAttribute('data-count')).toBe('12');
    expect(await country('US').locator('title').textContent()).toBe('United States: 30');
    expect(await country('AU').locator('title').textContent()).toBe('Australia: 5');
    // Every other country is there, without events.
    const map = region('Sources by country').getByRole('img', { name: /map of events by country/ });
    const paths = map.locator('path');
    expect(await paths.count()).toBeGreaterThan(170);
    expect(await map.locator(`path[fill="${COUNTRY_MAP_NO_DATA.light}"]`).count()).toBe(
      (await paths.count()) - 3,
    );
    expect(await map.getAttribute('aria-label')).toBe(
      'Sources by country: map of events by country, 3 countries; most events: United States 30, United Kingdom 12, Australia 5; 4 events not placed',
    );
    const legend = region('Sources by country').getByRole('list', { name: 'Events per country' });
    expect(await legend.getByRole('listitem').allTextContents()).toEqual([
      '1',
      '2–4',
      '5–9',
      '10–19',
      '20–30',
    ]);
    await region('Sources by country')
      .getByText('Not placed: 4 events (1 value) with no country (private or unknown addresses).')
      .waitFor();
    // The same data as a table, for whoever cannot see the map.
    await region('Sources by country').getByText('Table', { exact: true }).click();
    const rows = region('Sources by country').locator('details tbody tr');
    expect(await rows.allTextContents()).toEqual([
      'United States30',
      'United Kingdom12',
      'Australia5',
      '(not placed)4',
    ]);
    await region('Sources by country').getByText('Table', { exact: true }).click();

    // Host names are no addresses: that widget stays a table, and says why.
    const hosts = region('Hosts on a map');
    await hosts.getByText(/^No map: none of these values is an address GeoIP places/).waitFor();
    expect(await hosts.locator('tbody tr').count()).toBe(3);
    expect(await hosts.getByRole('img').count()).toBe(0);

    await shot(page, 'dashboard-map');
    await axe(page, 'dashboard with a map');
  });

  it('draws the map in the dark theme too', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      await expect
        .poll(() => country('US').getAttribute('fill'))
        .toBe(COUNTRY_MAP_COLORS.dark[COUNTRY_MAP_STEPS - 1]);
      const map = region('Sources by country').getByRole('img', { name: /map of events by country/ });
      expect(await map.locator(`path[fill="${COUNTRY_MAP_NO_DATA.dark}"]`).count()).toBeGreaterThan(170);
      await shot(page, 'dashboard-map-dark');
      // The widgets only: the page around them is checked in the light theme above.
      await axe(page, 'the map widgets (dark)', undefined, { include: '.dash-grid' });
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
  });

  it('fits the map to a phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await country('US').waitFor();
    const box = await region('Sources by country').getByRole('img').first().boundingBox();
    expect(box?.width).toBeGreaterThan(250);
    expect(box?.width).toBeLessThanOrEqual(390);
    await shot(page, 'dashboard-map-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(consoleErrors).toEqual([]);
  });
});
