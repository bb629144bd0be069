import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS, type Permission } from '../../../src/shared/permissions.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

/**
 * Who may call what (issue #5): every dashboard, widget, task and report endpoint, called
 * by the owner of the object, another user, a holder of the matching manage permission
 * (lists asked with show_all=true where the table says so), an admin and the owner's
 * INGEST token. Each cell runs against fresh objects; a refused call must change nothing.
 */

type Caller = 'owner' | 'other' | 'manager' | 'admin' | 'ingest';
const CALLERS: Caller[] = ['owner', 'other', 'manager', 'admin', 'ingest'];

/** A status, or for a list: 200 with the object in it (L) or not (H). */
type Expect = number | 'L' | 'H';
const L = 'L';
const H = 'H';

/** The objects a cell runs against, all owned by `owner`. */
interface Fixture {
  d: number;
  w: number;
  t: number;
  r: number;
}
type Body = object | ((f: Fixture) => object) | undefined;
/** `METHOD /path` with {d} {w} {t} {r} for the fixture's ids and {n} for a number unique to the cell. */
type Row = [
  request: string,
  body: Body,
  owner: Expect,
  other: Expect,
  manager: Expect,
  admin: Expect,
  ingest: Expect,
];

const _ = undefined;
const topHosts = { type: 'TopN', params: { field: 'host' } };
const newWidget = { title: 'added', query: topHosts };
const fromTemplate = { template: 'builtin/overview' };
const searchReport = { ftype: 'csv', source: { kind: 'query', query: { type: 'Search' } } };
const dashboardReport = (f: Fixture) => ({ ftype: 'pdf', source: { kind: 'dashboard', dashboard_id: f.d } });

interface Group {
  name: string;
  /** The manager's permissions (reports have no permission of their own: the manager holds every one). */
  manager: readonly Permission[];
  /** The object whose visibility a list row checks, and whose owner's view a refused call must leave alone. */
  subject: keyof Fixture;
  rows: Row[];
}

// biome-ignore format: a table reads best aligned
const GROUPS: Group[] = [
  {
    name: 'dashboards',
    manager: ['manage_dashboards'],
    subject: 'd',
    rows: [
      // request                                                 body                          owner other manager admin ingest
      ['GET /api/dashboards',                                    _,                            L,    H,    H,      H,    403],
      ['GET /api/dashboards?show_all=true',                      _,                            L,    H,    L,      L,    403],
      ['POST /api/dashboards',                                   { title: 'new' },             201,  201,  201,    201,  403],
      ['POST /api/dashboards',                                   fromTemplate,                 201,  201,  201,    201,  403],
      ['POST /api/dashboards?source_id={d}',                     {},                           201,  404,  201,    201,  403],
      ['POST /api/dashboards?source_id={d}&clone_widgets=true',  {},                           201,  404,  201,    201,  403],
      ['GET /api/dashboards/templates',                          _,                            200,  200,  200,    200,  403],
      ['GET /api/dashboards/{d}',                                _,                            200,  404,  200,    200,  403],
      ['GET /api/dashboards/{d}?export=true',                    _,                            200,  404,  200,    200,  403],
      // Seeing every dashboard is not changing it: its owner and admins change it.
      ['PUT /api/dashboards/{d}',                                { title: 'put' },             200,  404,  403,    200,  403],
      ['PATCH /api/dashboards/{d}',                              { description: 'patched' },   200,  404,  403,    200,  403],
      ['DELETE /api/dashboards/{d}',                             _,                            204,  404,  403,    204,  403],
      ['POST /api/dashboards/{d}/templates',                     { path: 'matrix/{n}' },       200,  404,  200,    200,  403],
      ['POST /api/dashboards/{d}/widgets',                       newWidget,                    200,  404,  403,    200,  403],
      ['DELETE /api/dashboards/{d}/widgets/{w}',                 _,                            204,  404,  403,    204,  403],
      ['DELETE /api/dashboards/{d}/widgets?widget_id={w}',       _,                            204,  404,  403,    204,  403],
      ['DELETE /api/dashboards/{d}/widgets',                     _,                            204,  404,  403,    204,  403],
    ],
  },
  {
    name: 'widgets',
    manager: ['manage_widgets'],
    subject: 'w',
    rows: [
      ['GET /api/widgets',                                       _,                            L,    H,    H,      H,    403],
      ['GET /api/widgets?show_all=true',                         _,                            L,    H,    L,      L,    403],
      ['GET /api/widgets/{w}',                                   _,                            200,  404,  200,    200,  403],
      ['GET /api/widgets/{w}?export=true',                       _,                            200,  404,  200,    200,  403],
      // Only the owner changes a widget: seeing it is not enough, admins included.
      ['PUT /api/widgets/{w}',                                   newWidget,                    200,  404,  403,    403,  403],
      ['PATCH /api/widgets/{w}',                                 { title: 'patched' },         200,  404,  403,    403,  403],
      ['DELETE /api/widgets/{w}',                                _,                            204,  404,  403,    403,  403],
    ],
  },
  {
    name: 'tasks',
    manager: ['manage_tasks'],
    subject: 't',
    rows: [
      // A team board: everyone sees every task; the owner, manage_tasks and admins change it.
      ['GET /api/tasks',                                         _,                            L,    L,    L,      L,    403],
      ['POST /api/tasks',                                        { title: 'new' },             200,  200,  200,    200,  403],
      ['GET /api/tasks/{t}',                                     _,                            200,  200,  200,    200,  403],
      ['PUT /api/tasks/{t}',                                     { title: 'put' },             200,  403,  200,    200,  403],
      ['PATCH /api/tasks/{t}',                                   { priority: 'high' },         200,  403,  200,    200,  403],
      ['DELETE /api/tasks/{t}',                                  _,                            204,  403,  403,    204,  403],
    ],
  },
  {
    name: 'reports',
    manager: PERMISSIONS,
    subject: 'r',
    rows: [
      // Private to the owner and admins; no permission (and no show_all) reveals them.
      ['GET /api/reports',                                       _,                            L,    H,    H,      L,    403],
      ['GET /api/reports?show_all=true',                         _,                            L,    H,    H,      L,    403],
      ['POST /api/reports',                                      searchReport,                 202,  202,  202,    202,  403],
      // A dashboard report needs a dashboard the caller can see (manage_dashboards does).
      ['POST /api/reports',                                      dashboardReport,              202,  400,  202,    202,  403],
      ['GET /api/reports/{r}',                                   _,                            200,  404,  404,    200,  403],
      ['GET /api/reports/{r}/file',                              _,                            200,  404,  404,    200,  403],
      ['DELETE /api/reports/{r}',                                _,                            204,  404,  404,    204,  403],
    ],
  },
];

const TABLES = [
  'dashboards',
  'widgets',
  'dashboard_widgets',
  'dashboard_templates',
  'tasks',
  'reports',
] as const;
const SUBJECT_URL: Record<keyof Fixture, string> = {
  d: '/api/dashboards/{d}',
  w: '/api/widgets/{w}',
  t: '/api/tasks/{t}',
  r: '/api/reports/{r}',
};

describe(`ownership matrix on ${BACKEND}`, () => {
  let t: TestApp;
  let tokens: Record<Exclude<Caller, 'manager'>, string>;
  const managers = new Map<Group, string>();
  let cell = 0;

  beforeAll(async () => {
    t = await createTestApp();
    const owner = await t.user('owner');
    tokens = {
      owner: owner.token,
      other: (await t.user('other')).token,
      admin: t.adminToken,
      ingest: (await t.rt.services.tokens.create(owner.id, { token_type: 'INGEST' })).secret_key,
    };
    for (const g of GROUPS)
      managers.set(g, (await t.user(`${g.name}-manager`, { permissions: [...g.manager] })).token);
  });
  afterAll(() => t.close());

  const call = (token: string, request: string, body?: object) => {
    const [method, url] = request.split(' ') as [InjectOptions['method'], string];
    return t.as(token, { method, url, ...(body === undefined ? {} : { payload: body }) });
  };
  const fill = (s: string, f: Fixture) =>
    s.replace(/\{([dwtrn])\}/g, (_m, k: string) => String(k === 'n' ? cell : f[k as keyof Fixture]));

  /** A dashboard with two widgets, a task and a READY report, all the owner's. */
  async function fixture(): Promise<Fixture> {
    const ok = async (request: string, body: object, status: number) => {
      const res = await call(tokens.owner, request, body);
      expect(res.statusCode, `${request}: ${res.body}`).toBe(status);
      return res.json();
    };
    const d = await ok(
      'POST /api/dashboards',
      {
        title: 'Mine',
        widgets: [
          { title: 'w1', query: topHosts },
          { title: 'w2', query: topHosts },
        ],
      },
      201,
    );
    const task = await ok('POST /api/tasks', { title: 'Mine' }, 200);
    const report = await ok('POST /api/reports', searchReport, 202);
    await t.rt.services.reports.idle();
    return { d: d.id, w: d.widgets[0].id, t: task.id, r: report.id };
  }

  /** Row counts and the owner's view of the subject: what a refused call must not change. */
  const snapshot = async (subject: keyof Fixture, f: Fixture) => {
    const counts: number[] = [];
    for (const table of TABLES) {
      const row = await t.rt.meta.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      counts.push(Number(row.n));
    }
    const view = await call(tokens.owner, `GET ${fill(SUBJECT_URL[subject], f)}`);
    return { counts, view: view.json() };
  };

  for (const group of GROUPS) {
    const cases = group.rows.flatMap(([request, body, ...expected]) =>
      CALLERS.map((caller, i) => ({ request, body, caller, expected: expected[i] as Expect })),
    );
    const shown = (e: Expect) => (e === L ? 'listed' : e === H ? 'hidden' : e);
    describe(group.name, () => {
      for (const { request, body, caller, expected } of cases)
        it(`${request} by ${caller} → ${shown(expected)}`, async () => {
          cell += 1;
          const f = await fixture();
          const before = await snapshot(group.subject, f);
          const token = caller === 'manager' ? (managers.get(group) as string) : tokens[caller];
          const payload = typeof body === 'function' ? body(f) : body;
          const filled = fill(request, f);
          const isList = expected === L || expected === H;
          // Lists page after 50; every cell adds objects, so ask for one page of everything.
          const url = isList ? `${filled}${filled.includes('?') ? '&' : '?'}page_size=1000` : filled;
          const res = await call(token, url, payload && JSON.parse(fill(JSON.stringify(payload), f)));
          await t.rt.services.reports.idle();
          if (isList) {
            expect(res.statusCode, res.body).toBe(200);
            const ids = res.json().results.map((x: { id: number }) => x.id);
            expect(ids.includes(f[group.subject])).toBe(expected === L);
            return;
          }
          expect(res.statusCode, res.body).toBe(expected);
          if (expected >= 400) {
            expect(res.json().code).toBe(
              { 400: 'invalid', 403: 'permission_denied', 404: 'not_found' }[expected],
            );
            expect(await snapshot(group.subject, f)).toEqual(before);
          }
        });
    });
  }
});
