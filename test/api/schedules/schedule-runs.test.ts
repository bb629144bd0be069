import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { csvRows } from '../../helpers/csv.js';
import { storedEvents } from '../../helpers/events.js';
import { eventually } from '../../helpers/eventually.js';
import { receiver } from '../../helpers/webhook-receiver.js';

type Who = { id: number; token: string };

interface Mail {
  to: string[];
  data: string;
}

/** The parts of a MIME mail: headers (lower-case names) and the body decoded. */
function mimeParts(raw: string): Array<{ headers: Record<string, string>; body: Buffer }> {
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(raw)?.[1];
  if (!boundary) throw new Error('not multipart');
  return raw
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((part) => {
      const cut = part.indexOf('\r\n\r\n');
      const headers: Record<string, string> = {};
      for (const line of part
        .slice(0, cut)
        .replace(/\r\n[ \t]+/g, ' ')
        .split('\r\n'))
        if (line.includes(':')) {
          const at = line.indexOf(':');
          headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
        }
      const text = part.slice(cut + 4).replace(/\r\n$/, '');
      const encoding = headers['content-transfer-encoding'] ?? '';
      const body =
        encoding === 'base64'
          ? Buffer.from(text.replace(/\s+/g, ''), 'base64')
          : encoding === 'quoted-printable'
            ? Buffer.from(
                text
                  .replace(/=\r\n/g, '')
                  .replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
                'latin1',
              )
            : Buffer.from(text, 'utf8');
      return { headers, body };
    });
}

/** A mail's Subject, its RFC 2047 encoded words decoded. */
function subjectOf(raw: string): string {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ');
  const line = /^Subject: (.*)$/m.exec(head)?.[1] ?? '';
  return line
    .replace(/\?= =\?/g, '?==?')
    .replace(/=\?UTF-8\?([QB])\?([^?]*)\?=/gi, (_m, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(
            text
              .replace(/_/g, ' ')
              .replace(/=([0-9A-F]{2})/gi, (_x, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
            'latin1',
          ).toString('utf8'),
    );
}

/**
 * A schedule's run, from outside: rendered as its owner now, stored as a report, mailed
 * with its file to a real SMTP server and posted with a signed link to a webhook.
 */
describe(`a schedule's run on ${BACKEND}`, () => {
  let t: TestApp;
  let ada: Who;
  let smtp: SMTPServer;
  const mails: Mail[] = [];
  let hook: Awaited<ReturnType<typeof receiver>>;
  const call = (
    token: string | null,
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ) => t.as(token, { method, url, ...(payload ? { payload } : {}) });
  const now = Date.now();

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        let data = '';
        stream.on('data', (d) => {
          data += d;
        });
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address), data });
          callback();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
    hook = await receiver();
    t = await createTestApp({
      LOGSCOPE_SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
      LOGSCOPE_SMTP_FROM: 'Logscope <reports@example.test>',
      LOGSCOPE_PUBLIC_URL: 'http://logs.example.test',
    });
    ada = await t.user('ada');
    // Within the last hour: web and payments events; older ones outside every run's range.
    const events = [
      ...Array.from({ length: 30 }, (_, i) => ({
        app: 'web',
        message: `web ${i}`,
        ago: 60_000 + i * 60_000,
      })),
      ...Array.from({ length: 12 }, (_, i) => ({
        app: 'payments',
        message: `pay ${i}`,
        ago: 90_000 + i * 60_000,
      })),
      ...Array.from({ length: 5 }, (_, i) => ({
        app: 'web',
        message: `old ${i}`,
        ago: 7_200_000 + i * 60_000,
      })),
    ].map((e) => ({ ts: new Date(now - e.ago).toISOString(), host: 'h1', app: e.app, message: e.message }));
    const res = await call(t.adminToken, 'POST', '/api/ingest', events);
    expect(res.json()).toMatchObject({ accepted: events.length, rejected: 0 });
  });
  afterAll(async () => {
    await t?.close();
    await hook?.close();
    await new Promise<void>((r) => smtp.close(() => r()));
  });

  /** Runs a schedule now and waits for its run to end; answers the schedule. */
  async function runNow(token: string, id: number) {
    const res = await call(token, 'POST', `/api/schedules/${id}/run`);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json().last_run).toMatchObject({ trigger: 'manual', status: 'running' });
    await t.rt.services.scheduleRunner.idle();
    const s = (await call(token, 'GET', `/api/schedules/${id}`)).json();
    expect(s.last_run.status).not.toBe('running');
    return s;
  }

  const channel = async (who: Who, body: object) => {
    const res = await call(who.token, 'POST', '/api/channels', body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as number;
  };

  it('stores the report of exactly the range’s events, mails it attached and posts a working link', async () => {
    const search = (
      await call(ada.token, 'POST', '/api/saved-searches', {
        title: 'Web',
        query: 'app:web',
        columns: ['ts', 'message'],
      })
    ).json().id;
    const mail = await channel(ada, { name: 'mail', type: 'email', config: { to: ['ada@example.test'] } });
    const web = await channel(ada, { name: 'hook', type: 'webhook', config: { url: hook.url } });
    const made = await call(ada.token, 'POST', '/api/schedules', {
      name: 'Web hourly',
      source: { saved_search_id: search },
      format: 'csv',
      time_range: { preset: 'last_1_hours' },
      cron: '0 9 * * *',
      time_zone: 'Europe/Paris',
      deliver_to: [mail, web],
    });
    expect(made.statusCode, made.body).toBe(201);
    const s = await runNow(ada.token, made.json().id);
    expect(s.next_run_at).toBe(made.json().next_run_at);
    expect(s.last_run, JSON.stringify(s.last_run)).toMatchObject({
      trigger: 'manual',
      status: 'ok',
      error: null,
    });
    expect(
      s.last_run.deliveries.map((d: { channel_id: number; status: string }) => [d.channel_id, d.status]),
    ).toEqual([
      [mail, 'sent'],
      [web, 'sent'],
    ]);

    // A normal report of Ada's, made by the schedule, titled in the zone.
    const report = (await call(ada.token, 'GET', `/api/reports/${s.last_run.report_id}`)).json();
    expect(report).toMatchObject({
      status: 'READY',
      owner: ada.id,
      schedule_id: s.id,
      timezone: 'Europe/Paris',
      ftype: 'csv',
    });
    expect(report.title).toMatch(/^Web hourly \d{4}-\d\d-\d\d \d\d:\d\d$/);
    const file = (await call(ada.token, 'GET', `/api/reports/${report.id}/file`)).rawPayload;
    const range = report.source.query.params.time_range as { ts_from: number; ts_to: number };
    expect(range.ts_to - range.ts_from).toBeGreaterThanOrEqual(3600);
    expect(range.ts_to - range.ts_from).toBeLessThanOrEqual(3601);
    // Exactly the stored events of the range and query, read beside the API.
    const expected = (
      await storedEvents(
        t,
        (e) => e.app === 'web' && e.ts >= range.ts_from * 1000 && e.ts < range.ts_to * 1000,
      )
    )
      .map((e) => e.message)
      .sort();
    expect(expected).toHaveLength(30);
    const rows = csvRows(file.toString('utf8').replace(/^\uFEFF/, ''));
    const column = (rows[0] as string[]).indexOf('message');
    expect(column, String(rows[0])).toBeGreaterThanOrEqual(0);
    expect(
      rows
        .slice(1)
        .map((r) => r[column])
        .sort(),
    ).toEqual(expected);

    // The mail: subject, text with the link, the same file attached.
    const got = await eventually('the mail', () => mails.find((m) => m.to.includes('ada@example.test')));
    expect(subjectOf(got.data)).toBe(`[Logscope] Web hourly – ${report.title.slice('Web hourly '.length)}`);
    const parts = mimeParts(got.data);
    const attached = parts.find((p) => /attachment/.test(p.headers['content-disposition'] ?? ''));
    expect(attached?.headers['content-disposition']).toContain(report.filename);
    expect(attached?.headers['content-type']).toMatch(/^text\/csv/);
    expect(attached?.body.equals(file)).toBe(true);
    const text =
      parts.find((p) => (p.headers['content-type'] ?? '').startsWith('text/plain'))?.body.toString('utf8') ??
      '';
    expect(text).toContain('Web hourly');
    expect(text).toContain('http://logs.example.test/api/reports/');

    // The webhook: §23's body; its link downloads the same bytes without a token.
    const posted = JSON.parse((await eventually('the webhook', () => hook.got[0])).body);
    expect(posted).toMatchObject({
      kind: 'report',
      schedule: { id: s.id, name: 'Web hourly', cron: '0 9 * * *', time_zone: 'Europe/Paris' },
      report: { id: report.id, filename: report.filename, ftype: 'csv', size: file.length },
      time_range: range,
      run: { at: s.last_run.at, trigger: 'manual' },
    });
    const link = new URL(posted.link);
    expect(link.origin).toBe('http://logs.example.test');
    expect(Date.parse(posted.link_expires_at) - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
    const path = `${link.pathname}${link.search}`;
    const byLink = await call(null, 'GET', path);
    expect(byLink.statusCode, byLink.body).toBe(200);
    expect(byLink.rawPayload.equals(file)).toBe(true);
    // Altered: any character of the signature, the expiry, or another report's id.
    const sig = link.searchParams.get('sig') as string;
    const flipped = `${sig.slice(0, 5)}${sig[5] === 'A' ? 'B' : 'A'}${sig.slice(6)}`;
    for (const bad of [
      path.replace(sig, flipped),
      path.replace(/exp=(\d+)/, (_m, e: string) => `exp=${Number(e) + 1}`),
      path.replace(`/reports/${report.id}/`, `/reports/${report.id + 1}/`),
      path.replace(/exp=\d+&/, ''),
    ]) {
      const res = await call(null, 'GET', bad);
      expect(res.statusCode, bad).toBe(403);
      expect(res.json().code).toBe('link_invalid');
    }
    // Without sig the path still needs a token.
    expect((await call(null, 'GET', link.pathname)).statusCode).toBe(401);
    // A link asked for one second expires.
    const short = await call(ada.token, 'POST', `/api/reports/${report.id}/link`, { expires_in: 1 });
    expect(short.statusCode, short.body).toBe(201);
    const shortUrl = new URL(short.json().url);
    await new Promise((r) => setTimeout(r, 2100));
    const expired = await call(null, 'GET', `${shortUrl.pathname}${shortUrl.search}`);
    expect(expired.statusCode).toBe(403);
    expect(expired.json().code).toBe('link_expired');
    expect(
      (await call(ada.token, 'POST', `/api/reports/${report.id}/link`, { expires_in: 604_801 })).statusCode,
    ).toBe(400);

    // Its deliveries, by schedule.
    const deliveries = (await call(ada.token, 'GET', `/api/deliveries?schedule_id=${s.id}`)).json();
    expect(deliveries.count).toBe(2);
    expect(deliveries.results[0]).toMatchObject({
      schedule_id: s.id,
      report_id: report.id,
      trigger_id: null,
    });
    // Audited and counted.
    await t.rt.services.audit.flush();
    const audit = (await call(t.adminToken, 'GET', `/api/audit?action=schedule.run`)).json();
    expect(audit.results[0]).toMatchObject({
      action: 'schedule.run',
      target: { kind: 'schedule', id: String(s.id) },
      detail: { trigger: 'manual', report_id: report.id, status: 'ok' },
      outcome: 'ok',
      actor: { user_id: ada.id },
    });
    const links = (await call(t.adminToken, 'GET', `/api/audit?action=report.download`)).json();
    expect(
      links.results.some(
        (r: { detail: { via?: string }; actor: { user_id: number | null } }) =>
          r.detail.via === 'link' && r.actor.user_id === null,
      ),
    ).toBe(true);
    const created = (await call(t.adminToken, 'GET', '/api/audit?action=schedule.create')).json();
    expect(created.results.map((r: { target: { id: string } }) => r.target.id)).toContain(String(s.id));
    const metrics = (await call(null, 'GET', '/metrics')).body;
    expect(metrics).toMatch(/logscope_schedule_runs_total\{trigger="manual",status="ok"\} [1-9]/);
    expect(metrics).toMatch(/logscope_schedule_run_seconds_count [1-9]/);
    expect(metrics).toMatch(/logscope_schedules\{enabled="true"\} 1/);
    // A valid link to a report since deleted: 404.
    expect((await call(ada.token, 'DELETE', `/api/reports/${report.id}`)).statusCode).toBe(204);
    expect((await call(null, 'GET', path)).statusCode).toBe(404);
  });

  it('fails a run whose channel was deleted, saying which, and still delivers to the others', async () => {
    const search = (await call(ada.token, 'POST', '/api/saved-searches', { title: 'All', query: '' })).json()
      .id;
    const mail = await channel(ada, { name: 'mail 2', type: 'email', config: { to: ['ops@example.test'] } });
    const gone = await channel(ada, { name: 'gone', type: 'slack', config: { url: hook.url } });
    const made = (
      await call(ada.token, 'POST', '/api/schedules', {
        name: 'Keeps going',
        source: { saved_search_id: search },
        format: 'xlsx',
        time_range: { preset: 'last_1_hours' },
        cron: '0 6 * * *',
        deliver_to: [gone, mail],
        keep_reports: 1,
      })
    ).json();
    expect((await call(ada.token, 'DELETE', `/api/channels/${gone}`)).statusCode).toBe(204);
    const s = await runNow(ada.token, made.id);
    expect(s.last_run.status).toBe('failed');
    expect(s.last_run.error).toBe(`channel ${gone} no longer exists`);
    expect((await call(ada.token, 'GET', `/api/reports/${s.last_run.report_id}`)).json().status).toBe(
      'READY',
    );
    await eventually('the other channel’s mail', () => mails.find((m) => m.to.includes('ops@example.test')));
    // A source deleted later: the schedule stays, its run fails saying why.
    const lost = (await call(ada.token, 'POST', '/api/saved-searches', { title: 'Lost', query: '' })).json()
      .id;
    const other = (
      await call(ada.token, 'POST', '/api/schedules', {
        name: 'Orphan',
        source: { saved_search_id: lost },
        format: 'csv',
        cron: '0 6 * * *',
      })
    ).json();
    expect((await call(ada.token, 'DELETE', `/api/saved-searches/${lost}`)).statusCode).toBe(204);
    const orphan = await runNow(ada.token, other.id);
    expect(orphan.last_run).toMatchObject({ status: 'failed', report_id: null });
    expect(orphan.last_run.error).toBe(`saved search ${lost} no longer exists or its owner cannot see it`);
    // keep_reports 1: a second run leaves only its own report.
    const again = await runNow(ada.token, made.id);
    expect((await call(ada.token, 'GET', `/api/reports/${s.last_run.report_id}`)).statusCode).toBe(404);
    expect((await call(ada.token, 'GET', `/api/reports/${again.last_run.report_id}`)).statusCode).toBe(200);
  });

  it('renders a dashboard over the schedule’s range as pdf; chat channels get the link; one run at a time', async () => {
    const board = await call(ada.token, 'POST', '/api/dashboards', { template: 'builtin/overview' });
    expect(board.statusCode, board.body).toBe(201);
    const slack = await channel(ada, { name: 'slack', type: 'slack', config: { url: hook.url } });
    const teams = await channel(ada, { name: 'teams', type: 'teams', config: { url: hook.url } });
    const templated = await channel(ada, {
      name: 'templated',
      type: 'webhook',
      config: {
        url: hook.url,
        body_template: '{"text": "{{schedule.name}}: {{link}}", "report": {{report.id}}}',
      },
    });
    const made = (
      await call(ada.token, 'POST', '/api/schedules', {
        name: 'Board',
        source: { dashboard_id: board.json().id },
        format: 'pdf',
        time_range: { preset: 'last_1_hours' },
        cron: '0 5 * * 1',
        time_zone: 'Asia/Kolkata',
        deliver_to: [slack, teams, templated],
      })
    ).json();
    const seen = hook.got.length;
    const started = await call(ada.token, 'POST', `/api/schedules/${made.id}/run`);
    expect(started.statusCode).toBe(202);
    const again = await call(ada.token, 'POST', `/api/schedules/${made.id}/run`);
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('run_in_progress');
    await t.rt.services.scheduleRunner.idle();
    const s = (await call(ada.token, 'GET', `/api/schedules/${made.id}`)).json();
    expect(s.last_run.status, s.last_run.error).toBe('ok');
    const report = (await call(ada.token, 'GET', `/api/reports/${s.last_run.report_id}`)).json();
    expect(report).toMatchObject({ ftype: 'pdf', status: 'READY', timezone: 'Asia/Kolkata' });
    expect(report.source.time_range.ts_to - report.source.time_range.ts_from).toBeGreaterThanOrEqual(3600);
    const pdf = (await call(ada.token, 'GET', `/api/reports/${report.id}/file`)).rawPayload;
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const bodies = hook.got.slice(seen).map((g) => JSON.parse(g.body));
    expect(bodies).toHaveLength(3);
    const slackBody = bodies.find((b) => typeof b.text === 'string' && b.text.startsWith('Scheduled report'));
    expect(slackBody?.text).toContain('"Board"');
    expect(slackBody?.text).toMatch(
      /<http:\/\/logs\.example\.test\/api\/reports\/\d+\/file\?exp=\d+&sig=[\w-]+\|/,
    );
    const card = bodies.find((b) => b.type === 'message');
    const action = card?.attachments[0].content.actions[0];
    expect(action).toMatchObject({ type: 'Action.OpenUrl' });
    const cardLink = new URL(action.url);
    const viaCard = await call(null, 'GET', `${cardLink.pathname}${cardLink.search}`);
    expect(viaCard.statusCode).toBe(200);
    expect(viaCard.rawPayload.equals(pdf)).toBe(true);
    const fromTemplate = bodies.find((b) => b.report !== undefined);
    expect(fromTemplate).toMatchObject({ report: report.id });
    expect(fromTemplate.text).toMatch(/^Board: http:\/\/logs\.example\.test\/api\/reports\//);
  });

  it('mails the link alone when the file is larger than scheduleAttachMaxBytes, saying so', async () => {
    const small = await createTestApp({
      LOGSCOPE_SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
      LOGSCOPE_SCHEDULE_ATTACH_MAX_BYTES: '1',
    });
    try {
      const as = (token: string, method: 'GET' | 'POST', url: string, payload?: object) =>
        small.as(token, { method, url, ...(payload ? { payload } : {}) });
      const search = (
        await as(small.adminToken, 'POST', '/api/saved-searches', { title: 'All', query: '' })
      ).json().id;
      const mail = (
        await as(small.adminToken, 'POST', '/api/channels', {
          name: 'big',
          type: 'email',
          config: { to: ['big@example.test'] },
        })
      ).json().id;
      const made = (
        await as(small.adminToken, 'POST', '/api/schedules', {
          name: 'Too big',
          source: { saved_search_id: search },
          format: 'csv',
          cron: '0 4 * * *',
          deliver_to: [mail],
        })
      ).json();
      expect((await as(small.adminToken, 'POST', `/api/schedules/${made.id}/run`)).statusCode).toBe(202);
      await small.rt.services.scheduleRunner.idle();
      const s = (await as(small.adminToken, 'GET', `/api/schedules/${made.id}`)).json();
      expect(s.last_run.status, s.last_run.error).toBe('ok');
      const got = await eventually('the mail', () => mails.find((m) => m.to.includes('big@example.test')));
      expect(got.data).not.toMatch(/content-disposition: attachment/i);
      expect(got.data).toContain('too large to attach');
      // Quoted-printable text: soft line breaks and `=` written as `=3D`.
      const text = got.data.replace(/=\r\n/g, '').replace(/=3D/g, '=');
      expect(text).toMatch(/\/api\/reports\/\d+\/file\?exp=\d+&sig=/);
    } finally {
      await small.close();
    }
  });

  it('runs as the owner now: removed from a team between two runs, the second holds less', async () => {
    const bea = await t.user('bea');
    const team = (await call(t.adminToken, 'POST', '/api/teams', { name: 'pay', members: [bea.id] })).json()
      .id;
    const stream = await call(t.adminToken, 'POST', '/api/streams', {
      title: 'Payments',
      rule: 'app:payments',
      readers: { teams: [team], users: [] },
    });
    expect(stream.statusCode, stream.body).toBe(201);
    const search = (
      await call(bea.token, 'POST', '/api/saved-searches', { title: 'Everything', query: '' })
    ).json().id;
    const made = (
      await call(bea.token, 'POST', '/api/schedules', {
        name: 'Bea',
        source: { saved_search_id: search },
        format: 'csv',
        time_range: { preset: 'last_1_hours' },
        cron: '0 7 * * *',
      })
    ).json();
    const messages = async (reportId: number) => {
      const file = (await call(bea.token, 'GET', `/api/reports/${reportId}/file`)).rawPayload.toString(
        'utf8',
      );
      const rows = csvRows(file.replace(/^\uFEFF/, ''));
      const column = (rows[0] as string[]).indexOf('message');
      return rows.slice(1).map((r) => r[column] as string);
    };
    // An admin's Run still runs it as Bea.
    const first = await runNow(t.adminToken, made.id);
    expect(first.last_run.status, first.last_run.error).toBe('ok');
    const before = await messages(first.last_run.report_id);
    expect(before.filter((m) => m.startsWith('pay '))).toHaveLength(12);
    expect(before.filter((m) => m.startsWith('web '))).toHaveLength(30);
    expect((await call(t.adminToken, 'PATCH', `/api/teams/${team}`, { members: [] })).statusCode).toBe(200);
    const second = await runNow(bea.token, made.id);
    const after = await messages(second.last_run.report_id);
    expect(after.filter((m) => m.startsWith('pay '))).toHaveLength(0);
    expect(after.filter((m) => m.startsWith('web '))).toHaveLength(30);
  });
});
