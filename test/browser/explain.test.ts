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

// "What changed" on the search page in Chromium against a real server: two hours of
// steady background with explicit `ts`; one kind of message stops, then in the last half
// hour one is ×15 and a new kind appears. A drag across the timeline (a mouse, then a finger)
// selects the focus; Explain lists the surge first with its badge, Filter in searches for
// it, the address reopens the panel, a steady range has no significant change, the button
// explains the whole range from the keyboard, a gone change searches its baseline; the
// trigger form's pattern-rate condition. Screenshots: /tmp/explain-*.png and test-artifacts/ui/.

const MIN = 60;
/** The range shown: two hours of whole minutes, ending 10 minutes ago. */
const T1 = Math.floor(Date.now() / 1000 / MIN) * MIN - 10 * MIN;
const T0 = T1 - 120 * MIN;
/** One kind of message stops here; the surge and the new kind start 6 minutes later. */
const STOP = T0 + 84 * MIN;
const TS = T0 + 90 * MIN;
/** A drag from here (88 min in: after the stop, before the surge) to the end. */
const DRAG = [0.73, 0.985] as const;

interface Sent {
  ts: number;
  app: string;
  host: string;
  message: string;
}

/** Per minute of the range: the steady background, then the changes from TS on. */
function makeEvents(): Sent[] {
  const out: Sent[] = [];
  for (let m = 0; m < 120; m++) {
    const at = (s: number) => T0 + m * MIN + s;
    const host = `web-${m % 3}`;
    for (let i = 0; i < 4; i++)
      out.push({
        ts: at(3 + i * 13),
        app: 'web',
        host,
        message: `GET /api/items/${m * 4 + i} 200 in ${12 + i} ms`,
      });
    out.push({
      ts: at(5),
      app: 'sshd',
      host,
      message: `Accepted publickey for deploy from 10.1.0.${m % 50} port ${40000 + m} ssh2`,
    });
    const surge = at(0) >= TS ? 15 : 1;
    for (let i = 0; i < surge; i++)
      out.push({
        ts: at(1 + i * 3.9),
        app: 'sshd',
        host,
        message: `Failed password for invalid user guest${(m + i) % 17} from 203.0.113.${(m * 7 + i) % 200} port ${50000 + i} ssh2`,
      });
    if (at(0) >= TS)
      for (let i = 0; i < 2; i++)
        out.push({
          ts: at(20 + i * 20),
          app: 'kernel',
          host,
          message: `Out of memory: Killed process ${3000 + m * 2 + i} (java)`,
        });
    if (at(0) < STOP)
      for (let i = 0; i < 2; i++)
        out.push({
          ts: at(30 + i * 10),
          app: 'backup',
          host,
          message: `Snapshot of volume vol-${m % 9} done in ${40 + i} s`,
        });
  }
  return out;
}

const n = (v: number) => v.toLocaleString('en-US');

describeBrowser('test/browser/explain.test.ts', 'What changed (Explain) in Chromium', () => {
  let server: LiveApp;
  let base: string;
  let b: Browsing;
  let page: Page;
  let events: Sent[];
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];

  const rangePath = `/search?from=${T0}&to=${T1}`;
  const count = () => page.getByRole('status').filter({ hasText: /events$|Search/ });
  const panel = () => page.getByRole('region', { name: 'Explain' });
  const changes = () => panel().getByRole('table', { name: 'Changes' });
  const rows = () => changes().locator('tbody tr');
  const param = (name: string) => new URL(page.url()).searchParams.get(name);
  const within = (from: number, to: number, pred: (e: Sent) => boolean = () => true) =>
    events.filter((e) => e.ts >= from && e.ts < to && pred(e)).length;
  const open = async (path: string) => {
    await page.goto(`${base}${path}`);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toMatch(/^[\d,]+ events$/);
  };
  /** Drags across the chart from `a` to `b` (fractions of its width). */
  const drag = async (a: number, bFrac: number) => {
    const box = await page.locator('svg.timeline-chart.zoomable').boundingBox();
    if (!box) throw new Error('no timeline');
    const y = box.y + box.height / 2;
    await page.mouse.move(box.x + box.width * a, y);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * ((a + bFrac) / 2), y, { steps: 4 });
    await page.mouse.move(box.x + box.width * bFrac, y, { steps: 4 });
    await page.mouse.up();
  };
  const explained = () => {
    const [from, to] = (param('explain') ?? '').split('-').map(Number) as [number, number];
    return { from, to };
  };

  beforeAll(async () => {
    server = await startApp();
    base = server.base;
    const token = await createUser(server.t, {
      username: 'analyst',
      password: 'analyst-password-1',
      admin: false,
    });
    events = makeEvents();
    await ingest(
      server.t,
      events.map((e) => ({ ...e, ts: new Date(e.ts * 1000).toISOString() })),
    );
    b = await openBrowser({
      context: { viewport: { width: 1440, height: 900 }, hasTouch: true },
      token,
      consoleErrors,
    });
    page = b.page;
  }, 120_000);

  afterAll(async () => {
    writeFindings('explain-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('a drag selects the focus; Explain lists the surge first with its badge, the new kind and the stop', async () => {
    await open(rangePath);
    expect(await count().textContent()).toBe(`${n(events.length)} events`);
    await drag(...DRAG);
    // Selected, not zoomed: the range stays, the selection offers Zoom in and Clear.
    const selected = page.getByRole('group', { name: /^Selected / });
    await selected.waitFor();
    expect(param('from')).toBe(String(T0));
    expect(await selected.getByRole('button').allTextContents()).toEqual(['Zoom in', 'Clear']);
    await shot(page, 'search-explain-selection');
    await page.getByRole('button', { name: 'Explain', exact: true }).click();
    await changes().waitFor();
    const focus = explained();
    expect(focus.from).toBeGreaterThan(STOP);
    expect(focus.from).toBeLessThan(TS);
    expect(focus.to).toBeLessThanOrEqual(T1);
    expect(param('baseline')).toBe('previous');
    // The panel takes the focus; the selection became the band of the window explained.
    expect(await panel().evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await selected.count()).toBe(0);
    expect(await page.locator('rect.timeline-explained').count()).toBe(1);

    const first = rows().first();
    expect(await first.locator('.explain-dir').textContent()).toBe('Up');
    expect(await first.locator('.pattern-template').innerText()).toMatch(
      /^Failed password for invalid user <\*> from <\*> port <\*> ssh2$/,
    );
    expect(await first.locator('mark.pattern-var').count()).toBe(3);
    // Its counts are the events of the surge in each window; the ratio as ×N.N.
    const isSurge = (e: Sent) => e.message.startsWith('Failed password');
    const length = focus.to - focus.from;
    const cells = await first.locator('td.num').allTextContents();
    expect(cells[0]).toBe(n(within(focus.from, focus.to, isSurge)));
    expect(cells[1]).toBe(n(within(focus.from - length, focus.from, isSurge)));
    expect(cells[2]).toMatch(/^×\d+\.\d$/);
    // Both totals, in the window cards.
    expect(await panel().locator('.explain-window-focus').innerText()).toContain(
      `${n(within(focus.from, focus.to))} events`,
    );
    expect(await panel().locator('.explain-window-baseline').innerText()).toContain(
      `${n(within(focus.from - length, focus.from))} events`,
    );
    // The new kind (no ratio) and the one that stopped.
    const oom = rows().filter({ hasText: 'Out of memory' });
    expect(await oom.locator('.explain-dir').textContent()).toBe('New');
    expect((await oom.locator('td.num').allTextContents())[2]).toBe('');
    expect(await rows().filter({ hasText: 'Snapshot of volume' }).locator('.explain-dir').textContent()).toBe(
      'Gone',
    );
    expect(await first.locator('.explain-score-bar').evaluate((el) => el.style.width)).toBe('100%');
    await page.mouse.move(0, 0);
    await page.screenshot({ path: '/tmp/explain-panel.png' });
    await shot(page, 'search-explain');
    await axe(page, 'search, Explain panel', findings);
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'search-explain-dark');
    await axe(page, 'search, Explain panel, dark', findings);
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('the address reopens the panel; Filter in searches for the change', async () => {
    const focus = explained();
    await page.reload();
    await changes().waitFor();
    expect(await rows().first().locator('.pattern-template').innerText()).toMatch(/^Failed password/);
    expect(explained()).toEqual(focus);
    expect(await page.locator('rect.timeline-explained').count()).toBe(1);

    await rows()
      .first()
      .getByRole('button', { name: /^Filter in / })
      .click();
    await expect.poll(() => queryText(page)).toMatch(/^pattern_id:[A-Za-z0-9]+$/);
    await expect
      .poll(() => count().textContent(), { timeout: 10_000 })
      .toBe(`${n(within(T0, T1, (e) => e.message.startsWith('Failed password')))} events`);
    expect(param('explain')).toBeNull();
    expect(await panel().count()).toBe(0);
    // Back: the panel again.
    await page.goBack();
    await changes().waitFor();
  });

  it('Exclude searches without the change and explains again; a gone change searches its baseline', async () => {
    await rows()
      .filter({ hasText: 'Out of memory' })
      .getByRole('button', { name: /^Exclude / })
      .click();
    await expect.poll(() => queryText(page)).toMatch(/^-pattern_id:[A-Za-z0-9]+$/);
    await expect.poll(() => rows().filter({ hasText: 'Out of memory' }).count()).toBe(0);
    await expect.poll(() => rows().count()).toBeGreaterThan(0);
    await rows().filter({ hasText: 'Snapshot of volume' }).locator('button.explain-term').click();
    await expect.poll(() => param('explain')).toBeNull();
    const focus = { from: Number(param('from')), to: Number(param('to')) };
    // The baseline window: before the focus, which started after the stop.
    expect(focus.to).toBeGreaterThan(STOP);
    expect(focus.to).toBeLessThan(TS);
    await expect
      .poll(() => count().textContent(), { timeout: 10_000 })
      .toBe(`${n(within(focus.from, focus.to, (e) => e.app === 'backup'))} events`);
  });

  it('a steady range: "No significant change"; the baseline control, custom included', async () => {
    await open(`${rangePath}&explain=${T0 + 40 * MIN}-${T0 + 60 * MIN}&baseline=previous`);
    await panel().getByText('No significant change').waitFor();
    expect(await changes().count()).toBe(0);
    const control = panel().getByLabel('Baseline');
    await control.selectOption('same_time_last_week');
    await expect.poll(() => param('baseline')).toBe('same_time_last_week');
    // Nothing a week before: what the focus has is new.
    await expect.poll(() => rows().count()).toBeGreaterThan(0);
    expect(await rows().first().locator('.explain-dir').textContent()).toBe('New');
    await control.selectOption('custom');
    const custom = panel().getByRole('form', { name: 'Custom baseline' });
    await custom.getByLabel('From').fill('2026-13-01 00:00');
    await custom.getByRole('button', { name: 'Apply' }).click();
    await custom.getByRole('alert').waitFor();
    const local = (ts: number) =>
      page.evaluate((s) => {
        const d = new Date(s * 1000);
        const p = (v: number) => String(v).padStart(2, '0');
        return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
      }, ts);
    await custom.getByLabel('From').fill(await local(T0));
    await custom.getByLabel('To').fill(await local(T0 + 30 * MIN));
    await custom.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => param('baseline')).toBe(`${T0}-${T0 + 30 * MIN}`);
    await panel().getByText('No significant change').waitFor();
    expect(await panel().locator('.explain-window-baseline').innerText()).toContain(
      `${n(within(T0, T0 + 30 * MIN))} events`,
    );
  });

  it('from the keyboard: Explain without a selection explains the range shown', async () => {
    await open(rangePath);
    const button = page.getByRole('button', { name: 'Explain', exact: true });
    await button.focus();
    await page.keyboard.press('Enter');
    await changes().waitFor();
    expect(explained()).toEqual({ from: T0, to: T1 });
    // The previous period holds nothing: every kind of message is new.
    expect(await rows().first().locator('.explain-dir').textContent()).toBe('New');
    expect(await panel().evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Tab');
    expect(
      await page.evaluate(() => document.activeElement?.closest('[aria-label="Explain"]') !== null),
    ).toBe(true);
    await panel().getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => param('explain')).toBeNull();
  });

  it('a finger drags a selection too', async () => {
    await open(rangePath);
    const box = await page.locator('svg.timeline-chart.zoomable').boundingBox();
    if (!box) throw new Error('no timeline');
    const y = box.y + box.height / 2;
    const cdp = await page.context().newCDPSession(page);
    const touch = (type: 'touchStart' | 'touchMove' | 'touchEnd', x: number) =>
      cdp.send('Input.dispatchTouchEvent', {
        type,
        touchPoints: type === 'touchEnd' ? [] : [{ x: box.x + box.width * x, y }],
      });
    await touch('touchStart', 0.2);
    for (const x of [0.25, 0.3, 0.35, 0.4]) await touch('touchMove', x);
    await touch('touchEnd', 0.4);
    const selected = page.getByRole('group', { name: /^Selected / });
    await selected.waitFor();
    await selected.getByRole('button', { name: 'Zoom in' }).click();
    await expect.poll(() => Number(param('from'))).toBeGreaterThan(T0 + 20 * MIN);
    expect(Number(param('to'))).toBeLessThan(T0 + 50 * MIN);
  });

  it('the trigger form offers the pattern-rate condition with its fields and defaults', async () => {
    await page.goto(`${base}/triggers`);
    const form = page.getByRole('form', { name: 'New trigger' });
    await form.getByLabel('Name').fill('Surging messages');
    await form.getByLabel('Fires on').selectOption('pattern_rate');
    const values = {
      'Window (seconds)': '300',
      'Least ratio': '3',
      'Least count': '20',
      'Steady windows': '3',
    };
    for (const [label, value] of Object.entries(values))
      expect(await form.getByLabel(label).inputValue()).toBe(value);
    expect(await form.getByLabel('Baseline').inputValue()).toBe('previous');
    expect(await form.getByLabel('Direction').inputValue()).toBe('both');
    expect(await form.getByLabel('Baseline').locator('option').allTextContents()).toEqual([
      'The window before',
      'Same time last week',
      'The 24 hours before',
    ]);
    // Threshold fields are not shown for it.
    expect(await form.getByLabel('N (events)').count()).toBe(0);
    await form.getByLabel('Window (seconds)').fill('600');
    await form.getByLabel('Direction').selectOption('up');
    await form.getByLabel('Least ratio').fill('5');
    await page.screenshot({ path: '/tmp/explain-trigger-form.png' });
    await shot(page, 'trigger-pattern-rate');
    // A ratio the API refuses: its message at the field.
    await form.getByLabel('Least ratio').fill('1');
    await form.getByRole('button', { name: 'Create trigger' }).click();
    await expect
      .poll(() => form.getByLabel('Least ratio').getAttribute('aria-invalid'), { timeout: 10_000 })
      .toBe('true');
    await form.getByLabel('Least ratio').fill('5');
    const created = page.waitForResponse(
      (r) => r.url().endsWith('/api/triggers') && r.request().method() === 'POST',
    );
    await form.getByRole('button', { name: 'Create trigger' }).click();
    const res = await created;
    const sent = res.request().postDataJSON() as { condition: Record<string, unknown> };
    expect(sent.condition).toEqual({
      type: 'pattern_rate',
      window_seconds: 600,
      baseline: 'previous',
      direction: 'up',
      min_ratio: 5,
      min_count: 20,
      steady_windows: 3,
    });
    expect(res.status(), await res.text()).toBe(201);
    const row = page.getByRole('row').filter({ hasText: 'Surging messages' });
    await expect
      .poll(() => row.textContent())
      .toContain('A kind of message surges ×5 in 10 min against the window before (20 events at least)');
    // Edited, the form shows the condition as saved.
    await row.getByRole('button', { name: /^Edit / }).click();
    const edit = page.getByRole('form', { name: /^Edit trigger/ });
    expect(await edit.getByLabel('Fires on').inputValue()).toBe('pattern_rate');
    expect(await edit.getByLabel('Window (seconds)').inputValue()).toBe('600');
    expect(await edit.getByLabel('Direction').inputValue()).toBe('up');
    expect(await edit.getByLabel('Least ratio').inputValue()).toBe('5');
    await axe(page, 'triggers, pattern rate', findings);
  });
});
