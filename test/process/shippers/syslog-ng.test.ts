import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../../helpers/app.js';
import {
  awaitEvents,
  compareArrivals,
  type Daemon,
  findSyslogNg,
  LOCAL_HOST,
  type Logscope,
  makeLines,
  perfect,
  privateDir,
  type SyslogNg,
  sendWithLogger,
  skipFor,
  startLogscope,
  startSyslogNg,
  stopAllDaemons,
} from '../../helpers/shippers.js';

// syslog-ng 3.38 (Debian 12) as a private instance: lines go in through a private
// unix-dgram socket (logger(1)), out through elasticsearch-http() or syslog().
const found = findSyslogNg();
const syslogNg: SyslogNg | undefined = typeof found === 'string' ? undefined : found;
const missing = typeof found === 'string' ? found : undefined;
const skipAll = skipFor('the syslog-ng shipper tests', missing);
const missingEs =
  missing ?? (syslogNg?.scl && syslogNg.http ? undefined : 'install syslog-ng-scl and syslog-ng-mod-http');
const skipEs = skipAll || skipFor('the syslog-ng elasticsearch-http() test', missingEs);

describe.skipIf(skipAll)(`syslog-ng → Logscope on ${BACKEND}`, () => {
  let ls: Logscope;
  beforeAll(async () => {
    ls = await startLogscope();
  });
  afterAll(async () => {
    await stopAllDaemons();
    await ls?.close();
  });

  /** Runs one private syslog-ng with destination `d_out`, feeds it the lines, returns what arrived. */
  async function ship(name: string, destination: string, n: number) {
    if (!syslogNg) throw new Error(`syslog-ng is required here: ${missing}`);
    const s = syslogNg;
    const priv = privateDir(`syslog-ng-${name}`);
    const marker = `syslog-ng-${name}-${Date.now().toString(36)}`;
    const lines = makeLines(marker, n, `ng-${name}`);
    const from = Math.floor(Date.now() / 1000);
    let daemon: Daemon | undefined;
    try {
      const started = await startSyslogNg(
        s,
        priv.dir,
        `destination d_out { ${destination}; };
log { source(s_in); destination(d_out); };`,
      );
      daemon = started.daemon;
      await sendWithLogger(started.socket, priv.dir, lines);
      const events = await awaitEvents(ls, marker, n);
      return { report: compareArrivals(lines, events, { from, host: LOCAL_HOST }), daemon };
    } finally {
      await daemon?.stop();
      priv.remove();
    }
  }

  it.skipIf(skipEs)(
    'elasticsearch-http() with its default template (MESSAGE HOST PROGRAM PRIORITY ISODATE...)',
    async () => {
      // The token goes in as the basic-auth password (user()/password()); the default
      // template is deliberately kept: its upper-case names must be normalised.
      const { report, daemon } = await ship(
        'es',
        `elasticsearch-http(url("${ls.url}/api/ingest/es/_bulk") index("syslog-ng") type("")
          user("syslog-ng") password("${ls.ingestToken}") batch-lines(50) workers(2) timeout(10))`,
        500,
      );
      expect(report, daemon.output()).toEqual(perfect(500));
    },
    60_000,
  );

  it('syslog() destination: RFC 5424 over TCP with octet counting', async () => {
    const { report, daemon } = await ship(
      'syslog',
      `syslog("127.0.0.1" transport("tcp") port(${ls.syslogPort}))`,
      600,
    );
    expect(report, daemon.output()).toEqual(perfect(600));
  }, 60_000);
});
