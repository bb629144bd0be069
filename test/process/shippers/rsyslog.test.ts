import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../../helpers/app.js';
import {
  awaitEvents,
  compareArrivals,
  type Daemon,
  findRsyslog,
  hasRsyslogModule,
  imfileInputs,
  LOCAL_HOST,
  type Logscope,
  makeLines,
  perfect,
  privateDir,
  type Rsyslog,
  sendWithLogger,
  skipFor,
  startLogscope,
  startRsyslog,
  stopAllDaemons,
} from '../../helpers/shippers.js';

// rsyslog 8 (Debian 12: 8.2302) as a private instance: lines go in through imuxsock
// on a private socket (logger(1)), or imfile for the UDP burst, and out through omfwd
// or omelasticsearch to Logscope.
const found = findRsyslog();
const rsyslog: Rsyslog | undefined = typeof found === 'string' ? undefined : found;
const missing = typeof found === 'string' ? found : undefined;
const skipAll = skipFor('the rsyslog shipper tests', missing);
const missingEs =
  missing ??
  (rsyslog && !hasRsyslogModule(rsyslog, 'omelasticsearch') ? 'install rsyslog-elasticsearch' : undefined);
const skipEs = skipAll || skipFor('the rsyslog omelasticsearch tests', missingEs);

describe.skipIf(skipAll)(`rsyslog → Logscope on ${BACKEND}`, () => {
  let ls: Logscope;
  beforeAll(async () => {
    ls = await startLogscope();
  });
  afterAll(async () => {
    await stopAllDaemons();
    await ls?.close();
  });

  /** Runs one private rsyslogd with `action`, feeds it `lines`, returns what arrived. */
  async function ship(
    name: string,
    action: (dir: string) => string,
    n: number,
    opts: { timeoutMs?: number; checkApp?: boolean; imfile?: boolean } = {},
  ) {
    if (!rsyslog) throw new Error(`rsyslog is required here: ${missing}`);
    const r = rsyslog;
    const priv = privateDir(`rsyslog-${name}`);
    const marker = `rsyslog-${name}-${Date.now().toString(36)}`;
    const lines = makeLines(marker, n, `rs-${name}`);
    const from = Math.floor(Date.now() / 1000);
    let daemon: Daemon | undefined;
    try {
      const inputs = opts.imfile ? imfileInputs(priv.dir, lines) : '';
      const started = await startRsyslog(r, priv.dir, `${inputs}\n${action(priv.dir)}`);
      daemon = started.daemon;
      if (!opts.imfile) await sendWithLogger(started.socket, priv.dir, lines);
      const events = await awaitEvents(ls, marker, n, opts.timeoutMs);
      return {
        lines,
        events,
        report: compareArrivals(lines, events, { from, host: LOCAL_HOST, checkApp: opts.checkApp }),
        daemon,
      };
    } finally {
      await daemon?.stop();
      priv.remove();
    }
  }

  it('omfwd over TCP (RFC 5424, octet-counted framing): every line once, fields filled', async () => {
    const { report } = await ship(
      'tcp',
      () => `action(type="omfwd" target="127.0.0.1" port="${ls.syslogPort}" protocol="tcp"
        template="RSYSLOG_SyslogProtocol23Format" TCP_Framing="octet-counted")`,
      600,
    );
    expect(report).toEqual(perfect(600));
  }, 60_000);

  it('omfwd over TCP (default RFC 3164 forward format, newline framing)', async () => {
    const { report } = await ship(
      'tcp3164',
      () => `action(type="omfwd" target="127.0.0.1" port="${ls.syslogPort}" protocol="tcp")`,
      300,
    );
    expect(report).toEqual(perfect(300));
  }, 60_000);

  it('omfwd over UDP: a burst of 6,000 lines keeps >= 99 %, none twice, fields filled', async () => {
    const n = 6000;
    const { report } = await ship(
      'udp',
      () => `action(type="omfwd" target="127.0.0.1" port="${ls.syslogPort}" protocol="udp")`,
      n,
      { timeoutMs: 30_000, imfile: true },
    );
    expect({ ...report, examples: report.examples.wrongFields }).toMatchObject({
      duplicated: 0,
      unexpected: 0,
      wrongFields: 0,
      examples: [],
    });
    expect(report.arrivedOnce, `only ${report.arrivedOnce} of ${n} datagrams stored`).toBeGreaterThanOrEqual(
      Math.ceil(n * 0.99),
    );
  }, 90_000);

  // omelasticsearch can only authenticate with uid/pwd (HTTP Basic; no header option),
  // so the token goes in as the password. It posts to `<server>/_bulk`.
  const esAction = (index: string, extra = '') =>
    `action(type="omelasticsearch" server="${ls.url}/api/ingest/es" searchIndex="${index}"
      bulkmode="on" uid="rsyslog" pwd="${ls.ingestToken}" ${extra})`;

  it.skipIf(skipEs)(
    'omelasticsearch (bulk) with a template of rsyslog property names (msg, fromhost, programname...)',
    async () => {
      const { report, daemon } = await ship(
        'es',
        (dir) => `module(load="omelasticsearch")
        template(name="rsyslog-json" type="list" option.jsonf="on") {
          property(outname="timereported" name="timereported" dateFormat="rfc3339" format="jsonf")
          property(outname="fromhost" name="hostname" format="jsonf")
          property(outname="programname" name="programname" format="jsonf")
          property(outname="syslogtag" name="syslogtag" format="jsonf")
          property(outname="severity" name="syslogseverity-text" format="jsonf")
          property(outname="facility" name="syslogfacility-text" format="jsonf")
          property(outname="msg" name="msg" format="jsonf")
        }
        ${esAction('rsyslog', `template="rsyslog-json" esVersion.major="8" errorfile="${dir}/es-errors.json"`)}`,
        400,
      );
      expect(report, daemon.output()).toEqual(perfect(400));
    },
    60_000,
  );

  it.skipIf(skipEs)(
    'omelasticsearch (bulk) with the %jsonmesg% property as the document',
    async () => {
      const { report, daemon } = await ship(
        'esjsonmesg',
        () => `module(load="omelasticsearch")
      template(name="jsonmesg" type="string" string="%jsonmesg%")
      ${esAction('rsyslog-jsonmesg', 'template="jsonmesg"')}`,
        150,
      );
      expect(report, daemon.output()).toEqual(perfect(150));
    },
    60_000,
  );

  it.skipIf(skipEs)(
    'omelasticsearch (bulk) with its default template (no program name in it: app not checked)',
    async () => {
      // StdJSONFmt: message, fromhost, facility, priority, timereported, timegenerated;
      // the action line carries "_type":"events" (ES 7 style).
      const { report, daemon } = await ship(
        'esdefault',
        () => `module(load="omelasticsearch")
        ${esAction('rsyslog-default')}`,
        150,
        { checkApp: false },
      );
      expect(report, daemon.output()).toEqual(perfect(150));
    },
    60_000,
  );
});
