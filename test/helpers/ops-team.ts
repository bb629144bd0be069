import { expect } from 'vitest';
import { createTestApp, type TestApp } from './app.js';

export type Who = { id: number; token: string };

/**
 * One app with a team `ops` (val and vic, both with manage_dashboards) that alone reads the
 * stream Ops (`app:ops`), an `ops` and a `web` event stored, a dashboard with one Search
 * widget over everything, and the app listening: the setting of the tests that remove a
 * viewer from the team and check what their held queries still answer.
 */
export async function opsTeamApp(): Promise<{
  t: TestApp;
  /** The websocket's address. */
  url: string;
  team: number;
  dashboardId: number;
  val: Who;
  vic: Who;
}> {
  const t = await createTestApp({ LOGSCOPE_TOKEN_CACHE_SECONDS: '1' });
  const val = await t.user('val', { permissions: ['manage_dashboards'] });
  const vic = await t.user('vic', { permissions: ['manage_dashboards'] });
  const as = (path: string, payload: object) => t.as(t.adminToken, { method: 'POST', url: path, payload });
  const team = (await as('/api/teams', { name: 'ops', members: [val.id, vic.id] })).json().id;
  const stream = await as('/api/streams', { title: 'Ops', rule: 'app:ops', readers: { teams: [team] } });
  expect(stream.statusCode, stream.body).toBe(201);
  const ingest = await as('/api/ingest', [
    { app: 'ops', message: 'ops-before' },
    { app: 'web', message: 'web-before' },
  ]);
  expect(ingest.statusCode, ingest.body).toBe(200);
  const dash = await as('/api/dashboards', {
    title: 'Ops',
    widgets: [{ title: 'All', query: { type: 'Search', params: { time_range: { preset: 'last_hour' } } } }],
  });
  expect(dash.statusCode, dash.body).toBe(201);
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    t,
    url: `${address.replace('http', 'ws')}/ws/live-updates`,
    team,
    dashboardId: dash.json().id,
    val,
    vic,
  };
}
