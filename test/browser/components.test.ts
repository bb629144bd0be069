import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import react from '@vitejs/plugin-react';
import type { Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config/config.js';
import { TIME_PRESETS } from '../../src/shared/time-presets.js';
import {
  ARTIFACTS,
  type AxeFinding,
  axe,
  type Browsing,
  closeAll,
  describeBrowser,
  openBrowser,
  requireChromium,
  shot,
  writeFindings,
} from './browser.js';

// Component tests of the search page's time picker and query box, each on a page of its
// own (components/harness.js, built with Vite as the app is) in Chromium: what the user
// sees and does, and what the component reports to the page (window.calls). The picker:
// its button and popover, the presets, From/To from the window shown, validated and read
// in the browser's zone, a range applied from elsewhere (a zoom, Back), Live. The query box: the
// plain input, then CodeMirror with highlighting, completion of fields and values from
// the page's list, Enter, one line, an error's mark. Setup: ./browser.ts.

const ORIGIN = 'http://harness.test';
/** A zone half an hour off whole hours, without daylight saving: From/To must be read in it. */
const ZONE = 'Asia/Kolkata';
const ZONE_OFFSET_S = 5.5 * 3600;
/** Unix seconds of a wall-clock time in ZONE. */
const zoned = (y: number, mo: number, d: number, h: number, mi: number, s = 0) =>
  Date.UTC(y, mo - 1, d, h, mi, s) / 1000 - ZONE_OFFSET_S;

const FIELDS = [
  {
    name: 'host',
    type: 'string',
    count: 100,
    top: [
      { value: 'web-1', count: 60 },
      { value: 'db "main"', count: 40 },
    ],
  },
  {
    name: 'status',
    type: 'number',
    count: 80,
    top: [
      { value: 500, count: 50 },
      { value: 404, count: 30 },
    ],
  },
  { name: 'http.method', type: 'string', count: 80, top: [{ value: 'GET', count: 80 }] },
];

describeBrowser('test/browser/components.test.ts', 'the time picker and the query box in Chromium', () => {
  let outDir: string;
  let b: Browsing;
  let page: Page;
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];

  const calls = () => page.evaluate(() => (window as unknown as { calls: unknown[][] }).calls);
  const clearCalls = () =>
    page.evaluate(() => void (window as unknown as { calls: unknown[][] }).calls.splice(0));
  /** Calls a setter of window.harness with a value. */
  const harness = (name: string, value: unknown) =>
    page.evaluate(
      ([n, v]) =>
        (window as unknown as { harness: Record<string, (x: unknown) => void> }).harness[n as string]?.(v),
      [name, value] as const,
    );
  async function open(component: 'picker' | 'query', props: object = {}) {
    const qs = new URLSearchParams({ component, props: JSON.stringify(props) });
    await page.goto(`${ORIGIN}/index.html?${qs}`);
  }

  beforeAll(async () => {
    requireChromium();
    mkdirSync(ARTIFACTS, { recursive: true });
    outDir = mkdtempSync(path.join(tmpdir(), 'logscope-harness-'));
    // React's production build, as the app's: vitest runs with NODE_ENV=test, which
    // Vite and the React plugin would follow.
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      await build({
        configFile: false,
        mode: 'production',
        root: path.join(PACKAGE_ROOT, 'test', 'browser', 'components'),
        base: '/',
        publicDir: false,
        logLevel: 'warn',
        plugins: [react()],
        build: { outDir, emptyOutDir: true, target: 'es2022', reportCompressedSize: false },
      });
    } finally {
      process.env.NODE_ENV = nodeEnv;
    }
    b = await openBrowser({ context: { timezoneId: ZONE }, consoleErrors });
    page = b.page;
    // The built files, served under a made-up origin (nothing listens).
    await b.context.route(`${ORIGIN}/**`, (route) => {
      const file = path.join(outDir, new URL(route.request().url()).pathname);
      return file.startsWith(outDir) ? route.fulfill({ path: file }) : route.abort();
    });
  }, 120_000);

  afterAll(async () => {
    writeFindings('components-findings.json', findings, consoleErrors);
    await closeAll(b, undefined);
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  }, 30_000);

  // --- The time picker -----------------------------------------------------------------

  const button = () => page.getByRole('button', { name: /^Time range: / });
  const popover = () => page.getByRole('dialog', { name: 'Time range' });
  const from = () => page.getByLabel('From', { exact: true });
  const to = () => page.getByLabel('To', { exact: true });
  const apply = () => page.getByRole('button', { name: 'Apply range' });
  const absolute = () => page.getByRole('group', { name: 'Absolute range' });
  const presets = () => popover().getByRole('group', { name: 'Presets' }).getByRole('button');
  /** The button's range as it reads (its name less "Time range: "). */
  const shownRange = async () => (await button().textContent())?.replace(/^Time range: |▾$/g, '');

  it('offers every preset in its popover; a preset chosen is reported once and closes it', async () => {
    await open('picker');
    expect(await shownRange()).toBe('Last hour');
    expect(await button().getAttribute('aria-haspopup')).toBe('dialog');
    expect(await popover().count()).toBe(0);
    await button().click();
    await popover().waitFor();
    expect(await presets().allInnerTexts()).toEqual(TIME_PRESETS.map((p) => p.label));
    expect(await presets().filter({ hasText: 'Last hour' }).getAttribute('aria-current')).toBe('true');
    await presets().filter({ hasText: 'Last 7 days' }).click();
    expect(await calls()).toEqual([['change', { kind: 'preset', preset: 'last_7_days' }]]);
    expect(await shownRange()).toBe('Last 7 days');
    expect(await popover().count()).toBe(0);
  });

  it('opens From/To at the window shown, in the browser’s zone, reporting nothing', async () => {
    const shown = { ts_from: zoned(2026, 3, 4, 5, 6), ts_to: zoned(2026, 3, 4, 17, 30, 15) };
    await open('picker', { shown });
    await button().click();
    await absolute().waitFor();
    expect(await from().inputValue()).toBe('2026-03-04 05:06:00');
    expect(await to().inputValue()).toBe('2026-03-04 17:30:15');
    // ISO and 24-hour though the browser's locale is en-US, the zone named beside them.
    const zoneNote = page.locator('#range-zone');
    // (Chromium's ICU names Asia/Kolkata by its older name.)
    expect(await zoneNote.textContent()).toMatch(
      /^YYYY-MM-DD HH:mm:ss, 24-hour, in Asia\/(Kolkata|Calcutta)$/,
    );
    expect(await from().getAttribute('aria-describedby')).toBe('range-zone');
    expect(await calls()).toEqual([]);
    await shot(page, 'component-time-picker');
    await axe(page, 'time picker with its popover open', findings);
  });

  it('validates From/To: each missing, From not before To; a valid range is reported in seconds', async () => {
    await open('picker');
    await button().click();
    await from().fill('');
    await apply().click();
    const alert = page.getByRole('alert');
    expect(await alert.textContent()).toBe('Enter a From date and time.');
    expect(await from().getAttribute('aria-invalid')).toBe('true');
    expect(await from().getAttribute('aria-describedby')).toBe(
      `range-zone ${await alert.getAttribute('id')}`,
    );

    // A US 12-hour time is not one.
    await from().fill('03/04/2026, 05:06:00 PM');
    await apply().click();
    expect(await alert.textContent()).toBe('Enter a From date and time.');

    await from().fill('2026-03-04 05:06');
    await to().fill('');
    await apply().click();
    expect(await alert.textContent()).toBe('Enter a To date and time.');

    await to().fill('2026-03-04 05:06:00');
    await apply().click();
    expect(await alert.textContent()).toBe('From must be before To.');
    await to().fill('2026-03-03 23:59:59');
    await apply().click();
    expect(await alert.textContent()).toBe('From must be before To.');
    expect(await calls()).toEqual([]);
    await shot(page, 'component-time-picker-invalid');

    // Enter in To applies, like the button; seconds count.
    await to().fill('2026-03-04T05:06:01');
    await to().press('Enter');
    expect(await calls()).toEqual([
      ['change', { kind: 'absolute', from: zoned(2026, 3, 4, 5, 6), to: zoned(2026, 3, 4, 5, 6, 1) }],
    ]);
    expect(await alert.count()).toBe(0);
    // Applied, the popover closes and the button names the range; opened again, From/To
    // hold what was applied.
    expect(await popover().count()).toBe(0);
    expect(await shownRange()).toBe('2026-03-04 05:06:00 to 05:06:01');
    await button().click();
    expect(await from().inputValue()).toBe('2026-03-04 05:06:00');
    expect(await to().inputValue()).toBe('2026-03-04 05:06:01');
    expect(await from().getAttribute('aria-invalid')).toBeNull();
  });

  it('shows a range applied from elsewhere (a zoom, Back) on its button, and From/To at it', async () => {
    await open('picker', {
      range: { kind: 'absolute', from: zoned(2025, 12, 31, 23, 0), to: zoned(2026, 1, 1, 1, 0) },
    });
    // Opened at an absolute range (from the address): the button names it.
    expect(await shownRange()).toBe('2025-12-31 23:00:00 to 2026-01-01 01:00:00');
    await button().click();
    expect(await from().inputValue()).toBe('2025-12-31 23:00:00');
    expect(await to().inputValue()).toBe('2026-01-01 01:00:00');

    // A zoom while the popover is open: it closes (what it offered was of the range before).
    await from().fill('');
    await apply().click();
    await page.getByRole('alert').waitFor();
    await harness('setRange', {
      kind: 'absolute',
      from: zoned(2026, 1, 1, 0, 15),
      to: zoned(2026, 1, 1, 0, 45, 30),
    });
    await popover().waitFor({ state: 'detached' });
    expect(await shownRange()).toBe('2026-01-01 00:15:00 to 00:45:30');
    await button().click();
    expect(await from().inputValue()).toBe('2026-01-01 00:15:00');
    expect(await to().inputValue()).toBe('2026-01-01 00:45:30');
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.keyboard.press('Escape');

    // Back to a preset: the button shows it.
    await harness('setRange', { kind: 'preset', preset: 'yesterday' });
    await expect.poll(shownRange).toBe('Yesterday (UTC)');
    expect(await calls()).toEqual([]);

    // A zoom from a preset: nothing opens (it would cover the timeline under the pointer);
    // the button names the range, and the popover opens at it.
    await harness('setRange', {
      kind: 'absolute',
      from: zoned(2026, 1, 2, 3, 0),
      to: zoned(2026, 1, 2, 4, 0),
    });
    await expect.poll(shownRange).toBe('2026-01-02 03:00:00 to 04:00:00');
    expect(await popover().count()).toBe(0);
    await button().click();
    expect(await from().inputValue()).toBe('2026-01-02 03:00:00');
    expect(await calls()).toEqual([]);
  });

  it('choosing the preset already applied reports it and closes the popover', async () => {
    await open('picker', { range: { kind: 'preset', preset: 'last_4_hours' } });
    await button().click();
    await presets().filter({ hasText: 'Last 4 hours' }).click();
    await popover().waitFor({ state: 'detached' });
    expect(await calls()).toEqual([['change', { kind: 'preset', preset: 'last_4_hours' }]]);
  });

  it('is disabled while Live, saying so, its popover closed', async () => {
    await open('picker', { range: { kind: 'absolute', from: 1_700_000_000, to: 1_700_003_600 } });
    await button().click();
    await popover().waitFor();
    await harness('setLive', true);
    await expect.poll(() => button().isDisabled()).toBe(true);
    expect(await shownRange()).toBe('Live (new events)');
    expect(await popover().count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Shift earlier' }).isDisabled()).toBe(true);
    await harness('setLive', false);
    await expect.poll(() => button().isDisabled()).toBe(false);
    expect(await shownRange()).toMatch(/^2023-11-1\d \d\d:\d\d:\d\d to \d\d:\d\d:\d\d$/);
  });

  // --- The query box -------------------------------------------------------------------

  const box = () => page.getByRole('textbox', { name: 'Query' });
  const editor = () => page.locator('.cm-content[aria-label="Query"]');
  const listbox = () => page.getByRole('listbox');
  /** The completion list open and taking keys (it ignores them for 75 ms after opening). */
  const listOpen = async () => {
    await listbox().waitFor();
    await page.waitForTimeout(150);
  };
  const boxText = () =>
    box().evaluate((el) =>
      el.tagName === 'INPUT' ? String((el as unknown as { value: string }).value) : (el.textContent ?? ''),
    );

  it('starts as a plain input and becomes the editor, keeping the name and the text', async () => {
    await page.addInitScript(() => {
      // Before the editor loads: the input is there at once.
      (window as unknown as { firstBox: string }).firstBox = '';
      new MutationObserver(() => {
        const w = window as unknown as { firstBox: string };
        if (!w.firstBox && document.querySelector('input#query')) w.firstBox = 'input';
      }).observe(document, { childList: true, subtree: true });
    });
    await open('query', { value: 'error host:web-1' });
    await editor().waitFor();
    expect(await page.evaluate(() => (window as unknown as { firstBox: string }).firstBox)).toBe('input');
    expect(await page.locator('input#query').count()).toBe(0);
    expect(await boxText()).toBe('error host:web-1');
    expect(await box().getAttribute('aria-keyshortcuts')).toBe('/');
  });

  it('highlights field names, values, keywords, operators, numbers and regexes apart', async () => {
    const query = 'host:"web-1" AND NOT status:>=500 OR path:/api\\/v[12]/ -user:root';
    await open('query', { value: query });
    await editor().waitFor();
    expect(await boxText()).toBe(query);
    const colour = (text: string) =>
      editor()
        .locator('span')
        .filter({ hasText: new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`) })
        .first()
        .evaluate((el) => getComputedStyle(el).color);
    const [field, value, keyword, operator, number, regexp] = await Promise.all([
      colour('host'),
      colour('"web-1"'),
      colour('AND'),
      colour('>='),
      colour('500'),
      colour('/api\\/v[12]/'),
    ]);
    // Each kind its own colour (operators share the keywords').
    expect(new Set([field, value, keyword, number, regexp]).size).toBe(5);
    expect(operator).toBe(keyword);
    expect(await colour('status')).toBe(field);
    expect(await colour('NOT')).toBe(keyword);
    await shot(page, 'component-query-box');
  });

  it('completes field names, then their values from the page’s list (quoted, numbers bare)', async () => {
    await open('query', { fields: FIELDS });
    await editor().waitFor();
    await box().click();
    await page.keyboard.type('htt');
    await listOpen();
    expect(await listbox().getByRole('option').allInnerTexts()).toEqual([
      expect.stringMatching(/^http\.method/),
    ]);
    await page.keyboard.press('Enter');
    expect(await boxText()).toBe('http.method:');
    await listOpen();
    await page.keyboard.press('Enter');
    expect(await boxText()).toBe('http.method:"GET"');
    expect((await calls()).some((c) => c[0] === 'submit')).toBe(false);

    // Values are the top ones in order, with their counts; quotes inside are escaped.
    await page.keyboard.type(' host:');
    await listOpen();
    expect(await listbox().locator('.cm-completionLabel').allInnerTexts()).toEqual([
      '"web-1"',
      '"db \\"main\\""',
    ]);
    expect(await listbox().locator('.cm-completionDetail').allInnerTexts()).toEqual(['60', '40']);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Tab');
    expect(await boxText()).toBe('http.method:"GET" host:"db \\"main\\""');

    // A number field's numbers stay bare.
    await page.keyboard.type(' status:');
    await listOpen();
    await page.keyboard.press('Enter');
    expect(await boxText()).toBe('http.method:"GET" host:"db \\"main\\"" status:500');
    expect((await calls()).filter((c) => c[0] === 'fields').length).toBeGreaterThan(0);
    await axe(page, 'query box with completion', findings);

    // Escape closes the list; Enter then searches what is there, on one line.
    await page.keyboard.type(' ho');
    await listOpen();
    await page.keyboard.press('Escape');
    await listbox().waitFor({ state: 'detached' });
    await clearCalls();
    await page.keyboard.press('Enter');
    expect(await calls()).toEqual([['submit', 'http.method:"GET" host:"db \\"main\\"" status:500 ho']]);
    expect(await editor().locator('.cm-line').count()).toBe(1);
  });

  it('keeps one line: pasted line breaks become spaces; a value set from outside replaces the text', async () => {
    await open('query', { value: 'a' });
    await editor().waitFor();
    await box().click();
    await page.keyboard.press('End');
    await page.evaluate(() => {
      const data = new DataTransfer();
      data.setData('text/plain', ' b\nc\r\nd');
      document
        .querySelector('.cm-content')
        ?.dispatchEvent(
          new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }),
        );
    });
    await expect.poll(boxText).toBe('a b c d');
    expect(await editor().locator('.cm-line').count()).toBe(1);
    expect((await calls()).at(-1)).toEqual(['change', 'a b c d']);

    // From outside (a filter from the field list): the editor shows it, reporting no change.
    await clearCalls();
    await harness('setValue', 'a b c d -host:"x"');
    await expect.poll(boxText).toBe('a b c d -host:"x"');
    expect(await calls()).toEqual([]);
  });

  it('marks a syntax error’s place (inside and at the end) until the text is edited', async () => {
    await open('query', { value: 'a AND (b OR ) c', errorAt: 12 });
    await editor().waitFor();
    const mark = page.locator('.cm-query-error');
    await mark.waitFor();
    expect(await mark.textContent()).toBe(')');
    expect(await box().getAttribute('aria-invalid')).toBe('true');
    expect(await box().getAttribute('aria-describedby')).toBe('query-error');

    // Another error at the end: a marker after the last character.
    await harness('setValue', 'status:(500 OR');
    await harness('setErrorAt', 14);
    await page.locator('.cm-query-error-end').waitFor();
    expect(await mark.count()).toBe(0);

    // Typing takes it away.
    await box().click();
    await page.keyboard.press('End');
    await page.keyboard.type(' 404)');
    await page.locator('.cm-query-error-end').waitFor({ state: 'detached' });
    expect(await box().getAttribute('aria-invalid')).toBeNull();
    expect(await boxText()).toBe('status:(500 OR 404)');
  });

  it('stays a plain input when asked; Enter submits it; an error makes it invalid and puts the cursor there', async () => {
    await page.addInitScript(() => window.localStorage.setItem('logscope.queryEditor', 'plain'));
    await open('query', { value: 'error AND NOT', errorAt: 13 });
    const input = page.locator('input#query');
    await input.waitFor();
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    expect(await input.evaluate((el) => (el as HTMLInputElement).selectionStart)).toBe(13);
    // Given time, it is still the input.
    await page.waitForTimeout(500);
    expect(await editor().count()).toBe(0);
    await input.fill('error');
    await input.press('Enter');
    expect((await calls()).at(-1)).toEqual(['submit', 'error']);
  });

  it('logged no errors in the browser console', () => {
    expect(consoleErrors).toEqual([]);
  });
});
