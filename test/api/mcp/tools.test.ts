import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../../src/cli/demo-generator.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { mcpClient, mcpUrl } from '../../helpers/mcp.js';

/**
 * Every MCP tool against its REST twin, on the same events, for an admin and for a user
 * who may read one stream: the tool's answer is the REST answer with times as ISO 8601,
 * null values and `raw` left out (docs/mcp.md), and the restricted user sees through
 * every tool only the events of their stream.
 */

type Row = Record<string, unknown>;
const MIN = 60_000;
/** Whole minutes: the data spans [B0, B0 + 60 min), two hours back. */
const B0 = Math.floor(Date.now() / MIN) * MIN - 120 * MIN;
const iso = (ms: number) => new Date(ms).toISOString();
const RANGE = { from: iso(B0), to: iso(B0 + 60 * MIN) };
const REST_RANGE = { ts_from: B0 / 1000, ts_to: (B0 + 60 * MIN) / 1000 };
const SECOND_HALF = { from: iso(B0 + 30 * MIN), to: iso(B0 + 60 * MIN) };
const REST_SECOND_HALF = { ts_from: (B0 + 30 * MIN) / 1000, ts_to: (B0 + 60 * MIN) / 1000 };

/** A REST value shaped as the tools answer (an independent reading of docs/mcp.md). */
const isoOf = (seconds: unknown) =>
  typeof seconds === 'number' ? new Date(Math.round(seconds * 1000)).toISOString() : seconds;
function shapedEvent(e: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(e)) {
    if (v === null || k === 'raw') continue;
    out[k] = k === 'ts' || k === 'received_at' || k === 'stored_at' ? isoOf(v) : v;
  }
  return out;
}

let t: TestApp;
let url: string;
let admin: Client;
let bob: Client;
let bobToken: string;
const clients: Client[] = [];

/** A tool's structured answer; fails on an error result. */
async function tool(client: Client, name: string, args: Row): Promise<Row> {
  const res = await client.callTool({ name, arguments: args });
  expect(res.isError, JSON.stringify(res.content)).toBe(false);
  const structured = res.structuredContent as Row;
  // The text block is the same object.
  expect(JSON.parse((res.content as Array<{ text: string }>)[0]?.text ?? '')).toEqual(structured);
  return structured;
}

async function rest(token: string, type: string, params: Row): Promise<Row> {
  const res = await t.as(token, { method: 'POST', url: '/api/query', payload: { type, params } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().results as Row;
}

async function restGet(token: string, path: string): Promise<Row> {
  const res = await t.as(token, { method: 'GET', url: path });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Row;
}

beforeAll(async () => {
  t = await createTestApp();
  const b = await t.user('bob');
  bobToken = b.token;
  const call = (method: 'POST' | 'PATCH' | 'GET', path: string, payload?: object) =>
    t.as(t.adminToken, { method, url: path, ...(payload ? { payload } : {}) });
  const made = await call('POST', '/api/streams', {
    title: 'Auth',
    rule: 'app:sshd',
    readers: { users: [b.id] },
  });
  expect(made.statusCode, made.body).toBe(201);
  // The Default stream read by nobody but admins: bob reads Auth alone.
  const streams = (await call('GET', '/api/streams')).json().results as Array<{
    id: number;
    builtin: boolean;
  }>;
  const builtin = streams.find((s) => s.builtin);
  const patched = await call('PATCH', `/api/streams/${builtin?.id}`, { readers: { teams: [], users: [] } });
  expect(patched.statusCode, patched.body).toBe(200);
  const next = prng(7);
  const lines: Row[] = [];
  for (let i = 0; i < 360; i++) {
    const ts = (B0 + i * 10_000) / 1000;
    const r = next();
    if (r < 0.5)
      lines.push({
        ts,
        app: 'nginx',
        host: `web-${1 + (i % 3)}`,
        message: `GET /page/${i % 7} status ${i % 5 === 0 ? 500 : 200}`,
        status: i % 5 === 0 ? 500 : 200,
        severity: i % 5 === 0 ? 'error' : 'info',
      });
    else if (r < 0.8)
      lines.push({
        ts,
        app: 'sshd',
        host: 'bastion',
        // More failures in the second half: something for explain_changes to find.
        message:
          i > 180 && next() < 0.7
            ? `Failed password for user${i % 9} from 10.0.0.${i % 20} port ${40000 + i} ssh2`
            : `Accepted publickey for deploy from 10.0.1.${i % 5} port ${50000 + i} ssh2`,
        ssh_user: `user${i % 9}`,
      });
    else lines.push({ ts, app: 'payments', host: 'pay-1', message: `charge ${i} ok`, amount: i, note: null });
  }
  const res = await t.as(t.adminToken, { method: 'POST', url: '/api/ingest', payload: lines });
  expect(res.json()).toMatchObject({ accepted: 360, rejected: 0 });
  url = await mcpUrl(t);
  admin = await mcpClient(url, t.adminToken);
  bob = await mcpClient(url, bobToken);
  clients.push(admin, bob);
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await t?.close();
});

const users = () => [
  { who: 'admin', client: admin, token: t.adminToken },
  { who: 'bob', client: bob, token: bobToken },
];

describe('each tool equals its REST twin', () => {
  it('search_logs: a Search newest first, page_size = limit', async () => {
    for (const u of users()) {
      for (const args of [
        { query: '', time_range: RANGE, limit: 20 },
        { query: 'status:500 OR Failed', time_range: RANGE, limit: 7, fields: ['host', 'message', 'status'] },
      ]) {
        const answer = await tool(u.client, 'search_logs', args);
        const r = await rest(u.token, 'Search', {
          query: args.query,
          time_range: REST_RANGE,
          sort: ['-ts'],
          page_size: args.limit,
          ...(args.fields ? { fields: args.fields } : {}),
        });
        expect(answer.total, u.who).toBe(r.total);
        expect(answer.events, u.who).toEqual((r.events as Row[]).map(shapedEvent));
        expect(answer).toMatchObject({
          query: args.query,
          time_range: RANGE,
          limit: args.limit,
          returned: (r.events as Row[]).length,
          truncated: (r.events as Row[]).length < (r.total as number),
          cut_events: [],
        });
        for (const e of answer.events as Row[]) expect(e.raw).toBeUndefined();
      }
    }
  });

  it('aggregate: a Table, time cells as ISO', async () => {
    for (const u of users()) {
      for (const query of ['* | stats count() as n by app | sort app', '* | timechart span=10m count()']) {
        const answer = await tool(u.client, 'aggregate', { query, time_range: RANGE });
        const r = await rest(u.token, 'Table', { query, time_range: REST_RANGE });
        const columns = r.columns as Array<{ name: string; type: string }>;
        expect(answer.columns).toEqual(columns);
        expect(answer.rows, `${u.who} ${query}`).toEqual(
          (r.rows as unknown[][]).map((row) =>
            row.map((cell, i) => (columns[i]?.type === 'time' ? isoOf(cell) : cell)),
          ),
        );
        expect(answer.total_rows).toBe(r.total_rows);
        expect(answer.truncated).toBe(false);
      }
    }
    const timechart = await tool(admin, 'aggregate', {
      query: '* | timechart span=10m count()',
      time_range: RANGE,
    });
    expect((timechart.rows as unknown[][])[0]?.[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/);
  });

  it('event_context: the context route with the same before, after and by', async () => {
    for (const u of users()) {
      const anchor = (
        (await tool(u.client, 'search_logs', { query: '', time_range: RANGE, limit: 50 })).events as Row[]
      )[25];
      for (const args of [{ before: 5, after: 5 }, { before: 3, after: 0, by: [] as string[] }, {}]) {
        const answer = await tool(u.client, 'event_context', { ev_id: anchor?.ev_id, ...args });
        const by = 'by' in args ? `&by=${args.by?.join(',')}` : '';
        const r = await restGet(
          u.token,
          `/api/events/${anchor?.ev_id}/context?before=${args.before ?? 10}&after=${args.after ?? 10}${by}`,
        );
        expect(answer.anchor).toEqual(shapedEvent(r.anchor as Row));
        expect(answer.by).toEqual(r.by);
        expect(answer.before, u.who).toEqual((r.before as Row[]).map(shapedEvent));
        expect(answer.after, u.who).toEqual((r.after as Row[]).map(shapedEvent));
        expect(answer.more_before).toBe(r.before_cursor !== null);
        expect(answer.more_after).toBe(r.after_cursor !== null);
        expect(answer.truncated).toBe(r.before_cursor !== null || r.after_cursor !== null);
      }
    }
  });

  it('top_patterns: a Patterns query with the same n and compare_to, series left out', async () => {
    for (const u of users()) {
      for (const args of [
        { time_range: RANGE, n: 3 },
        {
          query: 'app:sshd',
          time_range: SECOND_HALF,
          n: 10,
          compare_to: { from: RANGE.from, to: SECOND_HALF.from },
        },
      ]) {
        const answer = await tool(u.client, 'top_patterns', args);
        const r = await rest(u.token, 'Patterns', {
          query: args.query ?? '',
          time_range: args.time_range === RANGE ? REST_RANGE : REST_SECOND_HALF,
          n: args.n,
          ...(args.compare_to
            ? { compare_to: { ts_from: REST_RANGE.ts_from, ts_to: REST_SECOND_HALF.ts_from } }
            : {}),
        });
        expect(answer.total).toBe(r.total);
        expect(answer.other).toBe(r.other);
        expect(answer.patterns, u.who).toEqual(
          (r.patterns as Row[]).map(({ series: _series, ...p }) => ({
            ...p,
            first_seen: isoOf(p.first_seen),
            last_seen: isoOf(p.last_seen),
            samples: (p.samples as Row[]).map((s) => ({ ...s, ts: isoOf(s.ts) })),
          })),
        );
        expect(answer.truncated).toBe((r.other as number) > 0);
        expect((answer.patterns as Row[]).length).toBeGreaterThan(0);
      }
    }
  });

  it('list_fields: GET /api/fields', async () => {
    for (const u of users()) {
      for (const query of [undefined, 'app:sshd OR app:payments']) {
        const answer = await tool(u.client, 'list_fields', {
          time_range: RANGE,
          ...(query ? { query } : {}),
        });
        const r = await restGet(
          u.token,
          `/api/fields?time_range=${encodeURIComponent(JSON.stringify(REST_RANGE))}${query ? `&query=${encodeURIComponent(query)}` : ''}`,
        );
        expect(answer).toEqual({ time_range: RANGE, ...r });
      }
    }
  });

  it('list_streams: GET /api/streams?counts=true', async () => {
    for (const u of users()) {
      const answer = await tool(u.client, 'list_streams', {});
      const r = (await restGet(u.token, '/api/streams?counts=true')).results as Row[];
      expect(answer.streams).toEqual(
        r.map((s) => ({
          id: s.id,
          title: s.title,
          description: s.description,
          rule: s.rule,
          builtin: s.builtin,
          retention_days: s.retention_days,
          event_count: s.event_count,
        })),
      );
    }
  });

  it('explain_changes: an Explain query, windows and sample times as ISO', async () => {
    for (const u of users()) {
      const answer = await tool(u.client, 'explain_changes', { time_range: SECOND_HALF, min_score: 1 });
      const r = await rest(u.token, 'Explain', { time_range: REST_SECOND_HALF, min_score: 1 });
      const window = (w: unknown) => {
        const x = w as { ts_from: number; ts_to: number };
        return { from: isoOf(x.ts_from), to: isoOf(x.ts_to) };
      };
      expect(answer).toEqual({
        query: '',
        focus: window(r.focus),
        baseline: window(r.baseline),
        focus_total: r.focus_total,
        baseline_total: r.baseline_total,
        fields: r.fields,
        tested: r.tested,
        min_score: r.min_score,
        changes: (r.changes as Row[]).map((c) =>
          c.samples ? { ...c, samples: (c.samples as Row[]).map((s) => ({ ...s, ts: isoOf(s.ts) })) } : c,
        ),
        truncated: false,
      });
      expect(answer.focus).toEqual(SECOND_HALF);
      expect(answer.baseline).toEqual({ from: RANGE.from, to: SECOND_HALF.from });
      expect((answer.changes as Row[]).length, u.who).toBeGreaterThan(0);
    }
  });
});

describe('a user who may read one stream, through every tool', () => {
  it('sees only that stream’s events', async () => {
    const search = await tool(bob, 'search_logs', { query: '', time_range: RANGE, limit: 200 });
    const all = await tool(admin, 'search_logs', { query: 'app:sshd', time_range: RANGE, limit: 1 });
    expect(search.total).toBe(all.total);
    expect(new Set((search.events as Row[]).map((e) => e.app))).toEqual(new Set(['sshd']));
    const hidden = await tool(bob, 'search_logs', { query: 'app:nginx', time_range: RANGE, limit: 5 });
    expect(hidden).toMatchObject({ total: 0, events: [] });

    // stream: narrows as in a REST query; naming a stream one may not read is an error naming the query.
    const named = await tool(bob, 'search_logs', { query: 'stream:Auth', time_range: RANGE, limit: 1 });
    expect(named.total).toBe(all.total);
    const other = await bob.callTool({
      name: 'search_logs',
      arguments: { query: 'stream:Default', time_range: RANGE },
    });
    expect(other.isError).toBe(true);
    expect((other.content as Array<{ text: string }>)[0]?.text).toMatch(/^query: /);

    const table = await tool(bob, 'aggregate', { query: '* | stats count() by app', time_range: RANGE });
    expect(table.rows).toEqual([['sshd', all.total]]);

    const nginx = (await tool(admin, 'search_logs', { query: 'app:nginx', time_range: RANGE, limit: 1 }))
      .events as Row[];
    const refused = await bob.callTool({ name: 'event_context', arguments: { ev_id: nginx[0]?.ev_id } });
    const unknown = await bob.callTool({
      name: 'event_context',
      arguments: { ev_id: '01JD000000000000000000000X' },
    });
    expect(refused.isError).toBe(true);
    // One text for an unknown event and one that may not be read.
    expect(refused.content).toEqual(unknown.content);
    expect((refused.content as Array<{ text: string }>)[0]?.text).toContain('ev_id');
    const sshd = (search.events as Row[])[3];
    const context = await tool(bob, 'event_context', { ev_id: sshd?.ev_id, by: [], before: 50, after: 50 });
    for (const e of [...(context.before as Row[]), ...(context.after as Row[])]) expect(e.app).toBe('sshd');

    const patterns = await tool(bob, 'top_patterns', { time_range: RANGE, n: 100 });
    for (const p of patterns.patterns as Row[]) expect(p.template).toMatch(/publickey|Failed password/);

    const fields = await tool(bob, 'list_fields', { time_range: RANGE });
    const app = (fields.fields as Row[]).find((f) => f.name === 'app');
    expect(app?.top).toEqual([{ value: 'sshd', count: all.total }]);
    expect((fields.fields as Row[]).map((f) => f.name)).not.toContain('amount');

    const streams = await tool(bob, 'list_streams', {});
    expect((streams.streams as Row[]).map((s) => s.title)).toEqual(['Auth']);

    const explain = await tool(bob, 'explain_changes', { time_range: SECOND_HALF, min_score: 0 });
    for (const c of explain.changes as Row[]) {
      if (c.kind === 'field' && c.field === 'app') expect(c.value).toBe('sshd');
      if (c.kind === 'field' && c.field === 'host') expect(c.value).toBe('bastion');
    }
  });
});
