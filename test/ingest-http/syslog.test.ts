import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SyslogListener, startSyslogListener } from '../../src/ingest/syslog-listener.js';
import { BACKEND, createTestApp, type TestApp } from '../helpers/app.js';
import { storedEvents } from '../helpers/events.js';

const run = promisify(execFile);

async function eventually<T>(read: () => Promise<T[]>, n: number): Promise<T[]> {
  const started = Date.now();
  for (;;) {
    const rows = await read();
    if (rows.length >= n || Date.now() - started > 5000) return rows;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe(`syslog listener on ${BACKEND}`, () => {
  let t: TestApp;
  let syslog: SyslogListener;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
    syslog = await startSyslogListener(t.rt.services.ingest, {
      host: '127.0.0.1',
      port: 0,
      log: { warn: () => undefined },
    });
  });
  afterAll(async () => {
    await syslog.close();
    await t.close();
  });

  const logger = (...args: string[]) =>
    run('logger', [
      '-n',
      '127.0.0.1',
      '-P',
      String(syslog.port),
      '-t',
      'myapp',
      '-p',
      'auth.warning',
      ...args,
    ]);

  it('takes RFC 5424 over UDP from logger(1), with structured data', async () => {
    await logger(
      '-d',
      '--rfc5424',
      '--sd-id',
      'origin@32473',
      '--sd-param',
      'ip="10.1.2.3"',
      'udp 5424 hello',
    );
    const [row] = await eventually(() => storedEvents(t, "message = 'udp 5424 hello'"), 1);
    expect(row).toMatchObject({ app: 'myapp', severity: 'warning' });
    expect(JSON.stringify(row?.fields)).toContain('10.1.2.3');
  });

  it('takes RFC 3164 over UDP and RFC 5424 over TCP with octet counting from logger(1)', async () => {
    await logger('-d', '--rfc3164', 'udp 3164 hello');
    await logger('-T', '--octet-count', 'tcp octet hello');
    await logger('-T', 'tcp newline hello');
    const rows = await eventually(() => storedEvents(t, "message LIKE '% hello' AND app = 'myapp'"), 4);
    const messages = rows.map((r) => r.message);
    expect(messages).toEqual(
      expect.arrayContaining(['udp 3164 hello', 'tcp octet hello', 'tcp newline hello']),
    );
    for (const r of rows) expect(r.severity).toBe('warning');
  });

  it('splits a raw TCP stream mixing framings and chunk boundaries', async () => {
    const msgs = [
      '<13>1 2026-11-21T10:00:00.000Z h1 rawapp - - - raw one',
      '<13>Nov 21 10:00:01 h2 rawapp[12]: raw two',
      '<13>1 2026-11-21T10:00:02Z h3 rawapp 9 ID1 [a@1 k="v"] raw three',
    ];
    const stream = `${Buffer.byteLength(msgs[0] as string)} ${msgs[0]}${msgs[1]}\n${msgs[2]}\n`;
    const sock = connect(syslog.port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    for (let i = 0; i < stream.length; i += 7) sock.write(stream.slice(i, i + 7));
    sock.end();
    const rows = await eventually(() => storedEvents(t, "app = 'rawapp'"), 3);
    expect(rows.map((r) => r.message).sort()).toEqual(['raw one', 'raw three', 'raw two']);
    expect(rows.map((r) => r.host).sort()).toEqual(['h1', 'h2', 'h3']);
  });

  it('stores unparseable datagrams as plain messages, never dropping them', async () => {
    const udp = createSocket('udp4');
    await new Promise<void>((r) =>
      udp.send('just some text without a header', syslog.port, '127.0.0.1', () => r()),
    );
    udp.close();
    const [row] = await eventually(() => storedEvents(t, "message LIKE '%just some text%'"), 1);
    expect(row).toBeDefined();
  });
});
