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
  signIn,
  startApp,
  writeFindings,
} from './browser.js';

// Streams and teams in Settings (a rule checked as it is typed, with its count of the last
// 24 hours; readers; retention and hot days), the search page's stream picker, and what a user who may
// read no stream sees, in a real browser against a real server. Setup: ./browser.ts.

const ADMIN = 'warden';
const PASSWORD = 'warden-password-1';

describeBrowser('test/browser/access.test.ts', 'streams, teams and who reads what in Chromium', () => {
  let server: LiveApp;
  let t: LiveApp['t'];
  let base: string;
  let b: Browsing;
  let page: Page;
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    server = await startApp();
    ({ t, base } = server);
    const token = await createUser(t, { username: ADMIN, password: PASSWORD, admin: true });
    await createUser(t, { username: 'payer', password: 'payer-password-1', admin: false });
    await createUser(t, { username: 'nobody', password: 'nobody-password-1', admin: false });
    const now = Math.floor(Date.now() / 1000) - 60;
    await ingest(t, [
      ...Array.from({ length: 6 }, (_, i) => ({ app: 'payments', message: `charge ${i}`, timestamp: now })),
      ...Array.from({ length: 4 }, (_, i) => ({ app: 'nginx', message: `GET /${i}`, timestamp: now })),
    ]);
    b = await openBrowser({ token, consoleErrors });
    ({ page } = b);
  }, 120_000);

  afterAll(async () => {
    writeFindings('access-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('an admin makes a team and a stream; the rule is checked and counted as it is typed', async () => {
    await page.goto(`${base}/settings`);
    const teams = page.getByRole('region', { name: 'Teams' });
    await teams.getByRole('cell', { name: 'everyone', exact: true }).waitFor();
    await teams.getByRole('button', { name: 'New team' }).click();
    const teamDialog = page.getByRole('dialog', { name: 'New team' });
    await teamDialog.getByLabel('Name').fill('payments');
    await teamDialog.getByRole('checkbox', { name: 'payer' }).check();
    await teamDialog.getByRole('button', { name: 'Save' }).click();
    await teams.getByRole('row').filter({ hasText: 'payments' }).filter({ hasText: 'payer' }).waitFor();

    const streams = page.getByRole('region', { name: 'Streams' });
    await streams.getByRole('cell', { name: 'Default', exact: true }).waitFor();
    await streams.getByRole('button', { name: 'New stream' }).click();
    const dialog = page.getByRole('dialog', { name: 'New stream' });
    await dialog.getByLabel('Title').fill('Payments');
    // A syntax error shows on the field as it is typed, with the server's words.
    const before = consoleErrors.length;
    await dialog.getByLabel('Rule').fill('app:(payments');
    await expect.poll(() => dialog.getByRole('alert').first().textContent()).toMatch(/\S/);
    // The browser logs the refused request itself.
    consoleErrors.splice(before);
    await dialog.getByLabel('Rule').fill('app:payments');
    await expect
      .poll(() => dialog.getByText(/events in the last 24 hours match/).textContent())
      .toContain('6 events');
    await dialog.getByLabel('Retention (days)').fill('90');
    await dialog.getByRole('checkbox', { name: 'payments' }).check();
    await shot(page, 'settings-stream-dialog');
    await axe(page, 'settings, new stream dialog', findings);
    await dialog.getByRole('button', { name: 'Save' }).click();
    const row = streams
      .getByRole('row')
      .filter({ has: page.getByRole('cell', { name: 'Payments', exact: true }) });
    await row.waitFor();
    expect(await row.innerText()).toContain('team payments');
    expect(await row.innerText()).toContain('90 days');
    expect(await row.innerText()).toContain('6');

    // Default is read by no one but admins from now on.
    await streams.getByRole('button', { name: 'Edit stream Default' }).click();
    const def = page.getByRole('dialog', { name: 'Edit stream “Default”' });
    expect(await def.getByLabel('Rule').count()).toBe(0);
    await def.getByRole('checkbox', { name: 'everyone' }).uncheck();
    await def.getByRole('button', { name: 'Save' }).click();
    await streams
      .getByRole('row')
      .filter({ hasText: 'Default' })
      .filter({ hasText: 'admins only' })
      .waitFor();
    await shot(page, 'settings-streams-teams');
    await axe(page, 'settings with streams and teams', findings);
    // Two dialogs, two screenshots and two full axe runs: under a full suite's load past 20 s.
  }, 60_000);

  it('a stream’s hot days: above its retention the server’s 400 shows at the field; a valid value saves', async () => {
    const streams = page.getByRole('region', { name: 'Streams' });
    await streams.getByRole('button', { name: 'Edit stream Payments' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit stream “Payments”' });
    const hot = dialog.getByLabel('Hot days');
    expect(await hot.inputValue()).toBe('');
    const before = consoleErrors.length;
    await hot.fill('120');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => hot.getAttribute('aria-invalid')).toBe('true');
    const error = dialog
      .locator('.field')
      .filter({ has: page.getByLabel('Hot days') })
      .locator('.field-error');
    expect(await error.textContent()).toContain('90 days');
    // The retention was not changed: it is not marked.
    expect(await dialog.getByLabel('Retention (days)').getAttribute('aria-invalid')).toBe(null);
    // The browser logs the refused request itself.
    consoleErrors.splice(before);
    await shot(page, 'settings-stream-hot-days-refused');
    await axe(page, 'settings, stream dialog with a refused hot days', findings);
    await hot.fill('30');
    await dialog.getByRole('button', { name: 'Save' }).click();
    const row = streams
      .getByRole('row')
      .filter({ has: page.getByRole('cell', { name: 'Payments', exact: true }) });
    await expect.poll(() => row.innerText()).toContain('cold after 30 days');
    await shot(page, 'settings-streams-hot-days');
    const stored = await t.app.inject({
      method: 'GET',
      url: '/api/streams',
      headers: { authorization: `token ${t.adminToken}` },
    });
    const payments = stored.json().results.find((s: { title: string }) => s.title === 'Payments');
    expect(payments).toMatchObject({ retention_days: 90, hot_days: 30 });
  }, 60_000);

  it('the search page picks a stream into the query; its results are the stream’s', async () => {
    await page.goto(`${base}/search`);
    const picker = page.getByRole('combobox', { name: 'Stream' });
    await picker.waitFor();
    await picker.selectOption({ label: 'Payments' });
    await expect.poll(() => queryText(page)).toMatch(/^stream:\d+$/);
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: /event/ }).first().textContent())
      .toMatch(/\b6 events\b/);
    await picker.selectOption({ label: 'All streams' });
    // (An empty editor shows its placeholder.)
    await expect.poll(() => queryText(page)).not.toContain('stream:');
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: /event/ }).first().textContent())
      .toMatch(/\b10 events\b/);
  });

  it('a team member reads their stream only; a user who may read nothing is told whom to ask', async () => {
    const other = await b.browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    try {
      const p2 = await other.newPage();
      p2.setDefaultTimeout(10_000);
      await signIn(p2, base, { username: 'payer', password: 'payer-password-1' });
      await p2.waitForURL(/\/search/);
      await expect
        .poll(() => p2.getByRole('status').filter({ hasText: /event/ }).first().textContent())
        .toMatch(/\b6 events\b/);
      await p2.context().clearCookies();
      await p2.evaluate(() => window.localStorage.clear());
      await signIn(p2, base, { username: 'nobody', password: 'nobody-password-1' });
      await p2.waitForURL(/\/search/);
      await p2.getByText('You may read no stream yet').waitFor();
      await expect
        .poll(() => p2.getByRole('status').filter({ hasText: /event/ }).first().textContent())
        .toMatch(/\b0 events\b|No events/);
      await shot(p2, 'search-no-stream');
      await axe(p2, 'search, no readable stream', findings);
    } finally {
      await other.close();
    }
  });

  it('Settings lists the pipelines; one is written with a step of each kind, tried on pasted lines, saved and disabled', async () => {
    await page.goto(`${base}/settings`);
    const section = page.getByRole('region', { name: 'Pipelines' });
    await section.getByRole('cell', { name: /sshd/ }).first().waitFor();
    await section.getByRole('button', { name: 'New pipeline' }).click();
    const dialog = page.getByRole('dialog', { name: 'New pipeline' });
    await dialog.getByLabel('Name').fill('checkout');
    await dialog.getByLabel('Applies to (query)').fill('app:checkout');
    await dialog.getByLabel('Step kind').selectOption('kv');
    await dialog.getByRole('button', { name: 'Add step' }).click();
    await expect.poll(() => dialog.getByLabel('Steps (JSON)').inputValue()).toContain('"kv"');
    await dialog.getByLabel('Try it on').fill('{"app": "checkout", "message": "order=42 total=9.50"}');
    await dialog.getByRole('button', { name: 'Simulate' }).click();
    const sim = dialog.getByRole('region', { name: 'Simulation' });
    await expect.poll(() => sim.textContent()).toContain('"order": "42"');
    expect(await sim.textContent()).toContain('Applied: checkout');
    await shot(page, 'settings-pipeline-dialog');
    await axe(page, 'settings, pipeline editor with a simulation', findings);
    await dialog.getByRole('button', { name: 'Save' }).click();
    const row = section
      .getByRole('row')
      .filter({ has: page.getByRole('cell', { name: 'checkout', exact: true }) });
    await row.waitFor();
    await section.getByRole('button', { name: 'Disable checkout' }).click();
    await expect.poll(() => row.innerText()).toMatch(/\bNo\b/);
    const stored = await t.app.inject({
      method: 'GET',
      url: '/api/pipelines?page_size=1000',
      headers: { authorization: `token ${t.adminToken}` },
    });
    const mine = stored.json().results.find((p: { name: string }) => p.name === 'checkout');
    expect(mine).toMatchObject({
      when: 'app:checkout',
      enabled: false,
      steps: [{ kv: { field: 'message' } }],
    });
  });

  it('the audit trail in Settings shows who did what, filtered by action', async () => {
    await page.goto(`${base}/settings`);
    const audit = page.getByRole('region', { name: 'Audit trail' });
    await audit.getByRole('cell', { name: 'stream.create', exact: true }).first().waitFor();
    await audit.getByLabel('Actions').selectOption('stream.');
    await audit.getByRole('button', { name: 'Show' }).click();
    await expect
      .poll(async () => new Set(await audit.locator('td code').allTextContents()))
      .toEqual(new Set(['stream.create', 'stream.update']));
    const row = audit.getByRole('row').filter({ hasText: 'stream.create' }).first();
    expect(await row.innerText()).toContain(ADMIN);
    await shot(page, 'settings-audit');
    await axe(page, 'settings, audit trail', findings);
  });

  it('an event shows its context: the same source around it, the event marked; `c` opens it', async () => {
    await page.goto(`${base}/search?q=${encodeURIComponent('app:payments')}`);
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: /event/ }).first().textContent())
      .toMatch(/\b6 events\b/);
    await page.locator('tr.event-row').first().click();
    const dialog = page.getByRole('dialog', { name: 'Event' });
    await dialog.getByRole('button', { name: 'Show context' }).click();
    const lines = dialog.getByRole('list', { name: 'Lines around the event' });
    await expect.poll(() => lines.getByRole('listitem').count()).toBe(6);
    expect(await lines.locator('[aria-current="true"]').count()).toBe(1);
    // Without `app` the context is every event: the nginx lines too.
    await dialog.getByRole('checkbox', { name: 'app' }).uncheck();
    await expect.poll(() => lines.getByRole('listitem').count()).toBe(10);
    await shot(page, 'event-context');
    await axe(page, 'event dialog with its context', findings);
    await dialog.getByRole('button', { name: 'Close' }).click();
    // The key `c` on a row opens the event with its context shown.
    await page.locator('tr.event-row').nth(1).locator('button.row-open').focus();
    await page.keyboard.press('c');
    await page
      .getByRole('dialog', { name: 'Event' })
      .getByRole('list', { name: 'Lines around the event' })
      .waitFor();
    await page.keyboard.press('Escape');
  });

  it('the context opens centred on the event, the event marked as the current line', async () => {
    // 41 lines of one source a second apart: the one in the middle has 20 on each side.
    const start = Math.floor(Date.now() / 1000) - 600;
    await ingest(
      t,
      Array.from({ length: 41 }, (_, i) => ({
        app: 'batch',
        host: 'batch-1',
        message: `step ${i}`,
        timestamp: start + i,
      })),
    );
    await page.goto(`${base}/search?q=${encodeURIComponent('app:batch message:"step 20"')}`);
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: /event/ }).first().textContent())
      .toMatch(/\b1 events?\b/);
    await page.locator('tr.event-row').first().click();
    const dialog = page.getByRole('dialog', { name: 'Event' });
    await dialog.getByRole('button', { name: 'Show context' }).click();
    const lines = dialog.getByRole('list', { name: 'Lines around the event' });
    await expect.poll(() => lines.getByRole('listitem').count()).toBe(41);
    const current = lines.locator('[aria-current="true"]');
    expect(await current.textContent()).toMatch(/\bstep 20\b/);
    // Its centre is the list's centre, within a line, whatever the list scrolled to.
    const centred = async () => {
      const list = await lines.boundingBox();
      const line = await current.boundingBox();
      if (!list || !line) throw new Error('the list or its current line has no box');
      return Math.abs(line.y + line.height / 2 - (list.y + list.height / 2)) <= line.height;
    };
    await expect.poll(centred).toBe(true);
    expect(await lines.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
    // The mark is seen (a style of its own), not only announced.
    const style = (el: Element) => getComputedStyle(el).borderLeftStyle + getComputedStyle(el).fontWeight;
    expect(await current.evaluate(style)).not.toBe(await lines.getByRole('listitem').first().evaluate(style));
    await shot(page, 'event-context-centred');
    await axe(page, 'event dialog with a long context', findings);
    await page.keyboard.press('Escape');
  });

  it('logged no errors in the browser console', () => {
    expect(consoleErrors).toEqual([]);
  });
});
