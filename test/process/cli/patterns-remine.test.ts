import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_SCOPE } from '../../../src/event-store/read-scope.js';
import { TRUE } from '../../../src/filter/ast.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { buildCli, removeCli, runCli } from './run-cli.js';

/**
 * `logscope patterns remine` beside a real server on loopback: it starts the job, shows
 * its progress, ends with what it did, and the events carry the ids ingest gives again.
 */
describe('CLI: patterns remine', () => {
  let t: TestApp;
  let url: string;
  const now = Date.now();
  const ALL = { fromMs: 0, toMs: now + 60_000 };
  const ids = async () =>
    (
      await t.rt.events.execute({
        kind: 'search',
        scope: SYSTEM_SCOPE,
        filter: TRUE,
        range: ALL,
        sort: [{ field: 'ts', desc: false }],
        limit: 1000,
        offset: 0,
        count: false,
      })
    ).events.map((e) => [e.ev_id, e.pattern_id] as const);

  beforeAll(async () => {
    await buildCli();
    t = await createTestApp();
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: Array.from({ length: 40 }, (_, i) =>
        JSON.stringify({
          ts: new Date(now - (40 - i) * 60_000).toISOString(),
          app: 'sshd',
          message:
            i % 2 ? `Invalid user u${i} from 10.0.0.${i}` : `Connection closed by 10.0.1.${i} [preauth]`,
        }),
      ).join('\n'),
    });
    expect(res.json()).toMatchObject({ accepted: 40 });
  }, 60_000);
  afterAll(async () => {
    removeCli();
    await t?.close();
  });

  const client = (token = t.adminToken) => ['--url', url, '--token', token];

  it('re-mines the range with progress and gives the events the ids ingest gives', async () => {
    const fresh = await ids();
    await t.rt.events.setPatternIds(
      ALL,
      fresh.map(([ev]) => [ev, 'staleid'] as const),
    );
    const r = await runCli(['patterns', 'remine', '--since', '2h', ...client()], { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^Re-mining .* \(job [0-9A-Z]{26}\); Ctrl-C stops it\.\n/);
    expect(r.stdout).toBe('Done: 40 of 40 events re-mined, 40 with a new pattern_id.\n');
    expect(await ids()).toEqual(fresh);
  }, 90_000);

  it('fails clearly: no range, a bad time, a user who is no administrator', async () => {
    const u = await t.user('remine-analyst');
    const [none, bad, denied] = await Promise.all([
      runCli(['patterns', 'remine', ...client()]),
      runCli(['patterns', 'remine', '--from', 'yesterday', ...client()]),
      runCli(['patterns', 'remine', '--since', '1h', ...client(u.token)]),
    ]);
    expect(none).toMatchObject({ code: 1, stderr: expect.stringContaining('--since, or --from') });
    expect(bad).toMatchObject({ code: 1, stderr: expect.stringContaining('--from takes an ISO 8601 time') });
    expect(denied).toMatchObject({ code: 1, stderr: 'logscope: Only administrators re-mine patterns.\n' });
  }, 60_000);
});
