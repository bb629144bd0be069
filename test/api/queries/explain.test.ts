import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../../src/cli/demo-generator.js';
import { changeScore } from '../../../src/core/change-score.js';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { readLoghubCsv } from '../../helpers/loghub.js';

/**
 * Explain (docs/api/explain.md) from outside: real OpenSSH and Apache lines (Loghub) as
 * background at a steady rate with explicit `ts`, and in each scenario's own app one known
 * change — a pattern ×10, a new kind of message, one host ×10 with the pattern mix
 * unchanged, a pattern gone — or none (Poisson noise alone). The answer's counts, scores,
 * rates, ratios, directions and listed set are checked against a computation from the
 * events read back; each `term` counts its `focus_count` in a Search; a user who may not
 * read a stream gets nothing of it; bad parameters are 400s naming them.
 */

const MIN = 60_000;
/** Whole minutes, an hour back: the focus is [F0, F0 + 20 min). */
const F0 = Math.floor(Date.now() / MIN) * MIN - 60 * MIN;
const FOCUS = { ts_from: F0 / 1000, ts_to: (F0 + 20 * MIN) / 1000 };
const WEEK = 604_800_000;

const ssh = readLoghubCsv('OpenSSH_2k.log_structured.csv');
const apache = readLoghubCsv('Apache_2k.log_structured.csv');
/** Lines of one labelled template. */
const linesOf = (rows: Record<string, string>[], id: string) =>
  rows.filter((r) => r.EventId === id).map((r) => r.Content as string);
const SURGING = linesOf(ssh, 'E10'); // Failed password for invalid user <*> from <*> port <*> ssh2
const NEW_KIND = linesOf(apache, 'E1'); // jk2_init() Found child <*> in scoreboard slot <*>
const VANISHING = linesOf(ssh, 'E27'); // reverse mapping checking getaddrinfo … POSSIBLE BREAK-IN ATTEMPT!
const BACKGROUND = [
  ...ssh.filter((r) => r.EventId !== 'E10' && r.EventId !== 'E27'),
  ...apache.filter((r) => r.EventId !== 'E1'),
].map((r) => r.Content as string);

interface Sent {
  message: string;
  app: string;
  host: string;
  ts: number;
}

/** `count` events of `lines` spread over [from, to) at random times, hosts h1–h4 unless given. */
function spread(
  next: () => number,
  app: string,
  lines: string[],
  count: number,
  from: number,
  to: number,
  host?: string,
) {
  return Array.from(
    { length: count },
    (): Sent => ({
      message: lines[Math.floor(next() * lines.length)] as string,
      app,
      host: host ?? `h${1 + Math.floor(next() * 4)}`,
      ts: (from + Math.floor(next() * (to - from))) / 1000,
    }),
  );
}

describe(`Explain (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  let eve: { id: number; token: string };
  const next = prng(20261127);

  const post = (token: string, url: string, payload: object) => t.as(token, { method: 'POST', url, payload });
  const explain = async (params: Record<string, unknown>, token = t.adminToken) => {
    const res = await post(token, '/api/query', {
      type: 'Explain',
      params: { time_range: FOCUS, ...params },
    });
    expect(res.statusCode, res.body).toBe(200);
    const q = res.json();
    expect(q.status, q.error).toBe('SUCCESS');
    return q.results as Results;
  };
  const search = async (query: string, range: { ts_from: number; ts_to: number }, token = t.adminToken) => {
    const res = await post(token, '/api/query', {
      type: 'Search',
      params: { time_range: range, query, page_size: 10_000 },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results as { total: number; events: Array<Record<string, unknown>> };
  };

  beforeAll(async () => {
    t = await createTestApp();
    eve = await t.user('eve');
    const team = (await post(t.adminToken, '/api/teams', { name: 'sec', members: [] })).json().id;
    const stream = await post(t.adminToken, '/api/streams', {
      title: 'Secret',
      rule: 'app:secret',
      readers: { teams: [team] },
    });
    expect(stream.statusCode, stream.body).toBe(201);
    const B0 = F0 - 40 * MIN;
    const F1 = F0 + 20 * MIN;
    const events: Sent[] = [];
    for (const app of ['surge', 'new', 'host', 'gone', 'noise', 'secret'])
      events.push(...spread(next, app, BACKGROUND, 600, B0, F1));
    // a pattern ×10: 30 in each 20 minutes before, 300 in the focus
    events.push(
      ...spread(next, 'surge', SURGING, 60, B0, F0),
      ...spread(next, 'surge', SURGING, 300, F0, F1),
    );
    // a new kind of message: none before, 40 in the focus
    events.push(...spread(next, 'new', NEW_KIND, 40, F0, F1));
    // one host ×10 with the mix of the background: 20 an interval before, 200 in the focus
    events.push(
      ...spread(next, 'host', BACKGROUND, 40, B0, F0, 'web-9'),
      ...spread(next, 'host', BACKGROUND, 200, F0, F1, 'web-9'),
    );
    // a pattern gone: 40 an interval before, none in the focus
    events.push(...spread(next, 'gone', VANISHING, 80, B0, F0));
    // what only the team reads surges too
    events.push(...spread(next, 'secret', SURGING, 400, F0, F1));
    // a week earlier, the surge scenario's focus at its baseline rate
    events.push(
      ...spread(next, 'surge', BACKGROUND, 200, F0 - WEEK, F1 - WEEK),
      ...spread(next, 'surge', SURGING, 30, F0 - WEEK, F1 - WEEK),
    );
    for (let at = 0; at < events.length; at += 1000) {
      const res = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/ingest',
        headers: { 'content-type': 'application/x-ndjson' },
        payload: events
          .slice(at, at + 1000)
          .map((e) => JSON.stringify(e))
          .join('\n'),
      });
      expect(res.statusCode, res.body).toBe(200);
    }
  }, 120_000);
  afterAll(() => t?.close());

  /** What the answer must be, computed from the events of both windows as a Search reads them back. */
  async function expected(
    query: string,
    baseline: { ts_from: number; ts_to: number },
    fields: string[],
    token = t.adminToken,
  ) {
    const f = (await search(query, FOCUS, token)).events;
    const b = (await search(query, baseline, token)).events;
    const tf = FOCUS.ts_to - FOCUS.ts_from;
    const tb = baseline.ts_to - baseline.ts_from;
    const rows: Array<{ term: string; focus_count: number; baseline_count: number; score: number }> = [];
    for (const field of ['pattern_id', ...fields]) {
      const values = new Set([...f, ...b].map((e) => e[field]).filter((v) => v !== null && v !== undefined));
      for (const v of values) {
        const fc = f.filter((e) => e[field] === v).length;
        const bc = b.filter((e) => e[field] === v).length;
        if (fc === f.length && bc === b.length) continue;
        const score = changeScore(fc, bc, tf, tb);
        if (score >= 20)
          rows.push({ term: `${field}:${String(v)}`, focus_count: fc, baseline_count: bc, score });
      }
    }
    rows.sort(
      (x, y) => y.score - x.score || y.focus_count + y.baseline_count - (x.focus_count + x.baseline_count),
    );
    return { focus_total: f.length, baseline_total: b.length, rows };
  }

  const previous = { ts_from: FOCUS.ts_from - 1200, ts_to: FOCUS.ts_from };

  it.each([
    ['surge', 'pattern', 'up'],
    ['new', 'pattern', 'new'],
    ['host', 'field', 'up'],
    ['gone', 'pattern', 'gone'],
  ])(
    'app:%s: the first change is the injected one (%s, %s), and every listed count and score is exact',
    async (app, kind, direction) => {
      const r = await explain({ query: `app:${app}` });
      expect(r.baseline).toEqual(previous);
      const want = await expected(`app:${app}`, previous, r.fields);
      expect({ focus_total: r.focus_total, baseline_total: r.baseline_total }).toEqual({
        focus_total: want.focus_total,
        baseline_total: want.baseline_total,
      });
      expect(r.changes.map((c) => [c.focus_count, c.baseline_count])).toEqual(
        want.rows.slice(0, 20).map((c) => [c.focus_count, c.baseline_count]),
      );
      for (const [i, c] of r.changes.entries()) {
        expect(c.score).toBeCloseTo(want.rows[i]?.score ?? -1, 2);
        expect(c.focus_rate).toBeCloseTo((c.focus_count * 60) / 1200, 3);
        expect(c.ratio).toBe(
          c.baseline_count === 0 ? null : Math.round((c.focus_count / c.baseline_count) * 1000) / 1000,
        );
      }
      const first = r.changes[0] as Change;
      expect([first.kind, first.direction]).toEqual([kind, direction]);
      if (app === 'host') expect(first.term).toBe('host:web-9');
      if (first.kind === 'pattern') {
        expect(first.template).toContain('<*>');
        expect(first.samples.length).toBe(3);
      }
      // Its term counts its events in the focus window (the baseline's when gone).
      const within = direction === 'gone' ? previous : FOCUS;
      const counted = await search(`app:${app} AND ${first.term}`, within);
      expect(counted.total).toBe(direction === 'gone' ? first.baseline_count : first.focus_count);
    },
  );

  it('examines a field named twice once', async () => {
    const r = await explain({ query: 'app:host', fields: ['host', 'host'] });
    expect(r.fields).toEqual(['host']);
    expect(r.changes.filter((c) => c.term === 'host:web-9')).toHaveLength(1);
  });

  it('noise alone lists nothing at the default min_score', async () => {
    const r = await explain({ query: 'app:noise' });
    expect(r.focus_total).toBeGreaterThan(100);
    expect(r.tested).toBeGreaterThan(10);
    expect(r.changes).toEqual([]);
  });

  it('the same surge against the same time last week and against a longer explicit baseline', async () => {
    const week = await explain({
      query: 'app:surge',
      baseline: { preset: 'same_time_last_week' },
      fields: [],
    });
    expect(week.baseline).toEqual({ ts_from: FOCUS.ts_from - 604_800, ts_to: FOCUS.ts_to - 604_800 });
    expect(week.changes[0]).toMatchObject({
      kind: 'pattern',
      direction: 'up',
      focus_count: 300,
      baseline_count: 30,
    });
    const longer = { ts_from: FOCUS.ts_from - 2400, ts_to: FOCUS.ts_from };
    const r = await explain({ query: 'app:surge', baseline: longer, fields: [] });
    const first = r.changes[0] as Change;
    expect(first).toMatchObject({ kind: 'pattern', direction: 'up', focus_count: 300 });
    // Counted as a Search counts its term in the baseline (a template merged moments ago may
    // still hold a few of its first events under the id it went into: docs/api/patterns.md).
    const before = (await search(`app:surge AND ${first.term}`, longer)).total;
    expect(first.baseline_count).toBe(before);
    expect(first.ratio).toBe(Math.round((300 / 1200 / (before / 2400)) * 1000) / 1000);
    expect(first.score).toBeCloseTo(changeScore(300, before, 1200, 2400), 2);
  });

  it('a user who may not read a stream gets nothing of it: no count, pattern, sample or value', async () => {
    const admin = await explain({ fields: ['app'] });
    expect(admin.changes.some((c) => c.term === 'app:secret')).toBe(true);
    const r = await explain({ fields: ['app'] }, eve.token);
    const want = await expected('', previous, ['app'], eve.token);
    expect(r.focus_total).toBe(want.focus_total);
    expect(r.focus_total).toBeLessThan(admin.focus_total);
    expect(JSON.stringify(r)).not.toContain('secret');
    expect(r.changes.map((c) => [c.focus_count, c.baseline_count])).toEqual(
      want.rows.slice(0, 20).map((c) => [c.focus_count, c.baseline_count]),
    );
  });

  it('exports its changes as CSV and JSON, and is a widget of a dashboard', async () => {
    const res = await post(t.adminToken, '/api/query', {
      type: 'Explain',
      params: { time_range: FOCUS, query: 'app:surge', fields: [] },
    });
    const id = res.json().query_id as string;
    const csv = await t.as(t.adminToken, { method: 'GET', url: `/api/query/${id}/export?ftype=csv` });
    expect(csv.statusCode, csv.body).toBe(200);
    const [head, first] = csv.body.split(/\r?\n/);
    expect(head).toContain('term');
    expect(first).toMatch(/pattern_id:\w+/);
    const json = await t.as(t.adminToken, { method: 'GET', url: `/api/query/${id}/export?ftype=json` });
    expect(json.statusCode, json.body).toBe(200);
    expect(json.body).toContain('"direction":"up"');
    const dash = await post(t.adminToken, '/api/dashboards', {
      title: 'What changed',
      widgets: [
        {
          title: 'Changes',
          visualization: { kind: 'table' },
          query: { type: 'Explain', params: { time_range: FOCUS, query: 'app:surge', fields: [] } },
        },
      ],
    });
    expect(dash.statusCode, dash.body).toBe(201);
  });

  it.each([
    [{ baseline: { preset: 'yesterday' } }, 'params.baseline'],
    [{ baseline: { ts_from: FOCUS.ts_from - 60, ts_to: FOCUS.ts_from - 120 } }, 'params.baseline'],
    [{ baseline: { ts_from: FOCUS.ts_from - 600, ts_to: FOCUS.ts_from + 1 } }, 'params.baseline'],
    [{ baseline: { ts_from: FOCUS.ts_from - 40 * 86_400, ts_to: FOCUS.ts_from } }, 'params.baseline'],
    [{ time_range: { ts_from: FOCUS.ts_to - 32 * 86_400, ts_to: FOCUS.ts_to } }, 'params.time_range'],
    [{ fields: ['message'] }, 'params.fields'],
    [{ fields: Array.from({ length: 21 }, (_, i) => `f${i}`) }, 'params.fields'],
    [{ fields: 'host' }, 'params.fields'],
    [{ n: 0 }, 'params.n'],
    [{ n: 2.5 }, 'params.n'],
    [{ min_score: -1 }, 'params.min_score'],
    [{ min_score: 'high' }, 'params.min_score'],
  ])('refuses %j with a 400 naming %s, storing nothing', async (params, key) => {
    const res = await post(t.adminToken, '/api/query', {
      type: 'Explain',
      params: { time_range: FOCUS, ...params },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(Object.keys(res.json().errors)).toEqual([key]);
  });
});

interface Change {
  kind: 'pattern' | 'field';
  term: string;
  template: string;
  focus_count: number;
  baseline_count: number;
  focus_rate: number;
  ratio: number | null;
  direction: string;
  score: number;
  samples: unknown[];
}
interface Results {
  baseline: { ts_from: number; ts_to: number };
  focus_total: number;
  baseline_total: number;
  fields: string[];
  tested: number;
  changes: Change[];
}
