import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { mcpClient, mcpPost, mcpUrl, rpc } from '../../helpers/mcp.js';
import { HOUR, seedWeb } from '../../helpers/seed.js';

/**
 * A tool call goes through the query admission of POST /api/query (queryLivePerUser: 1
 * here) and holds nothing once answered; a call past mcpToolTimeoutSeconds (3 here), one
 * whose connection closes and one that notifications/cancelled names stop their query.
 * The event store is held by a gate that, like the engines, gives up when its signal aborts.
 */

type Row = Record<string, unknown>;
const RANGE = { from: HOUR.ts_from, to: HOUR.ts_to };

let t: TestApp;
let url: string;
let client: Client;
let eve: { id: number; token: string };

beforeAll(async () => {
  t = await createTestApp({ LOGSCOPE_QUERY_LIVE_PER_USER: '1', LOGSCOPE_MCP_TOOL_TIMEOUT_SECONDS: '3' });
  eve = await t.user('eve-limits', { admin: true });
  await seedWeb(t);
  url = await mcpUrl(t);
  client = await mcpClient(url, t.adminToken);
});

afterAll(async () => {
  await client?.close();
  await t?.close();
});

afterEach(() => vi.restoreAllMocks());

/** Holds every statement of the event store until released or its signal aborts. */
function gate() {
  let release!: () => void;
  const opened = new Promise<void>((r) => (release = r));
  const original = t.rt.events.execute.bind(t.rt.events);
  vi.spyOn(t.rt.events, 'execute').mockImplementation(async (plan, opts) => {
    await new Promise<void>((resolve) => {
      void opened.then(resolve);
      opts?.signal?.addEventListener('abort', () => resolve(), { once: true });
    });
    return original(plan, opts);
  });
  return release;
}

const running = () => t.rt.services.runner.stats().IN_PROGRESS ?? 0;
const held = () => t.rt.services.runner.memory().jobs;
const text = (res: Record<string, unknown>) => (res.content as Array<{ text: string }>)[0]?.text ?? '';

describe('admission', () => {
  it('lets a user at queryLivePerUser − 1 make any number of calls in a row, holding nothing after', async () => {
    const jobs = held();
    for (let i = 0; i < 6; i++) {
      const res = await client.callTool({
        name: i % 2 ? 'aggregate' : 'search_logs',
        arguments: {
          query: i % 2 ? '* | stats count()' : `status:${i % 3 === 0 ? 200 : 404}`,
          time_range: RANGE,
        },
      });
      expect(res.isError, text(res)).toBe(false);
    }
    expect(held()).toBe(jobs);
    expect(running()).toBe(0);
  });

  it('refuses a call past queryLivePerUser with isError naming the limit and when to retry', async () => {
    const release = gate();
    const live = t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'TopN', params: { time_range: HOUR, field: 'host' } },
    });
    await eventually('a query running', () => running() === 1);
    for (const name of ['search_logs', 'list_streams']) {
      const res = await client.callTool({
        name,
        arguments: name === 'search_logs' ? { query: '', time_range: RANGE } : {},
      });
      expect(res.isError).toBe(true);
      expect(text(res)).toMatch(/at most 1/);
      expect(text(res)).toMatch(/Retry in 2 s/);
    }
    release();
    const res = await live;
    await t.as(t.adminToken, { method: 'GET', url: `/api/query/${res.json().query_id}/remove` });
    const audit = await t.as(t.adminToken, { method: 'GET', url: '/api/audit?action=mcp.tool&page_size=2' });
    expect((audit.json().results as Row[]).map((r) => r.outcome)).toEqual(['error', 'error']);
  });
});

describe('stopping a call', () => {
  it('stops a call past mcpToolTimeoutSeconds, answered isError, its query gone', async () => {
    const jobs = held();
    const release = gate();
    const started = Date.now();
    const res = await client.callTool({ name: 'search_logs', arguments: { query: '', time_range: RANGE } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(res.isError).toBe(true);
    expect(text(res)).toMatch(/longer than 3 s.*narrow the time range or the query/);
    expect(held()).toBe(jobs);
    expect(running()).toBe(0);
    release();
  });

  it('stops the query when the connection closes', async () => {
    const jobs = held();
    const release = gate();
    const aborted = new AbortController();
    const call = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminToken}` },
      body: JSON.stringify(
        rpc('tools/call', {
          name: 'aggregate',
          arguments: { query: '* | stats count()', time_range: RANGE },
        }),
      ),
      signal: aborted.signal,
    }).catch(() => 'closed');
    await eventually('a query running', () => running() === 1);
    aborted.abort();
    expect(await call).toBe('closed');
    // Stopped by the close, the gate still shut.
    await eventually('the query removed', () => held() === jobs);
    expect(running()).toBe(0);
    release();
  });

  it('stops the call notifications/cancelled names', async () => {
    const release = gate();
    const call = mcpPost(
      url,
      rpc('tools/call', { name: 'search_logs', arguments: { query: '', time_range: RANGE } }, 'c-1'),
      {
        token: t.adminToken,
      },
    );
    await eventually('a query running', () => running() === 1);
    // Another token's cancellation of the same id changes nothing.
    const cancel = (token: string) =>
      mcpPost(
        url,
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c-1' } },
        { token },
      );
    expect((await cancel(eve.token)).status).toBe(202);
    expect(running()).toBe(1);
    expect((await cancel(t.adminToken)).status).toBe(202);
    const res = await call;
    expect(res.status).toBe(200);
    const result = res.json().result as Row;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/cancelled/);
    expect(running()).toBe(0);
    release();
  });
});
