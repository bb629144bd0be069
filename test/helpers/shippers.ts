import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { GelfListener } from '../../src/features/intake/protocols/gelf-listener.js';
import type { SyslogListener } from '../../src/features/intake/protocols/syslog-listener.js';
import { createTestApp, type TestApp } from './app.js';
import { eventually } from './eventually.js';
import { gelfOnLoopback, syslogOnLoopback } from './listeners.js';

/**
 * Real log shippers (rsyslog, syslog-ng) run as private, unprivileged instances
 * against a Logscope listening on 127.0.0.1: every instance has its own config, pid
 * file, work dir and input socket under a temp dir, and never touches /dev/log,
 * port 514 or the system's daemons. `.ci/run` installs the binaries; on a developer
 * machine without them the tests skip, saying why.
 */

const run = promisify(execFile);

// ---------------------------------------------------------------- binaries

function firstExisting(candidates: Array<string | undefined>): string | undefined {
  return candidates.find((c): c is string => !!c && existsSync(c));
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

/** Where `.ci/run` unpacks rsyslog when the system has syslog-ng (the two packages conflict). */
export const CI_RSYSLOG_PREFIX = process.env.LOGSCOPE_TEST_RSYSLOG_PREFIX ?? '/opt/logscope-ci/rsyslog';

export interface Rsyslog {
  bin: string;
  /** Directory holding the input/output modules (`imuxsock.so`, `omelasticsearch.so`...). */
  moduleDir: string;
}

/** Finds the module directory next to an rsyslogd (`<prefix>/usr/sbin` → `<prefix>/usr/lib/<triplet>/rsyslog`). */
function rsyslogModuleDir(bin: string): string | undefined {
  const lib = path.resolve(path.dirname(bin), '..', 'lib');
  const dirs = [path.join(lib, 'rsyslog')];
  try {
    for (const d of readdirSync(lib)) dirs.push(path.join(lib, d, 'rsyslog'));
  } catch {
    // no lib dir
  }
  return dirs.find((d) => existsSync(path.join(d, 'lmnet.so')));
}

/** rsyslogd and its modules, or why not. */
export function findRsyslog(): Rsyslog | string {
  const bin = firstExisting([
    process.env.LOGSCOPE_TEST_RSYSLOGD,
    onPath('rsyslogd'),
    '/usr/sbin/rsyslogd',
    path.join(CI_RSYSLOG_PREFIX, 'usr/sbin/rsyslogd'),
  ]);
  if (!bin) return 'rsyslogd not found (install rsyslog, or run .ci/run)';
  const moduleDir = rsyslogModuleDir(bin);
  if (!moduleDir) return `rsyslog modules not found next to ${bin}`;
  return { bin, moduleDir };
}

export function hasRsyslogModule(r: Rsyslog, name: string): boolean {
  return existsSync(path.join(r.moduleDir, `${name}.so`));
}

export interface SyslogNg {
  bin: string;
  /** syslog-ng's SCL (elasticsearch-http() is defined there) is installed. */
  scl: boolean;
  /** The http module (syslog-ng-mod-http) is installed. */
  http: boolean;
}

/** syslog-ng, or why not. */
export function findSyslogNg(): SyslogNg | string {
  const bin = firstExisting([
    process.env.LOGSCOPE_TEST_SYSLOG_NG,
    onPath('syslog-ng'),
    '/usr/sbin/syslog-ng',
  ]);
  if (!bin)
    return 'syslog-ng not found (install syslog-ng-core syslog-ng-scl syslog-ng-mod-http, or run .ci/run)';
  const prefix = path.resolve(path.dirname(bin), '..');
  const modDirs = [path.join(prefix, 'lib/syslog-ng')];
  try {
    for (const d of readdirSync(modDirs[0] as string)) modDirs.push(path.join(modDirs[0] as string, d));
  } catch {
    // no module dir
  }
  return {
    bin,
    scl: existsSync(path.join(prefix, 'share/syslog-ng/include/scl/elasticsearch/elastic-http.conf')),
    http: modDirs.some((d) => existsSync(path.join(d, 'libhttp.so'))),
  };
}

export function findLogger(): string | undefined {
  return firstExisting([onPath('logger'), '/usr/bin/logger']);
}

/**
 * `.ci/run` sets LOGSCOPE_TEST_REQUIRE_SHIPPERS=1 after installing the shippers: there a
 * missing one fails its tests instead of skipping them.
 */
export const SHIPPERS_REQUIRED = process.env.LOGSCOPE_TEST_REQUIRE_SHIPPERS === '1';

/** Whether to skip tests that need something missing (`why`); says so on the console. */
export function skipFor(what: string, why: string | undefined): boolean {
  if (!why) return false;
  if (SHIPPERS_REQUIRED) return false;
  console.warn(`SKIPPING ${what}: ${why}`);
  return true;
}

// ---------------------------------------------------------------- processes

export interface Daemon {
  readonly output: () => string;
  readonly exited: () => boolean;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
// Whatever a failed or timed-out test left running dies with the test process.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

const daemons = new Set<Daemon>();

/** Stops every daemon still running (for `afterAll`). */
export async function stopAllDaemons(): Promise<void> {
  await Promise.all([...daemons].map((d) => d.stop()));
}

/** Runs a foreground daemon, capturing its output; `stop()` is SIGTERM, then SIGKILL after 5 s. */
export function startDaemon(bin: string, args: string[], cwd: string): Daemon {
  const child: ChildProcess = spawn(bin, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let out = '';
  let exited = child.exitCode !== null;
  child.stdout?.on('data', (b: Buffer) => {
    out = (out + b.toString()).slice(-20_000);
  });
  child.stderr?.on('data', (b: Buffer) => {
    out = (out + b.toString()).slice(-20_000);
  });
  const done = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      running.delete(child);
      resolve();
    });
    child.once('error', (err) => {
      out += `\nspawn error: ${err.message}`;
      exited = true;
      resolve();
    });
  });
  const daemon: Daemon = {
    output: () => out,
    exited: () => exited,
    async stop() {
      daemons.delete(daemon);
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await done;
      clearTimeout(timer);
    },
  };
  daemons.add(daemon);
  return daemon;
}

/** A private temp dir for one shipper instance. */
export function privateDir(name: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), `logscope-${name}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function waitFor(what: string, check: () => boolean, timeoutMs = 10_000, daemon?: Daemon) {
  await eventually(
    () => `${what}\n${daemon?.output() ?? ''}`,
    () => {
      if (daemon?.exited()) throw new Error(`${what}: the daemon exited:\n${daemon.output()}`);
      return check();
    },
    { withinMs: timeoutMs },
  );
}

// ---------------------------------------------------------------- rsyslog

/** Starts `rsyslogd -n` with `body` (RainerScript) after a private global() and imuxsock input. */
export async function startRsyslog(
  r: Rsyslog,
  dir: string,
  body: string,
): Promise<{ daemon: Daemon; socket: string }> {
  const socket = path.join(dir, 'log.sock');
  const work = path.join(dir, 'work');
  rmSync(work, { recursive: true, force: true });
  const conf = path.join(dir, 'rsyslog.conf');
  writeFileSync(
    conf,
    `global(workDirectory="${dir}" maxMessageSize="64k")
module(load="imuxsock" SysSock.Use="off")
input(type="imuxsock" Socket="${socket}" RateLimit.Interval="0" CreatePath="on")
${body}
`,
  );
  const args = ['-n', '-f', conf, '-i', path.join(dir, 'rsyslogd.pid'), '-M', r.moduleDir];
  try {
    await run(r.bin, ['-N1', ...args.slice(1)], { timeout: 10_000 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`rsyslog rejects its config:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
  const daemon = startDaemon(r.bin, args, dir);
  await waitFor('rsyslogd socket', () => existsSync(socket), 10_000, daemon);
  return { daemon, socket };
}

// ---------------------------------------------------------------- syslog-ng

/** Starts `syslog-ng -F` with `body` after a header and a private unix-dgram source `s_in`. */
export async function startSyslogNg(
  s: SyslogNg,
  dir: string,
  body: string,
): Promise<{ daemon: Daemon; socket: string }> {
  const socket = path.join(dir, 'log.sock');
  const conf = path.join(dir, 'syslog-ng.conf');
  writeFileSync(
    conf,
    `@version: 3.38
@include "scl.conf"
options { stats-freq(0); chain-hostnames(no); keep-hostname(yes); flush-lines(0); };
source s_in { unix-dgram("${socket}"); };
${body}
`,
  );
  const args = [
    '-F',
    '--no-caps',
    '-f',
    conf,
    '-p',
    path.join(dir, 'syslog-ng.pid'),
    '-R',
    path.join(dir, 'syslog-ng.persist'),
    '-c',
    path.join(dir, 'syslog-ng.ctl'),
  ];
  try {
    await run(s.bin, ['--syntax-only', ...args.slice(1)], { timeout: 10_000 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`syslog-ng rejects its config:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
  const daemon = startDaemon(s.bin, ['-e', ...args], dir);
  await waitFor('syslog-ng socket', () => existsSync(socket), 10_000, daemon);
  return { daemon, socket };
}

// ---------------------------------------------------------------- feeding lines

export interface Line {
  message: string;
  app: string;
  /** Logscope's name for the syslog severity the line is sent with. */
  severity: 'error' | 'warning' | 'info';
}

const LOGGER_PRIORITY = { error: 'user.err', warning: 'user.warning', info: 'user.info' } as const;

/** `n` unique lines carrying `marker`, spread over three severities. */
export function makeLines(marker: string, n: number, app: string): Line[] {
  const sev = ['info', 'warning', 'error'] as const;
  return Array.from({ length: n }, (_, i) => ({
    message: `${marker} line ${String(i).padStart(5, '0')} of ${n}: disk /dev/sda${i % 4} at ${i % 100}%`,
    app,
    severity: sev[i % 3] as Line['severity'],
  }));
}

/**
 * Sends the lines to a local syslog socket with logger(1), one logger run per
 * severity and app (each reads its lines from a file, one message a line).
 */
export async function sendWithLogger(socket: string, dir: string, lines: Line[]): Promise<void> {
  const logger = findLogger();
  if (!logger) throw new Error('logger(1) not found');
  const groups = new Map<string, Line[]>();
  for (const l of lines) {
    const key = `${l.app}\t${l.severity}`;
    groups.set(key, [...(groups.get(key) ?? []), l]);
  }
  let k = 0;
  for (const [key, group] of groups) {
    const [app, severity] = key.split('\t') as [string, Line['severity']];
    const file = path.join(dir, `lines-${k++}.txt`);
    writeFileSync(file, `${group.map((l) => l.message).join('\n')}\n`);
    await run(
      logger,
      ['-u', socket, '-d', '--socket-errors=on', '-t', app, '-p', LOGGER_PRIORITY[severity], '-f', file],
      { timeout: 30_000 },
    );
  }
}

/**
 * Writes the lines to files, one per app and severity, and returns rsyslog imfile
 * inputs reading them whole: started after the files exist, rsyslog reads and forwards
 * them in one burst (unlike logger(1), which paces the sending).
 */
export function imfileInputs(dir: string, lines: Line[]): string {
  const groups = new Map<string, Line[]>();
  for (const l of lines) {
    const key = `${l.app}\t${l.severity}`;
    groups.set(key, [...(groups.get(key) ?? []), l]);
  }
  const rsyslogSeverity = { error: 'err', warning: 'warning', info: 'info' } as const;
  const inputs = ['module(load="imfile")'];
  let k = 0;
  for (const [key, group] of groups) {
    const [app, severity] = key.split('\t') as [string, Line['severity']];
    const file = path.join(dir, `burst-${k++}.log`);
    writeFileSync(file, `${group.map((l) => l.message).join('\n')}\n`);
    inputs.push(
      `input(type="imfile" File="${file}" Tag="${app}:" Severity="${rsyslogSeverity[severity]}" Facility="user")`,
    );
  }
  return inputs.join('\n');
}

// ---------------------------------------------------------------- Logscope under test

export interface Logscope {
  t: TestApp;
  /** `http://127.0.0.1:<port>` */
  url: string;
  httpPort: number;
  syslogPort: number;
  /** GELF, UDP and TCP. */
  gelfPort: number;
  gelfListener: GelfListener;
  ingestToken: string;
  close(): Promise<void>;
}

/** A Logscope listening on 127.0.0.1 with ephemeral HTTP, syslog and GELF (UDP+TCP) ports. */
export async function startLogscope(): Promise<Logscope> {
  const t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
  const ingestToken = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'shippers' }))
    .secret_key;
  const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  let syslog: SyslogListener | undefined;
  let gelf: GelfListener | undefined;
  try {
    syslog = await syslogOnLoopback(t);
    gelf = await gelfOnLoopback(t);
    t.app.watchMetrics(gelf);
  } catch (err) {
    await syslog?.close();
    await t.close();
    throw err;
  }
  const listener = syslog;
  const gelfListener = gelf;
  return {
    t,
    url,
    httpPort: Number(new URL(url).port),
    syslogPort: listener.port,
    gelfPort: gelfListener.port,
    gelfListener,
    ingestToken,
    async close() {
      await gelfListener.close();
      await listener.close();
      await t.close();
    },
  };
}

export interface FoundEvent {
  ev_id: string;
  ts: number | null;
  host: string | null;
  app: string | null;
  severity: string | null;
  message: string | null;
  [field: string]: unknown;
}

/** Every stored event whose message contains `marker`, through POST /api/query (Search). */
export async function searchEvents(ls: Logscope, marker: string): Promise<FoundEvent[]> {
  const now = Math.floor(Date.now() / 1000);
  const as = (opts: Parameters<TestApp['as']>[1]) => ls.t.as(ls.t.adminToken, opts);
  let res = await as({
    method: 'POST',
    url: '/api/query',
    payload: {
      type: 'Search',
      params: {
        time_range: { ts_from: now - 2 * 86_400, ts_to: now + 2 * 86_400 },
        filter: [{ field: 'message', op: 'contains', value: marker }],
        page_size: 10_000,
        sort: ['ts'],
      },
    },
  });
  const started = Date.now();
  for (;;) {
    if (res.statusCode !== 200 && res.statusCode !== 202) {
      throw new Error(`POST /api/query → ${res.statusCode} ${res.body}`);
    }
    const q = res.json();
    if (q.status === 'SUCCESS') return q.results.events as FoundEvent[];
    if (q.status === 'ERROR' || Date.now() - started > 20_000) {
      throw new Error(`Search did not finish: ${res.body.slice(0, 500)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
    res = await as({ method: 'GET', url: `/api/query/${q.query_id}` });
  }
}

/**
 * Polls the Search until at least `want` events carry the marker (or `timeoutMs`
 * passes), then waits `settleMs` and reads once more, so late duplicates show.
 */
export async function awaitEvents(
  ls: Logscope,
  marker: string,
  want: number,
  timeoutMs = 20_000,
  settleMs = 500,
): Promise<FoundEvent[]> {
  const started = Date.now();
  for (;;) {
    const events = await searchEvents(ls, marker);
    if (events.length >= want || Date.now() - started > timeoutMs) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  await new Promise((r) => setTimeout(r, settleMs));
  return searchEvents(ls, marker);
}

export const LOCAL_HOST = hostname().split('.')[0] ?? '';

export interface ArrivalReport {
  sent: number;
  arrivedOnce: number;
  missing: number;
  duplicated: number;
  unexpected: number;
  /** Events whose host, app, severity, message or ts is not what was sent. */
  wrongFields: number;
  /** A few of each problem, to read in a failing assertion. */
  examples: Record<string, unknown[]>;
}

/**
 * Compares what arrived with what was sent: each line once, with its message
 * (exactly), app (unless `checkApp` is false) and severity, a host (`host` when given, else any) and a
 * ts in [`from`, now + 1 min] (Unix s).
 */
export function compareArrivals(
  sent: Line[],
  events: FoundEvent[],
  opts: { from: number; host?: string; checkApp?: boolean },
): ArrivalReport {
  const byMessage = new Map<string, FoundEvent[]>();
  for (const e of events) {
    const key = (e.message ?? '').trim();
    byMessage.set(key, [...(byMessage.get(key) ?? []), e]);
  }
  const sentMessages = new Set(sent.map((l) => l.message));
  const missing: string[] = [];
  const duplicated: string[] = [];
  const wrong: unknown[] = [];
  const until = Date.now() / 1000 + 60;
  for (const line of sent) {
    const got = byMessage.get(line.message) ?? [];
    if (!got.length) missing.push(line.message);
    if (got.length > 1) duplicated.push(line.message);
    for (const e of got) {
      const problems: string[] = [];
      if (e.message !== line.message) problems.push(`message ${JSON.stringify(e.message)} not trimmed`);
      if (opts.checkApp !== false && e.app !== line.app)
        problems.push(`app ${JSON.stringify(e.app)} ≠ ${line.app}`);
      if (e.severity !== line.severity)
        problems.push(`severity ${JSON.stringify(e.severity)} ≠ ${line.severity}`);
      if (!e.host || (opts.host && e.host.split('.')[0] !== opts.host)) {
        problems.push(`host ${JSON.stringify(e.host)} ≠ ${opts.host ?? '(any)'}`);
      }
      if (typeof e.ts !== 'number' || e.ts < opts.from - 1 || e.ts > until) {
        problems.push(`ts ${JSON.stringify(e.ts)} outside [${opts.from}, now]`);
      }
      if (problems.length) wrong.push({ message: e.message, problems });
    }
  }
  const unexpected = events.filter((e) => !sentMessages.has((e.message ?? '').trim()));
  return {
    sent: sent.length,
    arrivedOnce: sent.length - missing.length - duplicated.length,
    missing: missing.length,
    duplicated: duplicated.length,
    unexpected: unexpected.length,
    wrongFields: wrong.length,
    examples: {
      missing: missing.slice(0, 3),
      duplicated: duplicated.slice(0, 3),
      unexpected: unexpected.slice(0, 3),
      wrongFields: wrong.slice(0, 3),
    },
  };
}

/** What a fully correct delivery looks like (for `toEqual`). */
export function perfect(
  sent: number,
): Omit<ArrivalReport, 'examples'> & { examples: Record<string, unknown[]> } {
  return {
    sent,
    arrivedOnce: sent,
    missing: 0,
    duplicated: 0,
    unexpected: 0,
    wrongFields: 0,
    examples: { missing: [], duplicated: [], unexpected: [], wrongFields: [] },
  };
}
