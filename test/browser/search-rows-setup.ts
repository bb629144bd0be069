import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { ARTIFACTS, createUser, ingest, type LiveApp, shot } from './browser.js';

// What the result-rows browser tests (search-rows*.test.ts) share: their events and the
// search page's parts they look at.

export const USER = { username: 'rower', password: 'rower-password-1', admin: false };
/** One event of each, newest first: critical on web-1, error on web-2, warning on web-1, … */
export const SEVERITIES = ['critical', 'error', 'warning', 'notice', 'info', 'debug'] as const;
/** Events of 65,000 characters (the store keeps 64 KiB of a message). */
export const BIG = 20;
const BIG_CHARS = 65_000;
/** Where screenshots are copied to be looked at (besides test-artifacts/ui). */
const SHOTS = '/tmp/shots';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The six `app:rowtest` events and the BIG `app:bigmsg` ones, and with `bulk` that many
 * `app:bulk` ones; the user signed in: their token.
 */
export async function ingestRows(server: LiveApp, bulk = 0): Promise<string> {
  const token = await createUser(server.t, USER);
  const now = Date.now();
  await ingest(
    server.t,
    SEVERITIES.map((severity, i) => ({
      '@timestamp': iso(now - (i + 1) * 60_000),
      host: i % 2 ? 'web-2' : 'web-1',
      app: 'rowtest',
      severity,
      message: `rowtest ${severity} event ${i}: GET /api/v1/orders?page=${i} answered in ${10 + i} ms`,
    })),
  );
  const words = 'lorem ipsum dolor sit amet consectetur adipiscing elit ';
  await ingest(
    server.t,
    Array.from({ length: BIG }, (_, i) => ({
      '@timestamp': iso(now - 2 * 3_600_000 - i * 1000),
      host: 'big-1',
      app: 'bigmsg',
      severity: 'info',
      message: `big ${i} ${words.repeat(Math.ceil(BIG_CHARS / words.length))}`.slice(0, BIG_CHARS),
    })),
  );
  for (let from = 0; from < bulk; from += 2_500)
    await ingest(
      server.t,
      Array.from({ length: Math.min(2_500, bulk - from) }, (_, k) => {
        const i = from + k;
        return {
          '@timestamp': iso(now - 3 * 3_600_000 - i * 1_000),
          host: `bulk-${i % 7}`,
          app: 'bulk',
          severity: SEVERITIES[i % SEVERITIES.length],
          message: `bulk event ${i} user=${i % 97} path=/api/v1/items/${i} status=${200 + (i % 5)}`,
        };
      }),
    );
  return token;
}

/** The search page's parts the tests look at, and how they get there. */
export function rowsPage(page: () => Page, base: () => string) {
  const count = () =>
    page()
      .getByRole('status')
      .filter({ hasText: /events$|Search/ });
  const results = () => page().getByRole('region', { name: 'Results' });
  const rows = () => results().locator('tbody tr.event-row');
  const header = (name: string) => results().getByRole('columnheader', { name: new RegExp(`^${name}`) });
  const events = (n: number) => `${n.toLocaleString('en-US')} events`;
  return {
    count,
    results,
    rows,
    header,
    events,
    width: async (name: string) => (await header(name).boundingBox())?.width ?? 0,
    headers: () => results().locator('thead th').allInnerTexts(),
    param: (name: string) => new URL(page().url()).searchParams.get(name),
    /** The search page for `query` over the last 24 hours, its rows shown. */
    open: async (query: string, total: number, extra = '') => {
      await page().goto(`${base()}/search?range=last_24_hours&q=${encodeURIComponent(query)}${extra}`);
      await expect.poll(() => count().textContent(), { timeout: 15_000 }).toBe(events(total));
      await rows().first().waitFor();
    },
    /** The reader's own columns, widths and wrapping forgotten. */
    forget: async () => {
      if (!page().url().startsWith(base())) await page().goto(`${base()}/search`);
      await page().evaluate(() => {
        for (const key of ['logscope.columns', 'logscope.columnWidths', 'logscope.wrapRows'])
          window.localStorage.removeItem(key);
      });
    },
    /** A screenshot in test-artifacts/ui, copied to /tmp/shots to be looked at. */
    snap: async (name: string) => {
      await shot(page(), name);
      mkdirSync(SHOTS, { recursive: true });
      copyFileSync(path.join(ARTIFACTS, `${name}.png`), path.join(SHOTS, `${name}.png`));
    },
  };
}
