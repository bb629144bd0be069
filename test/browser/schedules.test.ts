import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { receiver } from '../helpers/webhook-receiver.js';
import {
  ARTIFACTS,
  axe,
  type Browsing,
  closeAll,
  createUser,
  describeBrowser,
  ingest,
  type LiveApp,
  openBrowser,
  shot,
  signIn,
  startApp,
} from './browser.js';

// The Schedules page in a real browser against a real server: a schedule made through the
// form (a saved search, a preset range, a cron whose reading and next runs come from the
// server's preview as it is typed, a zone, a webhook to deliver to), a bad cron refused at
// its field, Run now ending in a report listed under the schedule's reports and posted to
// the webhook, disabled from the list, edited to a dashboard's pdf, deleted. The viewer is
// in New York, the schedule in Berlin: times are shown in both. Screenshots:
// test-artifacts/ui/schedules-*.png, light and dark.

const USERNAME = 'scheduler';
const PASSWORD = 'scheduler-password-1';

interface ScheduleJson {
  id: number;
  name: string;
  source: Record<string, number>;
  format: string;
  time_range: { preset: string } | null;
  cron: string;
  time_zone: string;
  deliver_to: number[];
  enabled: boolean;
  keep_reports: number;
  next_run_at: string | null;
  last_run: { status: string; report_id: number | null } | null;
}

describeBrowser('test/browser/schedules.test.ts', 'the Schedules page in Chromium', () => {
  let server: LiveApp;
  let b: Browsing;
  let page: Page;
  let token = '';
  let hook: Awaited<ReturnType<typeof receiver>>;
  let hookChannel = 0;
  let search = 0;
  let dashboard = 0;
  const consoleErrors: string[] = [];

  const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await server.app.inject({
      method,
      url,
      headers: { authorization: `token ${token}` },
      ...(payload ? { payload } : {}),
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  };
  const schedules = async () => (await call('GET', '/api/schedules')).results as ScheduleJson[];
  const preview = async (cron: string, zone: string) =>
    (await call('GET', `/api/schedules/preview?${new URLSearchParams({ cron, time_zone: zone })}`)) as {
      description: string;
      next_runs: string[];
    };

  beforeAll(async () => {
    hook = await receiver();
    server = await startApp({ LOGSCOPE_PUBLIC_URL: 'http://logs.example.test' });
    token = await createUser(server.t, { username: USERNAME, password: PASSWORD, admin: false });
    await ingest(server, [
      { ts: new Date(Date.now() - 60_000).toISOString(), host: 'web-1', app: 'web', message: 'GET / 500' },
    ]);
    search = (await call('POST', '/api/saved-searches', { title: 'Web errors', query: 'app:web' })).id;
    dashboard = (await call('POST', '/api/dashboards', { title: 'Ops overview' })).id;
    // Enough sources for the form to offer a filter over them.
    for (let i = 1; i <= 8; i++)
      await call('POST', '/api/saved-searches', { title: `Filler ${i}`, query: `n:${i}` });
    hookChannel = (
      await call('POST', '/api/channels', {
        name: 'Reports hook',
        type: 'webhook',
        config: { url: hook.url },
      })
    ).id;
    await call('POST', '/api/channels', {
      name: 'Pager',
      type: 'pagerduty',
      config: { routing_key: 'r'.repeat(32) },
    });
    b = await openBrowser({ consoleErrors, context: { timezoneId: 'America/New_York' } });
    page = b.page;
    await signIn(page, server.base, { username: USERNAME, password: PASSWORD });
    await page.waitForURL((u) => u.pathname === '/search');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Schedules' }).click();
    await page.getByRole('heading', { level: 1, name: 'Schedules' }).waitFor();
  }, 120_000);

  afterAll(async () => {
    await closeAll(b, server);
    await hook?.close();
  }, 30_000);

  const form = () => page.getByRole('form');
  const formShot = (name: string) => form().screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
  const nextRuns = () => page.getByRole('status', { name: 'Next runs' });
  /** The instants the preview lists (its `<time datetime>`), once it shows `description`. */
  const shownRuns = async (description: string) => {
    await expect.poll(() => nextRuns().textContent(), { timeout: 10_000 }).toContain(`Runs ${description}`);
    await expect.poll(() => nextRuns().getAttribute('aria-busy')).toBe('false');
    return nextRuns()
      .locator('time')
      .evaluateAll((els) => els.map((e) => e.getAttribute('datetime')));
  };
  const row = (name: string) => page.getByRole('row').filter({ hasText: name });

  it('makes a schedule through the form: the preview follows the cron, a bad cron is refused at its field', async () => {
    await page.getByText('No schedules yet.').waitFor();
    await page.getByRole('button', { name: 'New schedule' }).click();
    await page.getByRole('heading', { name: 'New schedule' }).waitFor();
    // The browser's zone by default.
    expect(await page.getByLabel('Time zone').inputValue()).toBe('America/New_York');
    await page.getByLabel('Name').fill('Weekly web errors');
    // Ten sources: "Find a source" narrows the list to those whose title holds the text.
    const options = () => page.getByLabel('Source', { exact: true }).locator('option[value]:not([value=""])');
    expect(await options().count()).toBe(10);
    await page.getByLabel('Find a source').fill('WEB');
    await expect.poll(() => options().allTextContents()).toEqual(['Web errors']);
    await page.getByLabel('Source', { exact: true }).selectOption({ label: 'Web errors' });
    await page.getByLabel('Find a source').fill('');
    await page.getByLabel('Format').selectOption('csv');
    await page.getByLabel('Time range').selectOption('last_24_hours');
    await page.getByLabel('Time zone').fill('Europe/Berlin');

    // The default cron, read by the server in the zone; its runs are the server's.
    const monday = await preview('0 8 * * 1', 'Europe/Berlin');
    expect(monday.description).toBe('every Monday at 08:00 (Europe/Berlin)');
    expect(await shownRuns(monday.description)).toEqual(monday.next_runs);
    // Both zones: the schedule's and the viewer's.
    const headers = await nextRuns().getByRole('columnheader').allTextContents();
    expect(headers).toEqual(['In Europe/Berlin', 'Your time (America/New_York)']);

    // A preset changes the cron, and the preview follows.
    await page.getByRole('button', { name: 'Every day' }).click();
    expect(await page.getByLabel('Cron').inputValue()).toBe('0 8 * * *');
    const daily = await preview('0 8 * * *', 'Europe/Berlin');
    expect(await shownRuns(daily.description)).toEqual(daily.next_runs);
    expect(daily.next_runs).not.toEqual(monday.next_runs);

    // A bad cron: the server's message at the field, announced, and Create disabled.
    const cron = page.getByLabel('Cron');
    await cron.fill('0 24 * * *');
    const problem = page.locator('#schedule-cron-error');
    await expect.poll(() => problem.textContent(), { timeout: 10_000 }).toContain('hour: 24 is outside 0-23');
    expect(await problem.getAttribute('role')).toBe('alert');
    expect(await cron.getAttribute('aria-invalid')).toBe('true');
    expect(await cron.getAttribute('aria-describedby')).toContain('schedule-cron-error');
    expect(await page.getByRole('button', { name: 'Create schedule' }).isDisabled()).toBe(true);
    await formShot('schedules-form-error');
    await axe(page, 'Schedules: a bad cron');

    // An abbreviation is no zone: refused at the zone's field.
    await cron.fill('30 6 * * 1-5');
    const zone = page.getByLabel('Time zone');
    await zone.fill('CEST');
    const zoneProblem = page.locator('#schedule-zone-error');
    await expect.poll(() => zoneProblem.textContent(), { timeout: 10_000 }).toMatch(/\S/);
    expect(await zone.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('button', { name: 'Create schedule' }).isDisabled()).toBe(true);
    await zone.fill('Europe/Berlin');

    // Typed by hand: a weekday morning.
    const weekdays = await preview('30 6 * * 1-5', 'Europe/Berlin');
    expect(await shownRuns(weekdays.description)).toEqual(weekdays.next_runs);
    expect(await problem.count()).toBe(0);

    // Only the report-carrying channels are offered.
    const deliver = page.getByRole('group', { name: 'Deliver to' });
    expect(await deliver.getByRole('checkbox').count()).toBe(1);
    await deliver.getByLabel('Reports hook (Webhook)').check();
    await page.getByLabel('Keep reports').fill('3');
    await formShot('schedules-form');

    // A source deleted while the form was open: the server's 400 shown at Source.
    const source = page.getByLabel('Source', { exact: true });
    await source.selectOption({ label: 'Filler 8' });
    const gone = Number((await source.inputValue()).slice(2));
    const deleted = await server.app.inject({
      method: 'DELETE',
      url: `/api/saved-searches/${gone}`,
      headers: { authorization: `token ${token}` },
    });
    expect(deleted.statusCode).toBe(204);
    await page.getByRole('button', { name: 'Create schedule' }).click();
    const sourceProblem = page.locator('#schedule-source-error');
    await expect.poll(() => sourceProblem.textContent()).toContain('No such saved search');
    expect(await source.getAttribute('aria-invalid')).toBe('true');
    expect(await schedules()).toEqual([]);

    await source.selectOption({ label: 'Web errors' });
    await page.getByRole('button', { name: 'Create schedule' }).click();
    await page.getByRole('status').filter({ hasText: 'Created schedule “Weekly web errors”.' }).waitFor();

    const [made] = await schedules();
    expect(made).toMatchObject({
      name: 'Weekly web errors',
      source: { saved_search_id: search },
      format: 'csv',
      time_range: { preset: 'last_24_hours' },
      cron: '30 6 * * 1-5',
      time_zone: 'Europe/Berlin',
      deliver_to: [hookChannel],
      enabled: true,
      keep_reports: 3,
      last_run: null,
    });
    const listed = row('Weekly web errors');
    await listed.waitFor();
    // The cron's words come from the server after the list (one request for the page's crons).
    await expect.poll(() => listed.textContent()).toContain(weekdays.description);
    const text = await listed.textContent();
    expect(text).toContain('Web errors');
    expect(text).toContain('Not run yet');
    expect(await listed.locator('time').getAttribute('datetime')).toBe(made?.next_run_at);
    await shot(page, 'schedules-list');
    await axe(page, 'Schedules: the list');
  });

  it('runs it now: the run ends ok, its report is listed under the schedule and posted to the webhook', async () => {
    const listed = row('Weekly web errors');
    await listed.getByRole('button', { name: 'Run now: “Weekly web errors”' }).click();
    await page.getByRole('status').filter({ hasText: 'Started a run of “Weekly web errors”.' }).waitFor();
    await expect.poll(() => listed.locator('.status-badge').textContent(), { timeout: 20_000 }).toBe('ok');
    expect(await listed.textContent()).toContain('Sent to 1 of 1 channel');
    const [ran] = await schedules();
    expect(ran?.last_run?.report_id).toBeGreaterThan(0);
    const posted = JSON.parse((await eventually('the report webhook', () => hook.got[0])).body);
    expect(posted).toMatchObject({ kind: 'report', report: { id: ran?.last_run?.report_id } });

    await listed.getByRole('link', { name: 'Reports of “Weekly web errors”' }).click();
    await page.waitForURL(
      (u) => u.pathname === '/reports' && u.searchParams.get('schedule') === String(ran?.id),
    );
    await page.getByText('Only the reports of the schedule “Weekly web errors”.').waitFor();
    const report = page.getByRole('row').filter({ hasText: 'Weekly web errors ' });
    await report.getByText('READY').waitFor();
    expect(await page.getByRole('row').count()).toBe(2);
    await shot(page, 'schedules-reports');
    await page.getByRole('link', { name: 'Schedules' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'Schedules' }).waitFor();
  });

  it('disables it from the list: no next run', async () => {
    const listed = row('Weekly web errors');
    // Checked as the server answers: it changes once the change is saved.
    await listed.getByLabel('Enabled: Weekly web errors').click();
    await page.getByRole('status').filter({ hasText: 'Disabled “Weekly web errors”.' }).waitFor();
    await listed.getByText('— (disabled)').waitFor();
    expect(await listed.getByLabel('Enabled: Weekly web errors').isChecked()).toBe(false);
    const [s] = await schedules();
    expect(s).toMatchObject({ enabled: false, next_run_at: null });
  });

  it('edits it: the form holds what was saved; a dashboard as pdf, enabled again', async () => {
    await row('Weekly web errors').getByRole('button', { name: 'Edit “Weekly web errors”' }).click();
    await page.getByRole('heading', { name: 'Edit schedule “Weekly web errors”' }).waitFor();
    expect(await page.getByLabel('Cron').inputValue()).toBe('30 6 * * 1-5');
    expect(await page.getByLabel('Time zone').inputValue()).toBe('Europe/Berlin');
    expect(await page.getByLabel('Keep reports').inputValue()).toBe('3');
    expect(await page.getByLabel('Time range').inputValue()).toBe('last_24_hours');
    expect(await page.getByLabel('Reports hook (Webhook)').isChecked()).toBe(true);
    expect(await page.getByLabel('Enabled', { exact: true }).isChecked()).toBe(false);
    await page.getByLabel('Name').fill('Ops overview daily');
    await page.getByLabel('Source', { exact: true }).selectOption({ label: 'Ops overview' });
    await page.getByLabel('Format').selectOption('pdf');
    await page.getByLabel('Time range').selectOption('');
    await page.getByLabel('Enabled', { exact: true }).check();
    await page.getByRole('button', { name: 'Every Monday' }).click();
    await shownRuns((await preview('0 8 * * 1', 'Europe/Berlin')).description);
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      await formShot('schedules-form-dark');
      await axe(page, 'Schedules: the edit form, dark theme');
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved schedule “Ops overview daily”.' }).waitFor();
    const [s] = await schedules();
    expect(s).toMatchObject({
      name: 'Ops overview daily',
      source: { dashboard_id: dashboard },
      format: 'pdf',
      time_range: null,
      cron: '0 8 * * 1',
      enabled: true,
      deliver_to: [hookChannel],
    });
    expect(s?.next_run_at).not.toBeNull();
    await row('Ops overview daily').getByRole('link', { name: 'Ops overview', exact: true }).waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await shot(page, 'schedules-phone');
      await axe(page, 'Schedules: on a phone');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      await shot(page, 'schedules-list-dark');
      await axe(page, 'Schedules: the list, dark theme');
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
  });

  it('deletes it, once confirmed', async () => {
    page.once('dialog', (d) => void d.accept());
    await row('Ops overview daily').getByRole('button', { name: 'Delete “Ops overview daily”' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted “Ops overview daily”.' }).waitFor();
    await page.getByText('No schedules yet.').waitFor();
    expect(await schedules()).toEqual([]);
  });

  it('logged no errors in the browser console but the 400s of the bad cron, zone and source', () => {
    expect(consoleErrors.filter((e) => !/status of 400/.test(e))).toEqual([]);
  });
});
