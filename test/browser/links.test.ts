import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AxeFinding,
  axe,
  type Browsing,
  closeAll,
  createUser,
  describeBrowser,
  ingest,
  type LiveApp,
  openBrowser,
  queryText,
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// The search page's whole state in its address (query, range, columns, sort, the open event
// and its tab), the Saved menu (save as, share with a team, open, save, delete) and Copy
// link, opened by a colleague in another browser context. Setup: ./browser.ts.

describeBrowser('test/browser/links.test.ts', 'saved searches and links in Chromium', () => {
  let server: LiveApp;
  let t: LiveApp['t'];
  let base: string;
  let b: Browsing;
  let page: Page;
  let colleagueToken: string;
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];
  let link = '';

  const count = (p: Page) =>
    p
      .getByRole('status')
      .filter({ hasText: /events$/ })
      .first();
  const headerSort = (p: Page, name: string) =>
    p.getByRole('columnheader', { name: new RegExp(`^${name}`) }).getAttribute('aria-sort');

  beforeAll(async () => {
    server = await startApp();
    ({ t, base } = server);
    const token = await createUser(t, { username: 'keeper', password: 'keeper-password-1', admin: true });
    colleagueToken = await createUser(t, {
      username: 'colleague',
      password: 'colleague-password-1',
      admin: false,
    });
    const colleague = await t.as(colleagueToken, { method: 'GET', url: '/api/users/me' });
    const team = await t.as(token, {
      method: 'POST',
      url: '/api/teams',
      payload: { name: 'web-ops', members: [colleague.json().id] },
    });
    expect(team.statusCode).toBe(201);
    const now = Math.floor(Date.now() / 1000) - 120;
    await ingest(t, [
      ...Array.from({ length: 5 }, (_, i) => ({
        app: 'nginx',
        host: `web-${5 - i}`,
        message: `GET /page/${i} 500`,
        timestamp: now - i * 60,
      })),
      ...Array.from({ length: 3 }, (_, i) => ({
        app: 'payments',
        host: 'pay-1',
        message: `charge ${i}`,
        timestamp: now,
      })),
    ]);
    b = await openBrowser({ token, consoleErrors });
    ({ page } = b);
    await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  }, 120_000);

  afterAll(async () => {
    writeFindings('links-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('keeps the sort and the open event in the address; reload and Back restore them', async () => {
    await page.goto(`${base}/search?q=${encodeURIComponent('app:nginx')}&range=last_24_hours`);
    await expect.poll(() => count(page).textContent()).toBe('5 events');
    expect(await headerSort(page, 'Time')).toBe('descending');
    await page.getByRole('columnheader', { name: /^Host/ }).getByRole('button').click();
    await page.waitForURL(/sort=host/);
    expect(await headerSort(page, 'Host')).toBe('ascending');
    await expect.poll(() => page.locator('tr.event-row').first().innerText()).toContain('web-1');
    await page.locator('tr.event-row').first().click();
    const dialog = page.getByRole('dialog', { name: 'Event' });
    await dialog.getByRole('button', { name: 'Show context' }).click();
    await page.waitForURL(/ev=[^&]+&context=1/);
    const opened = new URL(page.url()).searchParams.get('ev');
    await page.reload();
    await page
      .getByRole('dialog', { name: 'Event' })
      .getByRole('list', { name: 'Lines around the event' })
      .waitFor();
    expect(new URL(page.url()).searchParams.get('ev')).toBe(opened);
    expect(await headerSort(page, 'Host')).toBe('ascending');
    await page.keyboard.press('Escape');
    await expect.poll(() => new URL(page.url()).searchParams.get('ev')).toBeNull();
    // A new search is a history entry: Back shows the one before, sorted as it was.
    await page.getByRole('textbox', { name: 'Query' }).fill('app:payments');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => count(page).textContent()).toBe('3 events');
    await page.goBack();
    await expect.poll(() => queryText(page)).toBe('app:nginx');
    await expect.poll(() => count(page).textContent()).toBe('5 events');
  }, 60_000);

  it('saves the search as a new one shared with a team, and shows it as the one open', async () => {
    await page.getByRole('button', { name: 'Saved', exact: true }).click();
    await page.getByRole('menuitem', { name: 'Save as…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Save search as' });
    await dialog.getByLabel('Title').fill('nginx 500s');
    await dialog.getByLabel('Description').fill('Server errors of the web tier');
    await dialog.getByRole('checkbox', { name: 'web-ops' }).check();
    await shot(page, 'saved-search-dialog');
    await axe(page, 'save search dialog', findings);
    await dialog.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved: nginx 500s' }).waitFor();
    await page.waitForURL(/saved=\d+/);
    const res = await t.as(colleagueToken, { method: 'GET', url: '/api/saved-searches?shared=true' });
    expect(res.json().results.map((s: { title: string }) => s.title)).toEqual(['nginx 500s']);
    const saved = res.json().results[0];
    expect(saved).toMatchObject({
      query: 'app:nginx',
      sort: ['host'],
      time_range: { preset: 'last_24_hours' },
    });
  });

  it('copies a link with the exact time, to the second', async () => {
    // Copy link on the search page: the range as it is (relative), or frozen.
    await page.getByRole('button', { name: 'Copy link' }).click();
    await page.getByRole('menuitem', { name: 'With this time range (relative)' }).click();
    await page.getByRole('status').filter({ hasText: 'Link copied.' }).waitFor();
    const relative = new URL(await page.evaluate(() => navigator.clipboard.readText()));
    expect(relative.searchParams.get('range')).toBe('last_24_hours');
    expect(relative.searchParams.get('from')).toBeNull();
    await page.getByRole('button', { name: 'Copy link' }).click();
    await page.getByRole('menuitem', { name: 'With this exact time (frozen)' }).click();
    await expect
      .poll(async () =>
        new URL(await page.evaluate(() => navigator.clipboard.readText())).searchParams.get('from'),
      )
      .toMatch(/^\d+$/);
    // From an open event: the link opens it too.
    await page.locator('tr.event-row').nth(1).click();
    await page.waitForURL(/ev=/);
    const dialog = page.getByRole('dialog', { name: 'Event' });
    await dialog.getByRole('button', { name: 'Copy link' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Link copied.' }).waitFor();
    link = await page.evaluate(() => navigator.clipboard.readText());
    const url = new URL(link);
    expect(url.origin).toBe(base);
    expect(url.searchParams.get('q')).toBe('app:nginx');
    expect(url.searchParams.get('from')).toMatch(/^\d+$/);
    expect(Number(url.searchParams.get('to')) - Number(url.searchParams.get('from'))).toBe(86_400);
    expect(url.searchParams.get('sort')).toBe('host');
    expect(url.searchParams.get('ev')).toBeTruthy();
    expect(url.searchParams.get('range')).toBeNull();
    await page.keyboard.press('Escape');
  });

  it('a colleague opening the link in another browser sees the same search, sort, window and event', async () => {
    const other = await b.browser.newContext({
      viewport: { width: 1280, height: 800 },
      locale: 'de-DE',
      timezoneId: 'Asia/Tokyo',
    });
    await other.addInitScript(
      `window.localStorage.setItem('logscope.token', ${JSON.stringify(colleagueToken)})`,
    );
    const p = await other.newPage();
    const errors: string[] = [];
    p.on('pageerror', (e) => errors.push(e.message));
    await p.goto(link);
    await expect.poll(() => queryText(p)).toBe('app:nginx');
    await expect.poll(() => count(p).textContent()).toMatch(/^5 events$/);
    expect(await headerSort(p, 'Host')).toBe('ascending');
    const dialog = p.getByRole('dialog', { name: 'Event' });
    await dialog.waitFor();
    const ev = new URL(link).searchParams.get('ev');
    expect(await dialog.innerText()).toContain('nginx');
    expect(new URL(p.url()).searchParams.get('ev')).toBe(ev);
    // The window is the frozen one, whatever the time zone.
    expect(new URL(p.url()).searchParams.get('from')).toBe(new URL(link).searchParams.get('from'));
    await shot(p, 'link-opened-by-colleague');
    await axe(p, 'a link opened by a colleague', findings);
    await p.keyboard.press('Escape');
    // The link came from a saved search shared with their team: theirs to open, not to change.
    await p.getByRole('button', { name: 'Saved: nginx 500s' }).click();
    await p.getByRole('menuitem', { name: 'Open…' }).click();
    const open = p.getByRole('dialog', { name: 'Open a saved search' });
    await open.getByText('shared with you').waitFor();
    await shot(p, 'saved-search-open');
    await axe(p, 'open a saved search', findings);
    await open.getByRole('button', { name: 'nginx 500s' }).click();
    await p.getByRole('button', { name: 'Saved: nginx 500s' }).click();
    expect(await p.getByRole('menuitem', { name: 'Save', exact: true }).getAttribute('aria-disabled')).toBe(
      'true',
    );
    expect(await p.getByRole('menuitem', { name: 'Delete' }).getAttribute('aria-disabled')).toBe('true');
    await p.keyboard.press('Escape');
    expect(errors).toEqual([]);
    await other.close();
  }, 60_000);

  it('shows the open saved search as modified once its view is edited; Save updates it; then deletes it', async () => {
    await page.goto(`${base}/search`);
    await page.getByRole('button', { name: 'Saved', exact: true }).click();
    await page.getByRole('menuitem', { name: 'Open…' }).click();
    await page
      .getByRole('dialog', { name: 'Open a saved search' })
      .getByRole('button', { name: 'nginx 500s' })
      .click();
    await expect.poll(() => queryText(page)).toBe('app:nginx');
    await page.getByRole('button', { name: 'Saved: nginx 500s', exact: true }).waitFor();
    await page.getByRole('columnheader', { name: /^Time/ }).getByRole('button').click();
    await page.waitForURL(/sort=ts|(?!.*sort=)/);
    // Sorted otherwise, it is no longer the saved search: the menu says so and Save offers to update it.
    const modified = page.getByRole('button', { name: 'Saved: nginx 500s — modified', exact: true });
    await modified.click();
    await shot(page, 'saved-search-modified');
    await axe(page, 'a saved search modified, its menu open', findings);
    await page.getByRole('menuitem', { name: 'Update “nginx 500s”', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Saved “nginx 500s”.' }).waitFor();
    await page.getByRole('button', { name: 'Saved: nginx 500s', exact: true }).waitFor();
    const list = await t.as(colleagueToken, { method: 'GET', url: '/api/saved-searches?shared=true' });
    expect(list.json().results[0].sort).toEqual(['-ts']);
    // A query searched that is not the saved one: modified again.
    await page.getByRole('textbox', { name: 'Query' }).fill('app:nginx AND host:web-1');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => count(page).textContent()).toMatch(/^1 events?$/);
    await modified.waitFor();
    page.once('dialog', (d) => void d.accept());
    await modified.click();
    await page.getByRole('menuitem', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Saved', exact: true }).waitFor();
    const after = await t.as(colleagueToken, { method: 'GET', url: '/api/saved-searches?shared=true' });
    expect(after.json().results).toEqual([]);
    expect(new URL(page.url()).searchParams.get('saved')).toBeNull();
  });

  it('logged no errors in the browser console', () => {
    expect(consoleErrors).toEqual([]);
  });
});
