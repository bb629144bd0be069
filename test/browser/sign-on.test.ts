import { createServer } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { loginAtProvider, startProvider, type TestProvider } from '../helpers/oidc.js';
import {
  type AxeFinding,
  axe,
  type Browsing,
  closeAll,
  describeBrowser,
  type LiveApp,
  openBrowser,
  shot,
  startApp,
  storedToken,
  writeFindings,
} from './browser.js';

// The whole sign-in with an OpenID provider through the web UI: the sign-in page's button,
// the provider's own login page (a real `oidc-provider` on loopback), and back to the page
// first asked for, signed in, with the session token never in an address. Setup: ./browser.ts.

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

describeBrowser('test/browser/sign-on.test.ts', 'single sign-on through the web UI in Chromium', () => {
  let server: LiveApp;
  let idp: TestProvider;
  let b: Browsing;
  let page: Page;
  let base: string;
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];
  const addresses: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    const issuerPort = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = await startApp(
      {
        LOGSCOPE_PUBLIC_URL: base,
        LOGSCOPE_OIDC: JSON.stringify({
          issuer: `http://127.0.0.1:${issuerPort}`,
          clientId: 'logscope',
          clientSecret: 'a-client-secret-long-enough-for-hs256-0123456789',
          label: 'Sign in with Example ID',
          adminGroups: ['ops'],
        }),
      },
      port,
    );
    idp = await startProvider(`${base}/api/auth/oidc/callback`, issuerPort);
    idp.users.set('sub-dana', { username: 'dana', groups: ['payments'] });
    b = await openBrowser();
    ({ page } = b);
    // Errors of Logscope's pages only: the provider's dev login page asks for a web font
    // this machine cannot reach.
    page.on('console', (m) => {
      if (m.type() === 'error' && m.location().url.startsWith(base)) consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(`page error: ${e.message}`));
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) addresses.push(f.url());
    });
  }, 120_000);

  afterAll(async () => {
    writeFindings('sign-on-findings.json', findings, consoleErrors);
    await closeAll(b, server);
    await idp?.close();
  }, 30_000);

  it('shows the provider’s button on the sign-in page, beside the password form', async () => {
    await page.goto(`${base}/tasks`);
    await page.waitForURL(/\/login\?next=%2Ftasks/);
    const button = page.getByRole('link', { name: 'Sign in with Example ID' });
    await button.waitFor();
    await expect(page.getByLabel('Password').isVisible()).resolves.toBe(true);
    await shot(page, 'sign-in-sso');
    await axe(page, 'sign-in-sso', findings);
  });

  // The provider's document is read once a process (docs/sign-on.md), not at each start,
  // so this runs before any sign-in has read it: a provider that never answered is told.
  it('says so on the sign-in page when the provider does not answer, and works once it does', async () => {
    await idp.pause();
    const other = await b.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const p = await other.newPage();
    await p.goto(`${base}/login`);
    await p.getByRole('link', { name: 'Sign in with Example ID' }).click();
    await p.getByRole('alert').filter({ hasText: 'does not answer' }).waitFor();
    await shot(p, 'sign-in-sso-unavailable');
    await axe(p, 'sign-in-sso-unavailable', findings);
    await other.close();
    await idp.resume();
    // And it works again by itself (the API route, without the browser).
    // (The provider's document is read again after a failure once a short wait has passed.)
    const res = await eventually('a sign-in start sends to the provider once it is back', async () => {
      const r = await server.t.as(null, { method: 'GET', url: '/api/auth/oidc/login' });
      return r.statusCode === 302 && String(r.headers.location).startsWith(idp.issuer) ? r : undefined;
    });
    idp.users.set('sub-erin', { username: 'erin', groups: [] });
    await expect(loginAtProvider(String(res.headers.location), 'sub-erin')).resolves.toBeInstanceOf(URL);
  });

  it('signs in at the provider and comes back to the page asked for, with no token in any address', async () => {
    await page.getByRole('link', { name: 'Sign in with Example ID' }).click();
    await page.waitForURL(new RegExp(`^http://127\\.0\\.0\\.1:${new URL(idp.issuer).port}/`));
    await page.locator('input[name="login"]').fill('sub-dana');
    await page.locator('input[name="password"]').fill('any-password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.waitForURL(`${base}/tasks`, { timeout: 15_000 });
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    const token = await storedToken(page);
    expect(token).toBeTruthy();
    for (const address of addresses) expect(address).not.toContain(String(token));
    const me = await server.t.as(String(token), { method: 'GET', url: '/api/users/me' });
    expect(me.json()).toMatchObject({ username: 'dana', sso: true, is_admin: false });
    await shot(page, 'signed-in-sso');
    expect(consoleErrors).toEqual([]);
  });
});
