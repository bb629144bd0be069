import {
  type GelfListenerOptions,
  startGelfListener,
} from '../../src/features/intake/protocols/gelf-listener.js';
import {
  type SyslogListenerOptions,
  startSyslogListener,
} from '../../src/features/intake/protocols/syslog-listener.js';
import type { TestApp } from './app.js';

/** Where a test's listeners listen: a free port on loopback, their warnings unheard. */
const LOOPBACK = { host: '127.0.0.1', port: 0, log: { warn: () => undefined } } as const;

/** The test app's syslog listener (UDP and TCP) on a free loopback port; `opts` replace the defaults. */
export const syslogOnLoopback = (t: TestApp, opts: Partial<SyslogListenerOptions> = {}) =>
  startSyslogListener(t.rt.services.ingest, { ...LOOPBACK, ...opts });

/** The test app's GELF listener (UDP and TCP) on a free loopback port; `opts` replace the defaults. */
export const gelfOnLoopback = (t: TestApp, opts: Partial<GelfListenerOptions> = {}) =>
  startGelfListener(t.rt.services.ingest, { ...LOOPBACK, ...opts });
