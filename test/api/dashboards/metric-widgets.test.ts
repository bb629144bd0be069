import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { Client, type Msg } from '../../helpers/ws-client.js';
import { docxParagraphs, docxTableRows } from '../../unit/export/export-fixtures.js';

type Who = { id: number; token: string };
type Series = { labels: Record<string, string>; total: { events: number; value: number | null } };
type Update = { status: string; error?: string; results?: { series: Series[] } };

/**
 * Widgets of the query type Metric (docs/api/log-metrics.md "The query type Metric"): drawn as line,
 * area, bar, number or table with `visualization.options.y` a figure of the series answer;
 * their results through the dashboard's live subscription equal the ingested counts; a
 * viewer who may not see the metric is refused as the Metric query refuses them; a
 * deleted metric's widget ends ERROR naming it. On the embedded store (ClickHouse does
 * not count yet).
 */
describe.runIf(EVENT_STORE === 'duckdb')(`Metric widgets on ${BACKEND}`, () => {
  let t: TestApp;
  let ada: Who;
  let ben: Who;
  let url: string;
  let metric: { id: number; name: string };
  let board: { id: number; widgets: Array<{ id: number }> };
  const call = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: object) =>
    t.as(token, { method, url: path, ...(payload ? { payload } : {}) });
  const metricQuery = (id: number) => ({
    type: 'Metric',
    params: { metric_id: id, time_range: { preset: 'last_24_hours' } },
  });
  const ended = (m: Msg) =>
    m[0] === 'widget-update' && ['SUCCESS', 'ERROR'].includes((m[1].data as Update).status);
  /** The first settled update of each widget of `board` for `who`, or the refusal. */
  const watch = async (who: Who, target: object) => {
    const c = await Client.open(`${url}?token=${who.token}`);
    c.send(['subscribe', target]);
    const first = await c.next((m) => m[0] === 'subscribed' || m[0] === 'error');
    if (first[0] === 'error') {
      c.ws.close();
      return { error: String(first[1].detail), updates: new Map<number, Update>() };
    }
    const updates = new Map<number, Update>();
    const count = 'dashboard_id' in target ? board.widgets.length : 1;
    while (updates.size < count) {
      const m = await c.next(ended);
      updates.set(m[1].widget_id as number, m[1].data as Update);
    }
    c.ws.close();
    return { error: null, updates };
  };
  const totals = (u: Update | undefined) =>
    Object.fromEntries((u?.results?.series ?? []).map((s) => [s.labels.app, s.total.events]));

  beforeAll(async () => {
    t = await createTestApp();
    ada = await t.user('ada');
    ben = await t.user('ben', { permissions: ['manage_dashboards'] });
    const made = await call(ada.token, 'POST', '/api/log-metrics', {
      name: 'errors_by_app',
      query: 'severity:error',
      labels: ['app'],
    });
    expect(made.statusCode, made.body).toBe(201);
    metric = made.json();
    // Stored after the metric exists: counted (events stored before it are not).
    const now = Date.now();
    const at = (s: number) => new Date(now - 600_000 + s * 1000).toISOString();
    const sent = [
      ...[1, 2, 3].map((s) => ({ ts: at(s), app: 'payments', severity: 'error', message: 'declined' })),
      ...[4, 65].map((s) => ({ ts: at(s), app: 'web', severity: 'error', message: 'timed out' })),
      { ts: at(5), app: 'web', severity: 'info', message: 'ok' },
    ];
    const ingested = await call(t.adminToken, 'POST', '/api/ingest', sent);
    expect(ingested.json(), ingested.body).toMatchObject({ accepted: sent.length, rejected: 0 });
    const res = await call(ada.token, 'POST', '/api/dashboards', {
      title: 'Errors',
      widgets: [
        { title: 'Errors by app', query: metricQuery(metric.id), visualization: { kind: 'line' } },
        {
          title: 'Error events',
          query: metricQuery(metric.id),
          visualization: { kind: 'number', options: { y: 'events' } },
        },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    board = res.json();
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `${address.replace('http', 'ws')}/ws/live-updates`;
  });
  afterAll(() => t?.close());

  it('runs a Metric widget: its series equal the events ingested after the metric was made', async () => {
    const { error, updates } = await watch(ada, { dashboard_id: board.id });
    expect(error).toBeNull();
    for (const w of board.widgets) {
      expect(updates.get(w.id)?.status, updates.get(w.id)?.error).toBe('SUCCESS');
      expect(totals(updates.get(w.id))).toEqual({ payments: 3, web: 2 });
    }
    const stored = (await call(ada.token, 'GET', `/api/widgets/${board.widgets[1]!.id}`)).json();
    expect(stored.visualization).toEqual({ kind: 'number', options: { y: 'events' } });
    expect(stored.query.params).toMatchObject({
      metric_id: metric.id,
      time_range: { preset: 'last_24_hours' },
    });
  });

  it('takes line, area, bar, number and table; other kinds and figures are a 400 naming the field', async () => {
    const widget = board.widgets[0]!.id;
    for (const kind of ['area', 'bar', 'table', 'number', 'line']) {
      const res = await call(ada.token, 'PATCH', `/api/widgets/${widget}`, { visualization: { kind } });
      expect(res.statusCode, res.body).toBe(200);
    }
    for (const kind of ['pie', 'map', 'list']) {
      const res = await call(ada.token, 'PATCH', `/api/widgets/${widget}`, { visualization: { kind } });
      expect(res.statusCode, res.body).toBe(400);
      expect(Object.keys(res.json().errors)).toEqual(['visualization.kind']);
    }
    for (const y of ['value', 'events', 'count', 'sum', 'min', 'max', 'avg', '0.99', '0.5']) {
      const body = { visualization: { kind: 'line', options: { y } } };
      expect((await call(ada.token, 'PATCH', `/api/widgets/${widget}`, body)).statusCode).toBe(200);
    }
    for (const y of ['median', '99', '0.990', 1, '']) {
      const body = { visualization: { kind: 'line', options: { y } } };
      const res = await call(ada.token, 'PATCH', `/api/widgets/${widget}`, body);
      expect(res.statusCode, res.body).toBe(400);
      expect(Object.keys(res.json().errors)).toEqual(['visualization.options.y']);
    }
    // In a dashboard's body, the error names the widget's place.
    const res = await call(ada.token, 'POST', `/api/dashboards`, {
      title: 'Pie',
      widgets: [{ title: 'Pie', query: metricQuery(metric.id), visualization: { kind: 'pie' } }],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toHaveProperty(['widgets.0.visualization.kind']);
    // Another type keeps its kinds.
    const pie = await call(ada.token, 'POST', `/api/dashboards/${board.id}/widgets`, {
      title: 'Apps',
      query: { type: 'TopN', params: { field: 'app' } },
      visualization: { kind: 'pie', options: { y: 'anything' } },
    });
    expect(pie.statusCode, pie.body).toBe(200);
    await call(ada.token, 'DELETE', `/api/widgets/${pie.json().id}`);
  });

  it('refuses a Metric widget to a user who may not see its metric, as the Metric query is', async () => {
    // Ben sees Ada's dashboard (manage_dashboards), not her metric.
    expect((await call(ben.token, 'GET', `/api/dashboards/${board.id}`)).statusCode).toBe(200);
    const direct = await call(ben.token, 'POST', '/api/query', metricQuery(metric.id));
    expect(Object.keys(direct.json().errors ?? {})).toEqual(['params.metric_id']);
    const refused = await watch(ben, { widget_id: board.widgets[0]!.id });
    expect(refused.error).toMatch(/params\.metric_id/);
    // On the dashboard each Metric widget ends ERROR for him; the others still show.
    const apps = await call(ada.token, 'POST', `/api/dashboards/${board.id}/widgets`, {
      title: 'Apps',
      query: { type: 'TopN', params: { field: 'app' } },
    });
    board = (await call(ada.token, 'GET', `/api/dashboards/${board.id}`)).json();
    const his = await watch(ben, { dashboard_id: board.id });
    expect(his.error).toBeNull();
    for (const w of board.widgets.slice(0, 2))
      expect(his.updates.get(w.id)).toMatchObject({
        status: 'ERROR',
        error: 'params.metric_id: No log metric you may see has this id.',
      });
    expect(his.updates.get(apps.json().id)?.status).toBe('SUCCESS');
    await call(ada.token, 'DELETE', `/api/widgets/${apps.json().id}`);
    board = (await call(ada.token, 'GET', `/api/dashboards/${board.id}`)).json();
    // Nor may he save one on it.
    const mine = await call(ben.token, 'POST', '/api/dashboards', {
      title: 'Mine',
      widgets: [{ title: 'Theirs', query: metricQuery(metric.id), visualization: { kind: 'line' } }],
    });
    expect(mine.statusCode).toBe(400);
    expect(Object.keys(mine.json().errors)).toEqual(['widgets.0.query.params.metric_id']);
    // Ada still reads it (the refusal is his only).
    expect((await watch(ada, { widget_id: board.widgets[0]!.id })).error).toBeNull();
  });

  it('exports, imports and templates a dashboard of Metric widgets as equal ones', async () => {
    const exported = (await call(ada.token, 'GET', `/api/dashboards/${board.id}?export=true`)).json();
    expect(exported.widgets.map((w: { query: { type: string } }) => w.query.type)).toEqual([
      'Metric',
      'Metric',
    ]);
    const copy = await call(ada.token, 'POST', '/api/dashboards', { ...exported, title: 'Copy' });
    expect(copy.statusCode, copy.body).toBe(201);
    const again = (await call(ada.token, 'GET', `/api/dashboards/${copy.json().id}?export=true`)).json();
    expect(again).toEqual({ ...exported, title: 'Copy' });
    const saved = await call(ada.token, 'POST', `/api/dashboards/${board.id}/templates`, {
      path: 'ada/errors',
    });
    expect(saved.statusCode, saved.body).toBe(200);
    const made = await call(ada.token, 'POST', '/api/dashboards', { template: 'ada/errors' });
    expect(made.statusCode, made.body).toBe(201);
    const fromTemplate = (
      await call(ada.token, 'GET', `/api/dashboards/${made.json().id}?export=true`)
    ).json();
    expect(fromTemplate.widgets).toEqual(exported.widgets);
    // Ben may not see the metric: its import is refused as his widget would be.
    const his = await call(ben.token, 'POST', '/api/dashboards', { ...exported, title: 'His' });
    expect(his.statusCode).toBe(400);
    // The first widget he may not run names it.
    expect(Object.keys(his.json().errors)).toEqual(['widgets.0.query.params.metric_id']);
  });

  it('reports a Metric widget: a line chart of the figure and a row per series with its totals', async () => {
    await call(ada.token, 'PATCH', `/api/widgets/${board.widgets[0]!.id}`, {
      visualization: { kind: 'line', options: { y: 'events' } },
    });
    const made = await call(ada.token, 'POST', '/api/reports', {
      ftype: 'docx',
      source: { kind: 'dashboard', dashboard_id: board.id },
    });
    expect(made.statusCode, made.body).toBe(202);
    await t.rt.services.reports.idle();
    const r = (await call(ada.token, 'GET', `/api/reports/${made.json().id}`)).json();
    expect(r.status, r.error).toBe('READY');
    const file = (await call(ada.token, 'GET', `/api/reports/${r.id}/file`)).rawPayload;
    const zip = await JSZip.loadAsync(file);
    const xml = await zip.file('word/document.xml')!.async('string');
    const tables = (xml.match(/<w:tbl>[\s\S]*?<\/w:tbl>/g) ?? []).map(docxTableRows);
    // Each widget: a row per series, its label then its total figures, largest first.
    expect(tables).toEqual([
      [
        ['app', 'events'],
        ['payments', '3'],
        ['web', '2'],
      ],
      [
        ['app', 'events'],
        ['payments', '3'],
        ['web', '2'],
      ],
    ]);
    const notes = docxParagraphs(xml).filter((p) => p.startsWith('Query:'));
    expect(notes[0]).toMatch(/^Query: the log metric's query\nTime range: last 24 hours: /);
    expect(notes[0]).toMatch(/\nShows: The log metric errors_by_app \(count\) per 2 min, by app\n/);
    // A day of 2-minute steps drawn as half hours, and said so.
    expect(notes[0]).toContain('\nThe chart merges the 2 min steps into 30 min steps.');
    // The line chart (of the first widget; a number widget has none) names its figure.
    const svgs = Object.keys(zip.files).filter((f) => f.startsWith('word/media/') && f.endsWith('.svg'));
    expect(svgs).toHaveLength(1);
    const svg = await zip.file(svgs[0]!)!.async('string');
    expect(svg).toMatch(/<text[^>]*>events per 30 min</);
    for (const app of ['payments', 'web']) expect(svg).toContain(`>${app}</text>`);
  });

  it('ends a widget whose metric was deleted ERROR naming the metric; the other widgets still show', async () => {
    const made = await call(ada.token, 'POST', '/api/log-metrics', { name: 'soon_gone', query: 'x' });
    expect(made.statusCode, made.body).toBe(201);
    const gone = made.json().id as number;
    const res = await call(ada.token, 'POST', '/api/dashboards', {
      title: 'Soon gone',
      widgets: [
        { title: 'Gone', query: metricQuery(gone), visualization: { kind: 'bar' } },
        { title: 'Apps', query: { type: 'TopN', params: { field: 'app' } } },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    board = res.json();
    expect((await call(ada.token, 'DELETE', `/api/log-metrics/${gone}`)).statusCode).toBe(204);
    const { error, updates } = await watch(ada, { dashboard_id: board.id });
    expect(error).toBeNull();
    expect(updates.get(board.widgets[0]!.id)).toMatchObject({
      status: 'ERROR',
      error: `The log metric ${gone} this query reads was deleted, or its owner may no longer see it.`,
    });
    expect(updates.get(board.widgets[1]!.id)?.status).toBe('SUCCESS');
    // A new widget on it is refused, as a Metric query on it is.
    const again = await call(ada.token, 'POST', `/api/dashboards/${board.id}/widgets`, {
      title: 'Gone',
      query: metricQuery(gone),
    });
    expect(again.statusCode).toBe(400);
    expect(Object.keys(again.json().errors)).toEqual(['query.params.metric_id']);
  });
});
