import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { storedEvents } from '../../helpers/events.js';
import { gelfOnLoopback, syslogOnLoopback } from '../../helpers/listeners.js';

// Issue 29: the syslog and GELF TCP listeners had no connection cap, no idle timeout, and
// no lasting listener for accept errors.

const open = (port: number) =>
  new Promise<Socket>((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
const closed = (s: Socket, ms: number) =>
  new Promise<boolean>((resolve) => {
    if (s.destroyed || s.readyState === 'closed') return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    s.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });

describe(`TCP intake bounds (syslog, GELF) on ${BACKEND}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
  });
  afterAll(() => t.close());

  const listeners = {
    syslog: (limits: { maxConnections?: number; idleMs?: number }) => syslogOnLoopback(t, limits),
    gelf: (limits: { maxConnections?: number; idleMs?: number }) => gelfOnLoopback(t, limits),
  };
  const frame = {
    syslog: (m: string) => `<14>${m}\n`,
    gelf: (m: string) => `${JSON.stringify({ short_message: m })}\0`,
  };

  for (const kind of ['syslog', 'gelf'] as const) {
    it(`${kind}: connections over the cap are closed as they come and counted; the others still deliver`, async () => {
      const listener = await listeners[kind]({ maxConnections: 3 });
      const sockets: Socket[] = [];
      try {
        for (let i = 0; i < 5; i++) sockets.push(await open(listener.port));
        const refused = await Promise.all(sockets.slice(3).map((s) => closed(s, 2000)));
        expect(refused).toEqual([true, true]);
        expect(listener.stats().tcpConnectionsRefused).toBe(2);
        sockets[0]!.write(frame[kind](`${kind}-capped still delivers`));
        await expect
          .poll(
            async () => (await storedEvents(t, (e) => e.message === `${kind}-capped still delivers`)).length,
            { timeout: 5000 },
          )
          .toBe(1);
      } finally {
        for (const s of sockets) s.destroy();
        await listener.close();
      }
    });

    it(`${kind}: an idle connection is closed after idleMs and counted; close() does not wait for connections`, async () => {
      const listener = await listeners[kind]({ idleMs: 300 });
      const idle = await open(listener.port);
      const busy = await open(listener.port);
      const keepBusy = setInterval(() => busy.write(frame[kind](`${kind}-keepalive`)), 100);
      try {
        expect(await closed(idle, 3000)).toBe(true);
        expect(busy.destroyed).toBe(false);
        expect(listener.stats().tcpIdleClosed).toBeGreaterThanOrEqual(1);
      } finally {
        clearInterval(keepBusy);
        const started = Date.now();
        await listener.close();
        expect(Date.now() - started).toBeLessThan(1000);
        busy.destroy();
      }
    });

    it(`${kind}: a connection reset mid-frame hurts nothing`, async () => {
      const listener = await listeners[kind]({});
      try {
        const s = await open(listener.port);
        s.write(kind === 'syslog' ? '<14>half a fra' : '{"short_message": "half');
        s.resetAndDestroy();
        const next = await open(listener.port);
        next.write(frame[kind](`${kind}-after-reset`));
        await expect
          .poll(async () => (await storedEvents(t, (e) => e.message === `${kind}-after-reset`)).length, {
            timeout: 5000,
          })
          .toBe(1);
        next.destroy();
      } finally {
        await listener.close();
      }
    });
  }
});
