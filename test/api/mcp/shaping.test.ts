import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { mcpClient, mcpPost, mcpUrl, rpc } from '../../helpers/mcp.js';

/**
 * What the tools' answers and refusals look like (docs/mcp.md): a 5,000-character message
 * cut to 2,000 and named in cut_events, many long events cut down to 262,144 bytes by
 * leaving whole events out, limits above their maximum clamped, every other bad argument an
 * `isError` result naming it (HTTP 200), and one audit record per tools/call.
 */

type Row = Record<string, unknown>;
const MIN = 60_000;
const B0 = Math.floor(Date.now() / MIN) * MIN - 90 * MIN;
const iso = (ms: number) => new Date(ms).toISOString();
const RANGE = { from: iso(B0), to: iso(B0 + 60 * MIN) };

let t: TestApp;
let url: string;
let client: Client;
let longId: string;

async function call(name: string, args: Row) {
  return client.callTool({ name, arguments: args });
}

async function ok(name: string, args: Row): Promise<Row> {
  const res = await call(name, args);
  expect(res.isError, JSON.stringify(res.content)).toBe(false);
  return res.structuredContent as Row;
}

/** The text of an isError result. */
async function refusal(name: string, args: Row): Promise<string> {
  const res = await call(name, args);
  expect(res.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
  expect(res.structuredContent).toBeUndefined();
  return (res.content as Array<{ type: string; text: string }>)[0]?.text ?? '';
}

beforeAll(async () => {
  t = await createTestApp();
  const big = 'é'.repeat(1900);
  const lines: Row[] = [
    // The long one: its message and a field over 2,000 characters.
    {
      ts: (B0 + 30 * MIN) / 1000,
      app: 'long',
      host: 'h',
      message: `start ${'x'.repeat(4994)}`,
      detail: 'y'.repeat(3000),
    },
    // 300 events of ~3.8 KB of JSON each: 200 of them are over 262,144 bytes.
    ...Array.from({ length: 300 }, (_, i) => ({
      ts: (B0 + i * 1000) / 1000,
      app: 'bulk',
      host: 'h',
      message: `${i} ${big}`,
    })),
  ];
  const res = await t.as(t.adminToken, { method: 'POST', url: '/api/ingest', payload: lines });
  expect(res.json()).toMatchObject({ accepted: 301, rejected: 0 });
  url = await mcpUrl(t);
  client = await mcpClient(url, t.adminToken);
  longId = ((await ok('search_logs', { query: 'app:long', time_range: RANGE, limit: 1 })).events as Row[])[0]
    ?.ev_id as string;
});

afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe('caps', () => {
  it('cuts a 5,000-character message and a long field to 2,000 characters and names the event', async () => {
    const answer = await ok('search_logs', { query: 'app:long', time_range: RANGE });
    const e = (answer.events as Row[])[0] as Row;
    expect((e.message as string).length).toBe(2000);
    expect(e.message).toBe(`start ${'x'.repeat(1994)}`);
    expect((e.detail as string).length).toBe(2000);
    expect(answer).toMatchObject({ total: 1, returned: 1, truncated: true, cut_events: [longId] });
    const context = await ok('event_context', { ev_id: longId, by: [] });
    expect(context.cut_events).toContain(longId);
    expect(((context.anchor as Row).message as string).length).toBe(2000);
    expect(context.truncated).toBe(true);
  });

  it('keeps an answer within 262,144 bytes by leaving whole events out from the end', async () => {
    const answer = await ok('search_logs', { query: 'app:bulk', time_range: RANGE, limit: 200 });
    const bytes = Buffer.byteLength(JSON.stringify(answer));
    expect(bytes).toBeLessThanOrEqual(262_144);
    const events = answer.events as Row[];
    expect(events.length).toBeGreaterThan(40);
    expect(events.length).toBeLessThan(200);
    // Whole events, the newest first: what is there is the Search's first page, in order.
    const rest = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: {
        type: 'Search',
        params: {
          query: 'app:bulk',
          time_range: { ts_from: B0 / 1000, ts_to: B0 / 1000 + 3600 },
          page_size: 200,
        },
      },
    });
    const restIds = (rest.json().results.events as Row[]).map((e) => e.ev_id);
    expect(events.map((e) => e.ev_id)).toEqual(restIds.slice(0, events.length));
    expect(answer).toMatchObject({
      total: 300,
      returned: events.length,
      limit: 200,
      truncated: true,
      cut_events: [],
    });
    // The byte cap with nothing cut from any value still says truncated; a page that fits does not.
    const small = await ok('search_logs', {
      query: 'app:bulk',
      time_range: RANGE,
      limit: 5,
      fields: ['host'],
    });
    expect(small).toMatchObject({ returned: 5, truncated: true });
    const all = await ok('search_logs', { query: 'app:bulk AND "299 "', time_range: RANGE, limit: 5 });
    expect(all).toMatchObject({ total: 1, returned: 1, truncated: false });
  });

  it('takes a number above its maximum as the maximum', async () => {
    const answer = await ok('search_logs', {
      query: 'app:bulk',
      time_range: RANGE,
      limit: 10_000,
      fields: ['app'],
    });
    expect(answer).toMatchObject({ limit: 200, returned: 200, total: 300, truncated: true });
    // 100 events before (5,000 asked) are over the byte cap: the farthest are left out.
    const context = await ok('event_context', { ev_id: longId, before: 5000, after: 0, by: [] });
    const before = context.before as Row[];
    expect(Buffer.byteLength(JSON.stringify(context))).toBeLessThanOrEqual(262_144);
    expect(before.length).toBeGreaterThan(30);
    expect(before.length).toBeLessThan(100);
    const rest = await t.as(t.adminToken, {
      method: 'GET',
      url: `/api/events/${longId}/context?before=100&after=0&by=`,
    });
    const restBefore = rest.json().before as Row[];
    expect(before.map((e) => e.ev_id)).toEqual(restBefore.slice(-before.length).map((e) => e.ev_id));
    expect(context).toMatchObject({ more_before: true, truncated: true });
  });
});

describe('arguments', () => {
  const cases = (): Array<[string, Row, RegExp]> => [
    ['search_logs', { time_range: 'last_hour' }, /^query: missing/],
    ['search_logs', { query: '', time_range: 'last_hour', colour: 'red' }, /^colour: not an argument/],
    ['search_logs', { query: 42, time_range: 'last_hour' }, /^query: must be a string/],
    ['search_logs', { query: '', time_range: 'last_hour', limit: 'ten' }, /^limit: must be an integer/],
    ['search_logs', { query: '', time_range: 'last_hour', limit: 0 }, /^limit: must be at least 1/],
    ['search_logs', { query: '', time_range: 'last_hour', limit: 2.5 }, /^limit: must be an integer/],
    ['search_logs', { query: 'status:(', time_range: 'last_hour' }, /^query: .*(position|column|line)/i],
    ['search_logs', { query: 'error | stats count()', time_range: 'last_hour' }, /^query: .*aggregate/],
    ['top_patterns', { query: '* | top 5 host', time_range: 'last_hour' }, /^query: .*aggregate/],
    ['search_logs', { query: '', time_range: 'last_fortnight' }, /^time_range: .*preset/i],
    ['search_logs', { query: '', time_range: { from: 'next tuesday' } }, /^time_range\.from: .*ISO 8601/],
    [
      'search_logs',
      { query: '', time_range: { from: RANGE.to, to: RANGE.from } },
      /^time_range: from must be before to/,
    ],
    ['search_logs', { query: '', time_range: { from: -99_999_999_999 } }, /^time_range\.from: /],
    ['search_logs', { query: '', time_range: { since: 1 } }, /^time_range: /],
    [
      'search_logs',
      { query: '', time_range: 'last_hour', fields: ['a b'] },
      /^fields: "a b" is not a field name/,
    ],
    ['event_context', { ev_id: longId, by: ['host', 'not a field'] }, /^by: /],
    ['event_context', { ev_id: 'nope' }, /^ev_id: no event/],
    ['event_context', { ev_id: longId, before: -1 }, /^before: must be at least 0/],
    ['top_patterns', { time_range: 'last_hour', compare_to: 'never' }, /^compare_to: /],
    ['explain_changes', { time_range: RANGE, n: 0 }, /^n: must be at least 1/],
    ['explain_changes', { time_range: RANGE, min_score: -1 }, /^min_score: must be at least 0/],
    ['explain_changes', { time_range: RANGE, baseline: 'last_month' }, /^baseline: /],
    ['explain_changes', { time_range: RANGE, fields: ['message'] }, /^fields: /],
    ['list_fields', { query: 'x' }, /^time_range: missing/],
    ['list_streams', { all: true }, /^all: not an argument/],
  ];

  it('answers each wrong argument with an isError result naming it, over HTTP 200', async () => {
    for (const [name, args, text] of cases()) {
      const refused = await refusal(name, args);
      expect(refused, `${name} ${JSON.stringify(args)}`).toMatch(text);
      expect(refused).not.toMatch(/duckdb|clickhouse|binder|catalog/i);
    }
    const raw = await mcpPost(url, rpc('tools/call', { name: 'search_logs', arguments: { query: [] } }), {
      token: t.adminToken,
    });
    expect(raw.status).toBe(200);
    expect((raw.json().result as Row).isError).toBe(true);
  });

  it('answers arguments that are not an object as an isError result', async () => {
    const raw = await mcpPost(url, rpc('tools/call', { name: 'list_streams', arguments: [1, 2] }), {
      token: t.adminToken,
    });
    expect(raw.status).toBe(200);
    expect((raw.json().result as Row).isError).toBe(true);
  });
});

describe('audit', () => {
  it('records one mcp.tool record per call, ok or error, and no query.create of its own', async () => {
    const before = await t.as(t.adminToken, {
      method: 'GET',
      url: '/api/audit?action=query.create&page_size=1000',
    });
    const queriesBefore = before.json().count as number;
    const mcpCount = async () =>
      (await t.as(t.adminToken, { method: 'GET', url: '/api/audit?action=mcp.tool&page_size=1' })).json()
        .count as number;
    const callsBefore = await mcpCount();
    const longQuery = `"${'q'.repeat(1500)}"`;
    await ok('search_logs', { query: longQuery, time_range: RANGE, limit: 3 });
    await refusal('search_logs', { query: '', time_range: 'last_fortnight' });
    await client.callTool({ name: 'no_such_tool', arguments: {} }).catch(() => undefined);
    await client.listTools();
    await client.ping();
    const res = await t.as(t.adminToken, { method: 'GET', url: '/api/audit?action=mcp.tool&page_size=1000' });
    const records = res.json().results as Row[];
    const [unknown, refused, answered] = records as [Row, Row, Row];
    expect(answered).toMatchObject({
      action: 'mcp.tool',
      actor: { user_id: 1, username: 'admin', token_key_id: expect.any(String), address: '127.0.0.1' },
      target: { kind: 'mcp_tool', id: 'search_logs' },
      detail: { tool: 'search_logs', is_error: false, returned: 0 },
      outcome: 'ok',
    });
    const args = (answered.detail as Row).arguments as Row;
    expect((args.query as string).length).toBe(1000);
    expect(args.time_range).toEqual(RANGE);
    expect((answered.detail as Row).error).toBeUndefined();
    expect(refused).toMatchObject({
      target: { kind: 'mcp_tool', id: 'search_logs' },
      detail: {
        tool: 'search_logs',
        is_error: true,
        error: expect.stringMatching(/^time_range: /),
        returned: 0,
      },
      outcome: 'error',
    });
    expect(unknown).toMatchObject({
      target: { kind: 'mcp_tool', id: 'no_such_tool' },
      detail: { tool: 'no_such_tool', is_error: true, error: 'Unknown tool: no_such_tool' },
      outcome: 'error',
    });
    // The query the call ran is part of its record, not one of its own.
    const after = await t.as(t.adminToken, {
      method: 'GET',
      url: '/api/audit?action=query.create&page_size=1000',
    });
    expect(after.json().count).toBe(queriesBefore);
    // A call's returned counts its items.
    await ok('search_logs', { query: 'app:bulk', time_range: RANGE, limit: 7, fields: ['app'] });
    const last = await t.as(t.adminToken, { method: 'GET', url: '/api/audit?action=mcp.tool&page_size=1' });
    expect((last.json().results[0] as Row).detail).toMatchObject({ returned: 7, is_error: false });
    // Refused authentication is not recorded.
    await mcpPost(url, rpc('tools/call', { name: 'list_streams', arguments: {} }), {
      token: 'lsk_bad_token_0000',
    });
    expect(await mcpCount()).toBe(callsBefore + 4);
  });
});
