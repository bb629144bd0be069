import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { oncallReceiver } from '../helpers/oncall-receiver.js';
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
  signIn,
  startApp,
} from './browser.js';

// The Alerting page's forms of the on-call kinds and of a webhook's body template, in a real
// browser against a real server: PagerDuty, Opsgenie and Teams channels made through the
// form, their keys shown masked on reopening, an edit of another setting keeping them (the
// test notification that follows carries the key first given), "Send test" against a
// loopback receiver that checks each vendor's request shape, a bad template's error under
// its field, and the delivery history's channel type. Screenshots: /tmp/channel-forms-*.png.

const USERNAME = 'oncaller';
const PASSWORD = 'oncaller-password-1';
const ROUTING_KEY = 'R0UTINGKEY0000000000000000000042';
const API_KEY = 'og-api-key-7f3a';
const WEBHOOK_SECRET = 'hook-secret-1';

interface Hooked {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

describeBrowser('test/browser/alerting-channels.test.ts', 'alert channel forms in Chromium', () => {
  let server: LiveApp;
  let b: Browsing;
  let page: Page;
  let token = '';
  let vendor: Awaited<ReturnType<typeof oncallReceiver>>;
  const consoleErrors: string[] = [];
  // A webhook receiver that takes any body (the templated one is not JSON).
  const hooked: Hooked[] = [];
  const hook = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      hooked.push({ path: req.url ?? '', headers: req.headers, body });
      res.end('ok');
    });
  });
  let hookUrl = '';

  beforeAll(async () => {
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    vendor = await oncallReceiver();
    server = await startApp({ LOGSCOPE_PAGERDUTY_URL: vendor.base, LOGSCOPE_OPSGENIE_URL: vendor.base });
    token = await createUser(server.t, { username: USERNAME, password: PASSWORD, admin: false });
    b = await openBrowser({ consoleErrors });
    page = b.page;
    await signIn(page, server.base, { username: USERNAME, password: PASSWORD });
    await page.waitForURL((u) => u.pathname === '/search');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alerting' }).click();
    await page.getByRole('heading', { level: 1, name: 'Alerting' }).waitFor();
  }, 120_000);

  afterAll(async () => {
    await closeAll(b, server);
    hook.close();
    await vendor?.close();
  }, 30_000);

  const form = () => page.getByRole('form');
  const channels = async () => {
    const res = await server.app.inject({
      method: 'GET',
      url: '/api/channels',
      headers: { authorization: `token ${token}` },
    });
    expect(res.statusCode).toBe(200);
    return res.json().results as Array<{ id: number; name: string; type: string; config: object }>;
  };
  const formShot = (name: string) => form().screenshot({ path: `/tmp/channel-forms-${name}.png` });
  /** Creates a channel through the form: `fill` sets its kind's fields. */
  const create = async (name: string, type: string, fill: () => Promise<void>) => {
    await page.getByRole('heading', { name: 'New channel' }).waitFor();
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Type', { exact: true }).selectOption(type);
    await fill();
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Created channel “${name}”.` })
      .waitFor();
    return page.getByRole('row').filter({ hasText: name });
  };
  const edit = async (name: string) => {
    await page
      .getByRole('row')
      .filter({ hasText: name })
      .getByRole('button', { name: `Edit “${name}”` })
      .click();
    await page.getByRole('heading', { name: `Edit channel “${name}”` }).waitFor();
  };
  const save = async (name: string) => {
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Saved channel “${name}”.` })
      .waitFor();
    await page.getByRole('heading', { name: 'New channel' }).waitFor();
  };
  /** Send test in the edit form; its outcome. */
  const sendTest = async () => {
    await form().getByRole('button', { name: 'Send test' }).click();
    const status = form().getByRole('status');
    await expect.poll(() => status.textContent(), { timeout: 15_000 }).toMatch(/^(Sent in|Not sent)/);
    return status.textContent();
  };

  it('PagerDuty: made with its severity map, the key masked on reopening and kept by an edit; Send test', async () => {
    const row = await create('PD on-call', 'pagerduty', async () => {
      await page.getByLabel('Routing key').fill(ROUTING_KEY);
      await page.getByRole('group', { name: 'Severity map' }).getByLabel('High').selectOption('critical');
    });
    expect(await row.textContent()).toContain('routing key ********');
    await edit('PD on-call');
    expect(await page.getByLabel('Routing key').inputValue()).toBe('********');
    const map = page.getByRole('group', { name: 'Severity map' });
    expect(await map.getByLabel('High').inputValue()).toBe('critical');
    expect(await map.getByLabel('Critical').inputValue()).toBe('critical');
    expect(await map.getByLabel('Low').inputValue()).toBe('info');
    await map.getByLabel('Low').selectOption('warning');
    await formShot('pagerduty');
    await save('PD on-call');
    const [pd] = (await channels()).filter((c) => c.name === 'PD on-call');
    expect(pd?.config).toEqual({
      routing_key: '********',
      severity_map: { critical: 'critical', high: 'critical', medium: 'warning', low: 'warning' },
    });

    await edit('PD on-call');
    expect(await sendTest()).toMatch(/^Sent in \d+ ms\.$/);
    // The key first typed, kept through the edit: the test's trigger and resolve carry it.
    const sent = vendor.got.filter((r) => r.vendor === 'pagerduty');
    expect(sent.map((r) => [r.body.routing_key, r.body.event_action, r.problems])).toEqual([
      [ROUTING_KEY, 'trigger', []],
      [ROUTING_KEY, 'resolve', []],
    ]);
    await axe(page, 'Alerting: PagerDuty form');
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  it('Opsgenie: region and priority map, the API key masked and kept; Send test', async () => {
    await create('Opsgenie EU', 'opsgenie', async () => {
      await page.getByLabel('API key').fill(API_KEY);
      await page.getByLabel('Region').selectOption('eu');
      await page.getByRole('group', { name: 'Priority map' }).getByLabel('Low').selectOption('P5');
    });
    await edit('Opsgenie EU');
    expect(await page.getByLabel('API key').inputValue()).toBe('********');
    expect(await page.getByLabel('Region').inputValue()).toBe('eu');
    const map = page.getByRole('group', { name: 'Priority map' });
    expect(await map.getByLabel('Low').inputValue()).toBe('P5');
    await map.getByLabel('Medium').selectOption('P2');
    await formShot('opsgenie');
    await save('Opsgenie EU');
    const [og] = (await channels()).filter((c) => c.name === 'Opsgenie EU');
    expect(og?.config).toEqual({
      api_key: '********',
      region: 'eu',
      priority_map: { critical: 'P1', high: 'P2', medium: 'P2', low: 'P5' },
    });

    await edit('Opsgenie EU');
    expect(await sendTest()).toMatch(/^Sent in \d+ ms\.$/);
    const sent = vendor.got.filter((r) => r.vendor === 'opsgenie');
    expect(sent.map((r) => [r.headers.authorization, r.path.endsWith('/close'), r.problems])).toEqual([
      [`GenieKey ${API_KEY}`, false, []],
      [`GenieKey ${API_KEY}`, true, []],
    ]);
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  it('Teams: the workflow URL shown as its origin on reopening and kept by a rename; Send test', async () => {
    await create('Ops room', 'teams', async () => {
      await page.getByLabel('Workflow URL').fill(vendor.teamsUrl);
    });
    await edit('Ops room');
    expect(await page.getByLabel('Workflow URL').inputValue()).toBe(`${vendor.base}/********`);
    await formShot('teams');
    await page.getByLabel('Name').fill('Ops room (Teams)');
    await save('Ops room (Teams)');
    await edit('Ops room (Teams)');
    expect(await sendTest()).toMatch(/^Sent in \d+ ms\.$/);
    const sent = vendor.got.filter((r) => r.vendor === 'teams');
    expect(sent.map((r) => [r.path, r.query.get('sig'), r.problems])).toEqual([
      ['/teams/workflows/abc/triggers/manual/paths/invoke', 's3cr3tsig', []],
    ]);
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  it('Webhook: a bad body template is refused under its field; a good one sent as its content type, signed', async () => {
    await page.getByRole('heading', { name: 'New channel' }).waitFor();
    await page.getByLabel('Name').fill('Plain hook');
    await page.getByLabel('Type', { exact: true }).selectOption('webhook');
    await page.getByLabel('URL').fill(hookUrl);
    await page.getByLabel('Secret').fill(WEBHOOK_SECRET);
    // Folded on a new channel, so the form stays short.
    const fold = page.locator('summary', { hasText: 'Body template and content type' });
    expect(await page.getByLabel('Body template').isVisible()).toBe(false);
    await fold.click();
    const template = page.getByLabel('Body template');
    await template.fill('alert {{trigger.nmae}}');
    await page.getByLabel('Content type').fill('text/plain; charset=utf-8');
    const variables = page.getByRole('complementary', { name: 'Variables' });
    expect(await variables.textContent()).toContain('trigger.name');
    expect(await variables.textContent()).toContain('Each of samples: ev_id, ts, message.');
    await page.getByRole('button', { name: 'Create channel' }).click();
    // The message is the field's own description, and the field is marked invalid.
    const message = page.locator('#channel-body-template-error');
    await expect
      .poll(() => message.textContent())
      .toMatch(/^Unknown variable "trigger\.nmae" at line 1, column \d+\.$/);
    expect(await template.getAttribute('aria-describedby')).toContain('channel-body-template-error');
    expect(await template.getAttribute('aria-invalid')).toBe('true');
    await formShot('webhook-error');
    await axe(page, 'Alerting: webhook template error');

    await template.fill('{{headline}} ({{kind}})');
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.getByRole('status').filter({ hasText: 'Created channel “Plain hook”.' }).waitFor();
    await edit('Plain hook');
    expect(await page.getByLabel('Secret').inputValue()).toBe('********');
    expect(await page.getByLabel('Body template').inputValue()).toBe('{{headline}} ({{kind}})');
    await formShot('webhook');
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      await formShot('webhook-dark');
      await axe(page, 'Alerting: webhook form, dark theme');
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
    await page.getByLabel('Content type').fill('text/markdown');
    await save('Plain hook');
    await edit('Plain hook');
    expect(await sendTest()).toMatch(/^Sent in \d+ ms\.$/);
    const [got] = hooked;
    expect(got?.headers['content-type']).toBe('text/markdown');
    expect(got?.body).toMatch(/ \(test\)$/);
    const signature = createHmac('sha256', WEBHOOK_SECRET)
      .update(got?.body ?? '')
      .digest('hex');
    expect(got?.headers['x-logscope-signature']).toBe(`sha256=${signature}`);
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  it('the delivery history names each delivery’s channel type', async () => {
    const [teams] = (await channels()).filter((c) => c.type === 'teams');
    const res = await server.app.inject({
      method: 'POST',
      url: '/api/triggers',
      headers: { authorization: `token ${token}` },
      payload: { name: 'Pager word', query: 'pagerword', notify: [teams?.id] },
    });
    expect(res.statusCode, res.body).toBe(201);
    await ingest(server, [{ host: 'web-1', message: 'pagerword 1' }]);
    const history = page.getByRole('region', { name: 'Delivery history' });
    const delivery = history.getByRole('row').filter({ hasText: 'Pager word' });
    await delivery.waitFor({ timeout: 15_000 });
    expect(await history.getByRole('columnheader', { name: 'Channel type' }).count()).toBe(1);
    expect(await delivery.textContent()).toContain('Ops room (Teams)Teams');
    await history.screenshot({ path: '/tmp/channel-forms-history.png' });
    await shot(page, 'alerting-channels');
  });

  it('logged no errors in the browser console but the refused template’s 400', () => {
    expect(consoleErrors.filter((e) => !/status of 400/.test(e))).toEqual([]);
    expect(consoleErrors.length).toBeLessThanOrEqual(1);
  });
});
