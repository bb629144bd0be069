import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  ARTIFACTS,
  type AxeFinding,
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
  writeFindings,
} from './browser.js';

// Settings → AI assistants (MCP) for a user who is no admin, in Chromium against a real
// server: the endpoint's address (the browser's origin where the server has no publicUrl),
// a token made for an assistant and shown once, a client's block copied with it and used
// as it is by the official MCP client, the token acting as the user; axe and screenshots
// at 1440 px, light and dark
// (test-artifacts/ui/settings-mcp-*.png). Setup: ./browser.ts.

const USER = { username: 'ada', password: 'ada-password-1', admin: false };

describeBrowser('test/browser/mcp-settings.test.ts', 'Settings → AI assistants (MCP), in Chromium', () => {
  let server: LiveApp;
  let b: Browsing;
  let page: Page;
  let session: string;
  let secret = '';
  let copied = '';
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];

  const section = () => page.getByRole('region', { name: 'AI assistants (MCP)' });
  const block = (title: string): Locator => section().getByRole('region', { name: title, exact: true });
  const blockText = async (title: string) => (await block(title).locator('pre').textContent()) ?? '';
  const asUser = (token: string, path: string, scheme = 'Bearer') =>
    fetch(`${server.base}${path}`, { headers: { authorization: `${scheme} ${token}` } });

  beforeAll(async () => {
    server = await startApp();
    session = await createUser(server.t, USER);
    const now = Math.floor(Date.now() / 1000) - 60;
    await ingest(server.t, [
      ...[1, 2, 3].map((i) => ({ app: 'billing', message: `invoice ${i} sent`, timestamp: now })),
    ]);
    b = await openBrowser({
      context: { viewport: { width: 1440, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] },
      token: session,
      consoleErrors,
    });
    page = b.page;
  }, 120_000);

  afterAll(async () => {
    writeFindings('mcp-settings-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('shows a user who is no admin the endpoint and every client’s block, with <token> for the token', async () => {
    await page.goto(`${server.base}/settings`);
    await section().waitFor();
    // No admin sections: this is a plain user's Settings.
    expect(await page.getByRole('region', { name: 'Users' }).count()).toBe(0);
    const endpoint = section().getByRole('textbox', { name: 'Endpoint URL' });
    await expect.poll(() => endpoint.inputValue()).toBe(`${server.base}/mcp`);
    for (const title of [
      'Claude Code',
      'VS Code',
      'Cursor',
      'Claude Desktop',
      'MCP Inspector',
      'MCP Inspector, command line',
      'A local model',
    ]) {
      const text = await blockText(title);
      expect(text, title).toContain(`${server.base}/mcp`);
      // VS Code's file asks for the token itself; every other block shows where it goes.
      if (title !== 'VS Code') expect(text, title).toContain('<token>');
    }
    // 127.0.0.1 is local: mcp-remote needs no --allow-http for it.
    expect(await blockText('Claude Desktop')).not.toContain('--allow-http');
    await axe(page, 'settings, AI assistants before a token', findings);
  });

  it('creates a USER token named mcp-<date>, shows it once, and fills it into the blocks', async () => {
    await section().getByRole('button', { name: 'Create token for an assistant' }).click();
    const shown = section().getByLabel('Assistant token');
    await shown.waitFor();
    secret = await shown.inputValue();
    expect(secret).toMatch(/^ls\w+_\w+$/);
    const note = await section().locator('.secret').innerText();
    expect(note).toContain('it is not shown again');
    expect(note).toContain('It reads what you read');

    // The server holds it as the user's own USER token, named by the date.
    const mine = (await (await asUser(session, '/api/authtokens?page_size=100', 'token')).json()) as {
      results: { name: string; token_type: string; key_id: string }[];
    };
    const made = mine.results.find((r) => secret.startsWith(`${r.key_id}_`));
    expect(made?.token_type).toBe('USER');
    expect(made?.name).toMatch(/^mcp-\d{4}-\d{2}-\d{2}$/);
    expect(note).toContain(`“${made?.name}”`);
    // The API tokens list above shows it without a reload.
    await page
      .getByRole('region', { name: 'API tokens' })
      .getByRole('cell', { name: made?.name ?? '', exact: true })
      .waitFor();

    expect(await blockText('Claude Code')).toBe(
      `claude mcp add --transport http logscope ${server.base}/mcp --header "Authorization: Bearer ${secret}"`,
    );
    expect(await blockText('VS Code')).not.toContain(secret);
    expect(await section().innerText()).not.toContain('<token>');
  });

  it('copies a client’s block to the clipboard, with the URL and the token', async () => {
    await block('Cursor').getByRole('button', { name: 'Copy the Cursor configuration' }).click();
    await block('Cursor').getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(await blockText('Cursor'));
    expect(JSON.parse(copied)).toEqual({
      mcpServers: {
        logscope: { url: `${server.base}/mcp`, headers: { Authorization: `Bearer ${secret}` } },
      },
    });
    await section().getByRole('button', { name: 'Copy the endpoint URL' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${server.base}/mcp`);
  });

  it('the copied block works as it is: the official MCP client searches the logs with it', async () => {
    const { url, headers } = (
      JSON.parse(copied) as { mcpServers: { logscope: { url: string; headers: Record<string, string> } } }
    ).mcpServers.logscope;
    const client = new Client({ name: 'settings-page-block', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name)).toContain('search_logs');
      const found = await client.callTool({
        name: 'search_logs',
        arguments: { query: 'app:billing', time_range: 'last_hour' },
      });
      expect(found.isError).toBe(false);
      expect(found.structuredContent).toMatchObject({ total: 3, returned: 3 });
    } finally {
      await client.close();
    }
  });

  it('the token acts as the user over HTTP, with the Bearer scheme the blocks give', async () => {
    const me = await asUser(secret, '/api/users/me');
    expect(me.status).toBe(200);
    expect(((await me.json()) as { username: string }).username).toBe(USER.username);
    expect((await asUser(`${secret}x`, '/api/users/me')).status).toBe(401);
    // It is no admin's: what the user may not do, it may not either.
    expect((await asUser(secret, '/api/users')).status).toBe(403);
  });

  it('looks right at 1440 px, light and dark, and passes axe in both', async () => {
    // The page's main area scrolls: a viewport as tall as the section shows all of it.
    const { height } = (await section().boundingBox()) ?? { height: 0 };
    await page.setViewportSize({ width: 1440, height: Math.ceil(height) + 400 });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await section().scrollIntoViewIfNeeded();
      await section().screenshot({ path: path.join(ARTIFACTS, `settings-mcp-1440-${scheme}.png`) });
      await axe(page, `settings, AI assistants with a new token (${scheme})`, findings);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1440, height: 900 });
  }, 60_000);

  it('shows the token no more once done, nor after a reload', async () => {
    await section().getByRole('button', { name: 'Done' }).click();
    expect(await section().getByLabel('Assistant token').count()).toBe(0);
    await expect.poll(() => blockText('Cursor')).toContain('Bearer <token>');
    await page.reload();
    await section().waitFor();
    await expect
      .poll(() => section().getByRole('textbox', { name: 'Endpoint URL' }).inputValue())
      .toBe(`${server.base}/mcp`);
    expect(await page.locator('body').innerText()).not.toContain(secret);
    await shot(page, 'settings-mcp-after-reload');
  });
});
