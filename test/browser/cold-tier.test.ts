import path from 'node:path';
import type { Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalisedEvent } from '../../src/core/event.js';
import { formatIso, formatTs } from '../../ui/src/format.js';
import { formatBytes } from '../../ui/src/pages/settings/stream-tiers.js';
import { EVENT_STORE } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { event } from '../helpers/seed.js';
import {
  ARTIFACTS,
  type AxeFinding,
  axe,
  type Browsing,
  closeAll,
  createUser,
  describeBrowser,
  type LiveApp,
  openBrowser,
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// The cold tier in the web UI, in Chromium against a real server (embedded event store):
// a stream whose events older than 3 days moved to Parquet files in a round; Settings →
// Streams shows each stream's events and bytes per tier, the files and their days; the
// search page's status says how many cold files a search reads (while it runs, beside its
// progress and Stop, and once done), and nothing of them over hot days only. axe and
// screenshots light and dark (test-artifacts/ui/cold-*.png). Setup: ./browser.ts.

const USER = { username: 'ada', password: 'ada-password-1', admin: true };
const DAY = 86_400_000;
const HOUR = 3_600_000;
/** The one event with this word: a search for it opens only its day's file. */
const RARE = 'zebrafish';
/** How long a search may take on a busy machine. */
const WAIT = { timeout: 20_000 };

describeBrowser('test/browser/cold-tier.test.ts', 'the cold tier in the web UI, in Chromium', () => {
  // ClickHouse has no cold tier (it moves old data itself).
  describe.skipIf(EVENT_STORE !== 'duckdb')('on the embedded event store', coldTier);
});

function coldTier() {
  let server: LiveApp;
  let b: Browsing;
  let page: Page;
  let webId: number;
  const now = Date.now();
  const sent: NormalisedEvent[] = [];
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];

  const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    server.t.as(server.t.adminToken, { method, url, ...(payload ? { payload } : {}) });
  /** What the API says a Search reads of the cold tier (the UI must say the same). */
  const apiCold = async (query: string, preset: string) => {
    const res = await admin('POST', '/api/query', {
      type: 'Search',
      params: { query, time_range: { preset } },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json().cold as { files: number; files_read: number; files_skipped: number } | null;
  };
  const streams = () => page.getByRole('region', { name: 'Streams' });
  const row = (title: string) =>
    streams()
      .getByRole('row')
      .filter({ has: page.getByRole('cell', { name: title, exact: true }) });
  const status = () => page.locator('.status-row > .count');

  beforeAll(async () => {
    // POST /api/query answers at once (202): the first answer is the running search's.
    server = await startApp({ LOGSCOPE_QUERY_SYNC_MS: '0' });
    const session = await createUser(server.t, USER);
    const web = await admin('POST', '/api/streams', { title: 'Web', rule: 'app:web', hot_days: 3 });
    expect(web.statusCode, web.body).toBe(201);
    webId = web.json().id;
    for (let i = 0; i < 400; i++) {
      // Half an hour off every cut: the round the server runs itself soon after start
      // moves the same events as the one run here.
      const ts = now - (i % 20) * DAY - (i % 11) * HOUR - 1_800_000;
      sent.push(
        event({
          ts,
          app: i % 4 === 3 ? 'db' : 'web',
          host: `h${i % 3}`,
          message: i === 210 ? `checkout ${RARE} failed` : `GET /page/${i % 10} done`,
        }),
      );
    }
    await server.t.rt.events.append(sent);
    const round = await server.t.rt.services.coldMoves.run(now);
    expect(round.errors).toEqual([]);
    expect(round.events).toBe(sent.filter((e) => e.app === 'web' && e.ts < now - 3 * DAY).length);
    await server.t.rt.services.streamTiers.refresh();
    // The server's own first round (10 s after start) moves nothing more, but computes the
    // figures anew: waited for, so that what the page shows is what the API says below.
    const asOf = async () => (await admin('GET', `/api/streams/${webId}`)).json().tiers.as_of as string;
    const ours = await asOf();
    await eventually('the server’s first cold round', async () => (await asOf()) !== ours, {
      withinMs: 30_000,
      everyMs: 250,
    });
    b = await openBrowser({ token: session, consoleErrors });
    page = b.page;
  }, 120_000);

  afterAll(async () => {
    writeFindings('cold-tier-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('shows each stream’s events and bytes per tier on Settings → Streams', async () => {
    const moved = sent.filter((e) => e.app === 'web' && e.ts < now - 3 * DAY);
    const files = (await admin('GET', `/api/cold/files?stream_id=${webId}&page_size=500`)).json().count;
    expect(files).toBeGreaterThan(1);
    const { tiers } = (await admin('GET', `/api/streams/${webId}`)).json();
    expect(tiers.cold.events).toBe(moved.length);

    await page.goto(`${server.base}/settings`);
    await streams().waitFor();
    await streams().getByRole('columnheader', { name: 'Hot and cold' }).waitFor();
    const cell = row('Web').locator('.stream-tiers');
    const day = (ts: number) => formatTs(ts).slice(0, 10);
    const oldest = Math.min(...moved.map((e) => e.ts)) / 1000;
    const newest = Math.max(...moved.map((e) => e.ts)) / 1000;
    await cell.waitFor();
    const lines = (await cell.innerText()).split('\n');
    // The API's figures, in the page's words (stream-tiers.ts, unit-tested).
    expect(lines).toEqual([
      `Hot ${sent.filter((e) => e.app === 'web').length - moved.length} events · ${formatBytes(tiers.hot.bytes)}`,
      `Cold ${moved.length} events · ${formatBytes(tiers.cold.bytes)} in ${files} files`,
      `${day(oldest)} → ${day(newest)}`,
      `as of ${formatIso(tiers.as_of)}`,
    ]);
    // Default keeps its events hot (no hot days): its cold tier says so plainly.
    const def = await row('Default').locator('.stream-tiers').innerText();
    expect(def.split('\n').slice(0, 2)).toEqual([
      expect.stringMatching(new RegExp(`^Hot ${sent.filter((e) => e.app === 'db').length} events · `)),
      'Cold: none',
    ]);
    await shot(page, 'cold-settings-streams');
  });

  it('says on the search page how many cold files a search reads, while it runs and once done', async () => {
    const all = await apiCold('app:web', 'last_30_days');
    expect(all).toMatchObject({ files_read: all?.files, files_skipped: 0 });
    await page.goto(`${server.base}/search?q=app%3Aweb&range=last_30_days`);
    await expect
      .poll(() => status().innerText(), WAIT)
      .toBe(
        `${sent.filter((e) => e.app === 'web').length} events · read ${all?.files} of ${all?.files} cold files`,
      );

    // The word is in one day's file: the others' summaries let the search skip them. Its
    // answers are held a while (the real ones, late), so the running search shows.
    const rare = await apiCold(RARE, 'last_30_days');
    expect(rare).toMatchObject({ files: all?.files, files_read: 1, files_skipped: (all?.files ?? 0) - 1 });
    const polls = (url: URL) => /^\/api\/query\/[^/]+$/.test(url.pathname);
    const late = async (route: Route) => {
      await new Promise((r) => setTimeout(r, 1500));
      await route.continue().catch(() => {});
    };
    await page.route(polls, late);
    const reading = `reading 1 of ${all?.files} cold files, ${(all?.files ?? 0) - 1} skipped by their summaries`;
    try {
      await page.goto(`${server.base}/search?q=${RARE}&range=last_30_days`);
      await expect.poll(() => status().innerText(), WAIT).toBe(`Searching… · ${reading}`);
      // Beside its progress and Stop.
      await page.getByRole('progressbar', { name: 'Search progress' }).waitFor();
      await page.getByRole('button', { name: 'Stop', exact: true }).waitFor();
      await shot(page, 'cold-search-reading');
    } finally {
      await page.unroute(polls, late);
    }
    await expect
      .poll(() => status().innerText(), WAIT)
      .toBe(`1 events · ${reading.replace('reading', 'read')}`);
  });

  it('says nothing of cold files when a search meets none', async () => {
    expect(await apiCold('app:web', 'last_24_hours')).toBeNull();
    await page.goto(`${server.base}/search?q=app%3Aweb&range=last_24_hours`);
    const recent = sent.filter((e) => e.app === 'web' && e.ts >= now - DAY).length;
    await expect.poll(() => status().innerText(), WAIT).toBe(`${recent} events`);
    expect(await page.locator('.cold-status').count()).toBe(0);
  });

  it('looks right light and dark, and passes axe on both pages', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${server.base}/search?q=app%3Aweb&range=last_30_days`);
      await expect
        .poll(() => status().innerText(), WAIT)
        .toMatch(/^\d+ events · read \d+ of \d+ cold files$/);
      await shot(page, `cold-search-${scheme}`);
      await axe(page, `search over cold days (${scheme})`, findings);
      await page.goto(`${server.base}/settings`);
      await row('Web').locator('.stream-tiers').waitFor();
      await streams().screenshot({ path: path.join(ARTIFACTS, `cold-settings-streams-${scheme}.png`) });
      await axe(page, `settings, streams with tiers (${scheme})`, findings);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }, 150_000);
}
