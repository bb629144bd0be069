/**
 * The built-in pipelines against real logs: Loghub's OpenSSH, Linux and Apache samples
 * (2,000 lines each, test/fixtures/loghub with its README and LICENSE), line by line
 * against Loghub's own structured parse of the same lines. Each line arrives both ways
 * a shipper sends it: as a syslog line (the syslog listener's parser) and as the bare
 * message of a JSON record (a file shipper), which the `syslog-line` pipeline reads.
 */
import { describe, expect, it } from 'vitest';
import type { NormalisedEvent } from '../../../../src/core/event.js';
import { normaliseRecord } from '../../../../src/ingest/normalise.js';
import { parseSyslog } from '../../../../src/ingest/parsers/syslog.js';
import { BUILTIN_PIPELINES, builtinPipelineSet } from '../../../../src/ingest/pipelines/builtin-pipelines.js';
import {
  compilePipeline,
  type PipelineDefinition,
  PipelineSet,
} from '../../../../src/ingest/pipelines/pipeline.js';
import { readLoghubCsv as readCsv, readLoghubLines as readLines } from '../../../helpers/loghub.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The samples' years: Linux 2005, OpenSSH read at the end of 2015 (any year works alike). */
const RECEIVED = Date.UTC(2005, 11, 31);
const set = builtinPipelineSet();

function normalised(record: Record<string, unknown>): NormalisedEvent {
  const r = normaliseRecord(record, { receivedAt: RECEIVED, intake: 'test', newId: () => 'id' });
  if (!r.ok) throw new Error(r.detail);
  return r.event;
}

function run(record: Record<string, unknown>): NormalisedEvent {
  const out = set.run(normalised(record));
  if (out === null) throw new Error('dropped');
  return out;
}

/** Pipelines as the built-ins' set runs them (by their order). */
const setOf = (defs: ReadonlyArray<PipelineDefinition & { order: number }>) =>
  new PipelineSet([...defs].sort((a, b) => a.order - b.order).map((d, i) => compilePipeline(i, d, true)));

const syslogRecord = (line: string) =>
  parseSyslog(line, { now: RECEIVED }) as unknown as Record<string, unknown>;
const syslogEvent = (line: string) => normalised(syslogRecord(line));
const viaSyslog = (line: string) => run(syslogRecord(line));
const viaMessage = (line: string) => run({ message: line });

function isoOf(month: string, day: string, time: string): string {
  const mm = String(MONTHS.indexOf(month) + 1).padStart(2, '0');
  return `2005-${mm}-${day.padStart(2, '0')}T${time}.000Z`;
}

/** The share of rows for which `check` holds, with the first few that failed. */
function score<T>(items: T[], check: (item: T) => boolean) {
  const failed = items.filter((i) => !check(i));
  return { share: 1 - failed.length / items.length, firstFailures: failed.slice(0, 3) };
}

describe('built-in pipelines on Loghub OpenSSH_2k', () => {
  const lines = readLines('OpenSSH_2k.log.txt');
  const rows = readCsv('OpenSSH_2k.log_structured.csv');

  it('has 2,000 lines and rows', () => {
    expect(lines).toHaveLength(2000);
    expect(rows).toHaveLength(2000);
  });

  for (const [way, parse] of [
    ['syslog', viaSyslog],
    ['message', viaMessage],
  ] as const) {
    it(`reads time, host, app, pid and message of ≥ 99 % of lines (${way})`, () => {
      const events = lines.map(parse);
      const { share, firstFailures } = score(
        rows.map((row, i) => [row, events[i]!] as const),
        ([row, e]) =>
          new Date(e.ts).toISOString() === isoOf(row.Date!, row.Day!, row.Time!) &&
          e.host === row.Component &&
          e.app === 'sshd' &&
          e.fields.proc_id === row.Pid &&
          e.message?.trimEnd() === row.Content,
      );
      expect(firstFailures).toEqual([]);
      expect(share).toBeGreaterThanOrEqual(0.99);
    });
  }

  it('gives every line with an IP address in its text a src_ip', () => {
    const withIp = lines.filter((l) => /\b\d{1,3}(?:\.\d{1,3}){3}\b/.test(l));
    expect(withIp.length).toBeGreaterThan(1500);
    const missing = withIp.map(viaSyslog).filter((e) => e.src_ip === null);
    expect(missing.map((e) => e.message)).toEqual([]);
  });

  it('gives the same events as the address search run first, on every line', () => {
    // sshd searches the text for any address only where the line's own pattern gave none
    // (a cost: ~15 µs a line). Run first, as it once was, the search's address was
    // overwritten by each pattern that names one: the events must not tell them apart.
    const search = (d: PipelineDefinition) =>
      d.steps.findIndex((s) => (s as { if?: string }).if === 'NOT _exists_:src_ip');
    const sshd = BUILTIN_PIPELINES.find((d) => d.key === 'sshd') as PipelineDefinition;
    expect(search(sshd)).toBeGreaterThan(0);
    const earlier = setOf(
      BUILTIN_PIPELINES.map((d) => {
        if (d !== sshd) return d;
        const { if: _unless, ...step } = d.steps[search(d)] as Record<string, unknown>;
        return { ...d, steps: [step, ...d.steps.filter((_s, i) => i !== search(d))] };
      }),
    );
    const before = (line: string) => earlier.run(syslogEvent(line));
    const differ = lines.filter((l) => JSON.stringify(viaSyslog(l)) !== JSON.stringify(before(l)));
    expect(differ).toEqual([]);
    // The search still runs where no pattern names an address (PAM's `rhost=` lines here).
    const withoutSearch = setOf(
      BUILTIN_PIPELINES.map((d) =>
        d.key === 'sshd' ? { ...d, steps: d.steps.filter((_s, i) => i !== search(d)) } : d,
      ),
    );
    const fromSearch = lines.filter((l) => viaSyslog(l).src_ip !== withoutSearch.run(syslogEvent(l))?.src_ip);
    expect(fromSearch.length).toBeGreaterThan(0);
  });

  it('counts failed passwords per source IP as grep does', () => {
    const grep = new Map<string, number>();
    for (const line of lines) {
      if (!line.includes('Failed password')) continue;
      const ip = / from (\d+\.\d+\.\d+\.\d+) /.exec(line)?.[1] as string;
      grep.set(ip, (grep.get(ip) ?? 0) + 1);
    }
    expect(grep.get('183.62.140.253')).toBe(286);
    const topn = new Map<string, number>();
    for (const e of lines.map(viaSyslog)) {
      if (!e.message?.includes('Failed password')) continue;
      topn.set(e.src_ip as string, (topn.get(e.src_ip as string) ?? 0) + 1);
    }
    expect(topn).toEqual(grep);
  });

  it('names the action of each kind of line', () => {
    const actions = new Map<string, number>();
    for (const e of lines.map(viaSyslog)) actions.set(e.action ?? '', (actions.get(e.action ?? '') ?? 0) + 1);
    const grepCount = (re: RegExp) => lines.filter((l) => re.test(l)).length;
    expect(actions.get('login_failure')).toBe(
      grepCount(/: (?:message repeated \d+ times: \[ )?Failed \w+ for/),
    );
    expect(actions.get('invalid_user')).toBe(
      grepCount(/: (?:Invalid user|input_userauth_request: invalid user)/),
    );
    expect(actions.get('login_success')).toBe(grepCount(/: Accepted /));
    expect(actions.get('break_in_attempt')).toBe(grepCount(/POSSIBLE BREAK-IN ATTEMPT/));
    expect(actions.get('auth_failure')).toBe(grepCount(/authentication failures?;/));
    // Failed logins name the user tried, invalid ones included.
    const failed = lines.map(viaSyslog).filter((e) => e.action === 'login_failure');
    expect(failed.every((e) => e.user && e.src_port)).toBe(true);
  });

  it('keeps the line as received in raw', () => {
    const e = viaMessage(lines[0]!);
    expect(e.message).not.toBe(lines[0]);
    expect(JSON.parse(e.shape!).v.message).toBe(lines[0]);
  });
});

describe('built-in pipelines on Loghub Linux_2k', () => {
  const lines = readLines('Linux_2k.log.txt');
  const rows = readCsv('Linux_2k.log_structured.csv');

  for (const [way, parse] of [
    ['syslog', viaSyslog],
    ['message', viaMessage],
  ] as const) {
    it(`reads time, host, app, pid and message of ≥ 99 % of lines (${way})`, () => {
      const events = lines.map(parse);
      const { share, firstFailures } = score(
        rows.map((row, i) => [row, events[i]!] as const),
        ([row, e]) => {
          const app = e.fields.app_version ? `${e.app} ${e.fields.app_version}` : e.app;
          return (
            new Date(e.ts).toISOString() === isoOf(row.Month!, row.Date!, row.Time!) &&
            e.host === row.Level &&
            app === row.Component &&
            (e.fields.proc_id ?? '') === row.PID &&
            e.message?.trimEnd() === row.Content
          );
        },
      );
      expect(share, JSON.stringify(firstFailures)).toBeGreaterThanOrEqual(0.99);
    });
  }

  it('pulls user and source address out of PAM lines', () => {
    const events = lines.map(viaSyslog);
    const failures = events.filter(
      (e) => e.app === 'sshd(pam_unix)' && e.message?.startsWith('authentication failure'),
    );
    expect(failures.length).toBeGreaterThan(400);
    expect(failures.every((e) => e.action === 'auth_failure')).toBe(true);
    const withIp = failures.filter((e) => /rhost=\d+\.\d+\.\d+\.\d+(?:\s|$)/.test(e.message!));
    expect(withIp.every((e) => e.src_ip !== null)).toBe(true);
    const withUser = failures.filter((e) => / user=\w/.test(e.message!));
    expect(withUser.every((e) => e.user !== null)).toBe(true);
    const sessions = events.filter((e) => / session opened for user /.test(e.message ?? ''));
    expect(sessions.every((e) => e.action === 'session_opened' && e.user)).toBe(true);
  });
});

describe('built-in pipelines on Loghub Apache_2k (error log)', () => {
  const lines = readLines('Apache_2k.log.txt');
  const rows = readCsv('Apache_2k.log_structured.csv');

  it('reads time, severity and message of ≥ 99 % of lines', () => {
    const events = lines.map(viaMessage);
    const { share, firstFailures } = score(
      rows.map((row, i) => [row, events[i]!] as const),
      ([row, e]) =>
        e.ts === Date.parse(`${row.Time} UTC`) &&
        e.severity === (row.Level === 'notice' ? 'notice' : row.Level) &&
        e.message?.trimEnd() === row.Content,
    );
    expect(firstFailures).toEqual([]);
    expect(share).toBeGreaterThanOrEqual(0.99);
  });

  it('gives client lines their src_ip', () => {
    const events = lines.map(viaMessage).filter((e) => e.message?.startsWith('[client '));
    expect(events.length).toBe(32);
    expect(events.every((e) => e.src_ip === /\[client ([\d.]+)\]/.exec(e.message!)?.[1])).toBe(true);
  });
});
