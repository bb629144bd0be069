import { cpSync, mkdirSync, rmSync, truncateSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { noonDaysBack } from '../../helpers/events.js';
import { event } from '../../helpers/seed.js';
import { buildCli, removeCli, runCli } from './run-cli.js';

/**
 * `logscope cold verify` and `logscope cold import` beside a real server on loopback: one
 * line per problem naming its path, then a summary; exit 0 with none, 1 with any, 2 when
 * the server cannot be reached or refuses the token.
 */
describe.skipIf(EVENT_STORE !== 'duckdb')('CLI: cold verify and cold import', () => {
  let t: TestApp;
  let url: string;
  let coldDir: string;
  const now = Date.now();
  /** Noon UTC of the day `back` days ago: the 60 s of a day's events never straddle midnight. */
  const noon = (back: number) => noonDaysBack(back, now);

  beforeAll(async () => {
    await buildCli();
    t = await createTestApp();
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    coldDir = path.join(t.dataDir, 'cold');
    const streams = (await t.as(t.adminToken, { method: 'GET', url: '/api/streams' })).json()
      .results as Array<{
      id: number;
      builtin: boolean;
    }>;
    const defaultId = streams.find((s) => s.builtin)?.id;
    const res = await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/streams/${defaultId}`,
      payload: { hot_days: 2 },
    });
    expect(res.statusCode, res.body).toBe(200);
    await t.rt.events.append(
      Array.from({ length: 60 }, (_, i) =>
        event({ ts: noon(3 + (i % 3)) - i * 1000, app: 'db', message: `nightly backup ${i} done` }),
      ),
    );
    expect((await t.rt.services.coldMoves.run(now)).errors).toEqual([]);
  }, 60_000);
  afterAll(async () => {
    removeCli();
    await t?.close();
  });

  const client = (token = t.adminToken) => ['--url', url, '--token', token];

  it('verify: exit 0 and a summary when sound, 1 and one line per problem when not', async () => {
    const files = await t.rt.events.coldFiles();
    expect(files).toHaveLength(3);
    const events = files.reduce((n, f) => n + f.rows, 0);
    const bytes = files.reduce((n, f) => n + f.bytes, 0).toLocaleString('en-US');
    const sound = await runCli(['cold', 'verify', ...client()]);
    expect(sound.code, sound.stderr).toBe(0);
    expect(sound.stdout).toBe(`Verified 3 files (${events} events, ${bytes} bytes): no problem.\n`);
    const json = await runCli(['cold', 'verify', '--json', '--no-checksums', ...client()]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ kind: 'verify', status: 'DONE', files: 3, problems: [] });

    const gone = files[0]?.path as string;
    const kept = path.join(t.dataDir, 'kept.parquet');
    cpSync(path.join(coldDir, gone), kept);
    rmSync(path.join(coldDir, gone));
    const damaged = await runCli(['cold', 'verify', ...client()]);
    expect(damaged.code, damaged.stderr).toBe(1);
    expect(damaged.stdout).toBe(
      `${gone}: missing: The recorded file is not there.\nVerified 3 files (${events} events, ${bytes} bytes): 1 problem.\n`,
    );
    cpSync(kept, path.join(coldDir, gone));
  }, 60_000);

  it('import: exit 0 when every file is imported or present, 1 when one is refused', async () => {
    mkdirSync(path.join(coldDir, 'back'));
    const first = (await t.rt.events.coldFiles())[0]?.path as string;
    cpSync(path.join(coldDir, first), path.join(coldDir, 'back', 'copy.parquet'));
    const present = await runCli(['cold', 'import', 'back', ...client()]);
    expect(present.code, present.stderr).toBe(0);
    expect(present.stdout).toBe('Imported 0 files (0 events); 1 present already, 0 refused.\n');
    cpSync(path.join(coldDir, first), path.join(coldDir, 'back', 'bad.parquet'));
    rmSync(path.join(coldDir, 'back', 'copy.parquet'));
    truncateSync(path.join(coldDir, 'back', 'bad.parquet'), 100);
    const refused = await runCli(['cold', 'import', path.join(coldDir, 'back'), ...client()]);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stdout).toMatch(
      /^back\/bad\.parquet: refused: Unreadable: .*\nImported 0 files \(0 events\); 0 present already, 1 refused\.\n$/,
    );
    const outside = await runCli(['cold', 'import', '../elsewhere', ...client()]);
    expect(outside.code).toBe(1);
    expect(outside.stderr).toContain('not inside the cold directory');
    rmSync(path.join(coldDir, 'back'), { recursive: true });
  }, 60_000);

  it('exit 2 when the server cannot be reached or refuses the token', async () => {
    // A port nothing listens on: taken, then freed.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const analyst = await t.user('cold-cli-analyst');
    const [down, refused, notAdmin] = await Promise.all([
      runCli(['cold', 'verify', '--url', `http://127.0.0.1:${port}`, '--token', t.adminToken]),
      runCli(['cold', 'import', 'x', ...client('nope_nope')]),
      runCli(['cold', 'verify', ...client(analyst.token)]),
    ]);
    expect(down).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('cannot reach') });
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('token refused') });
    expect(notAdmin).toMatchObject({
      code: 2,
      stderr: 'logscope: Only administrators verify and import the cold tier.\n',
    });
  }, 60_000);
});
