import { execFile, execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestService } from '../../../src/features/intake/ingest-service.js';
import {
  type SyslogListener,
  startSyslogListener,
} from '../../../src/features/intake/protocols/syslog-listener.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { messageOf, storedEvents } from '../../helpers/events.js';
import { eventuallyAtLeast } from '../../helpers/eventually.js';
import { syslogOnLoopback } from '../../helpers/listeners.js';

const run = promisify(execFile);

const eventually = <T>(read: () => Promise<T[]>, n: number, withinMs = 5000) =>
  eventuallyAtLeast('stored events', read, n, withinMs);

describe(`syslog listener on ${BACKEND}`, () => {
  let t: TestApp;
  let syslog: SyslogListener;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
    syslog = await syslogOnLoopback(t);
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
    const [row] = await eventually(() => storedEvents(t, (e) => e.message === 'udp 5424 hello'), 1);
    expect(row).toMatchObject({ app: 'myapp', severity: 'warning' });
    expect(JSON.stringify(row?.fields)).toContain('10.1.2.3');
  });

  it('takes RFC 3164 over UDP and RFC 5424 over TCP with octet counting from logger(1)', async () => {
    await logger('-d', '--rfc3164', 'udp 3164 hello');
    await logger('-T', '--octet-count', 'tcp octet hello');
    await logger('-T', 'tcp newline hello');
    const rows = await eventually(
      () => storedEvents(t, (e) => messageOf(e).endsWith(' hello') && e.app === 'myapp'),
      4,
    );
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
    const rows = await eventually(() => storedEvents(t, (e) => e.app === 'rawapp'), 3);
    expect(rows.map((r) => r.message).sort()).toEqual(['raw one', 'raw three', 'raw two']);
    expect(rows.map((r) => r.host).sort()).toEqual(['h1', 'h2', 'h3']);
  });

  it('stores unparseable datagrams as plain messages, never dropping them', async () => {
    const udp = createSocket('udp4');
    await new Promise<void>((r) =>
      udp.send('just some text without a header', syslog.port, '127.0.0.1', () => r()),
    );
    udp.close();
    const [row] = await eventually(() => storedEvents(t, (e) => messageOf(e).includes('just some text')), 1);
    expect(row).toBeDefined();
  });

  it('reads app and pid from what Python SysLogHandler sends (no timestamp, no host)', async () => {
    const script = [
      'import logging, logging.handlers, sys',
      'h = logging.handlers.SysLogHandler(address=("127.0.0.1", int(sys.argv[1])))',
      'h.ident = "pyapp[4242]: "',
      'log = logging.getLogger("x"); log.addHandler(h); log.setLevel(logging.INFO)',
      'log.warning("python says hi")',
      'h2 = logging.handlers.SysLogHandler(address=("127.0.0.1", int(sys.argv[1])))',
      'h2.setFormatter(logging.Formatter("%(name)s: %(message)s"))',
      'log2 = logging.getLogger("pyname"); log2.addHandler(h2); log2.error("named hi")',
    ].join('\n');
    await run('python3', ['-c', script, String(syslog.port)]);
    const [row] = await eventually(() => storedEvents(t, (e) => e.message === 'python says hi'), 1);
    expect(row).toMatchObject({ app: 'pyapp', severity: 'warning' });
    const event = (
      await t.as(t.adminToken, { method: 'GET', url: `/api/events/${row?.ev_id as string}` })
    ).json();
    expect(event).toMatchObject({ app: 'pyapp', proc_id: '4242', message: 'python says hi' });
    const [named] = await eventually(() => storedEvents(t, (e) => e.message === 'named hi'), 1);
    expect(named).toMatchObject({ app: 'pyname', severity: 'error' });
  });

  it('keeps at least 99 % of a burst of 6,000 datagrams sent as fast as possible', async () => {
    const total = 6000;
    const sender = `
      const dgram = require('node:dgram');
      const s = dgram.createSocket('udp4');
      let done = 0;
      for (let i = 0; i < ${total}; i++) {
        const msg = '<13>' + 'Nov 22 10:00:00 burst-host omfwd[7]: burst ' + i + ' ' + 'x'.repeat(120);
        s.send(msg, ${syslog.port}, '127.0.0.1', () => { if (++done === ${total}) s.close(); });
      }`;
    await run(process.execPath, ['-e', sender]);
    const count = async () =>
      (await storedEvents(t, (e) => e.host === 'burst-host')).length >= total * 0.99 ? [1] : [];
    await eventually(count, 1, 20_000);
    const stored = (await storedEvents(t, (e) => e.host === 'burst-host')).length;
    expect(stored).toBeGreaterThanOrEqual(total * 0.99);
    expect(stored).toBeLessThanOrEqual(total);
  }, 30_000);
});

describe(`syslog losses in /metrics on ${BACKEND}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
  });
  afterAll(() => t.close());

  const metric = async (name: string) => {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.slice(name.length + 1));
  };

  it('says when the kernel grants less receive buffer than asked', async () => {
    const warnings: string[] = [];
    const listener = await startSyslogListener(t.rt.services.ingest, {
      host: '127.0.0.1',
      port: 0,
      udpReceiveBuffer: 2 ** 30,
      log: { warn: (_o, msg) => warnings.push(msg) },
    });
    await listener.close();
    expect(listener.stats().udpReceiveBufferBytes).toBeLessThan(2 ** 31);
    expect(warnings.join()).toMatch(/net\.core\.rmem_max/);
  });

  it('counts datagrams the kernel dropped and those ingest refused', async () => {
    const warnings: string[] = [];
    // The smallest buffer the kernel allows: a burst overflows it while the loop is busy.
    const tiny = await startSyslogListener(t.rt.services.ingest, {
      host: '127.0.0.1',
      port: 0,
      udpReceiveBuffer: 1,
      log: { warn: (_o, msg) => warnings.push(msg) },
    });
    const unwatch = t.app.watchMetrics(tiny);
    const refusing = { ingest: async () => Promise.reject(new Error('Ingest queue is full')) };
    const full = await startSyslogListener(refusing as unknown as IngestService, {
      host: '127.0.0.1',
      port: 0,
      log: { warn: () => undefined },
    });
    const unwatchFull = t.app.watchMetrics(full);
    try {
      const sender = (port: number, n: number) => `
        const s = require('node:dgram').createSocket('udp4');
        let done = 0;
        for (let i = 0; i < ${n}; i++) s.send('<14>drop me ' + i, ${port}, '127.0.0.1', () => { if (++done === ${n}) s.close(); });`;
      // execFileSync blocks this process, and so the listener, while the child sends.
      execFileSync(process.execPath, ['-e', sender(tiny.port, 2000)]);
      await run(process.execPath, ['-e', sender(full.port, 20)]);
      const started = Date.now();
      while (full.stats().udpRefused < 20 && Date.now() - started < 5000) {
        await new Promise((r) => setTimeout(r, 20));
      }
      const kernel = await metric('logscope_syslog_udp_dropped_total{reason="kernel"}');
      const refused = await metric('logscope_syslog_udp_dropped_total{reason="refused"}');
      const received = await metric('logscope_syslog_udp_received_total');
      expect(kernel).toBeGreaterThan(0);
      expect(kernel).toBe(tiny.stats().udpKernelDrops);
      expect(refused).toBe(20);
      expect(received).toBe(tiny.stats().udpReceived + 20);
      expect(tiny.stats().udpReceived + tiny.stats().udpKernelDrops).toBe(2000);
      expect(warnings).toEqual([]);
      expect(await metric('logscope_syslog_udp_receive_buffer_bytes')).toBeGreaterThan(0);
    } finally {
      unwatch();
      unwatchFull();
      await tiny.close();
      await full.close();
    }
  });
});
