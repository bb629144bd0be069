/**
 * The syslog parser against real log lines: the first 200 lines of Loghub's Linux and
 * OpenSSH samples (test/fixtures/loghub, see its README and LICENSE), checked line by line
 * against Loghub's own structured parse of the same lines.
 */
import { describe, expect, it } from 'vitest';
import { normaliseRecord } from '../../../../src/ingest/normalise.js';
import { parseSyslog, SyslogFrameSplitter } from '../../../../src/ingest/parsers/syslog.js';
import { readLoghubFixture as readFixture, readLoghubCsv } from '../../../helpers/loghub.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const readCsv = readLoghubCsv;

function readLines(name: string): string[] {
  return readFixture(name).split('\n').slice(0, -1);
}

function isoOf(month: string, day: string, time: string, year: number): string {
  const mm = String(MONTHS.indexOf(month) + 1).padStart(2, '0');
  return `${year}-${mm}-${day.padStart(2, '0')}T${time}.000Z`;
}

const ctx = { receivedAt: 0, intake: 'loghub', newId: () => 'id' };

describe('syslog parser on Loghub Linux_2k (first 200 lines)', () => {
  const lines = readLines('linux-2k-head-200.log.txt');
  const rows = readCsv('linux-2k-head-200.structured.csv');
  // The sample is from 2005; a reference date at its end puts every line in that year.
  const now = Date.UTC(2005, 11, 31);

  it('has 200 lines and 200 structured rows', () => {
    expect(lines).toHaveLength(200);
    expect(rows).toHaveLength(200);
  });

  it.each(lines.map((line, i) => [i + 1, line, rows[i]!] as const))('line %i', (_n, line, row) => {
    const record = parseSyslog(line, { now });
    expect(record.syslog_parse).toBeUndefined();
    // Loghub's columns here: Level holds the hostname, Component the tag.
    expect(record.host).toBe(row.Level);
    const component = record.app_version ? `${record.app} ${record.app_version}` : record.app;
    expect(component).toBe(row.Component);
    expect(record.proc_id ?? '').toBe(row.PID);
    expect(record.ts).toBe(isoOf(row.Month!, row.Date!, row.Time!, 2005));
    // Loghub trims trailing spaces; the parser keeps the message exactly as sent.
    expect(record.message!.trimEnd()).toBe(row.Content);
    expect(line.replace(/\r$/, '').endsWith(record.message!)).toBe(true);
    expect(record.severity).toBeUndefined();

    const result = normaliseRecord(record, ctx);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.event).toMatchObject({
      host: row.Level,
      app: record.app,
      message: record.message,
      ts: Date.parse(record.ts!),
      severity: null,
    });
    expect(result.notes).toBeUndefined();
  });

  it('reads the sysklogd restart line as app syslogd with a version', () => {
    const line = lines.find((l) => l.includes('syslogd 1.4.1'))!;
    expect(parseSyslog(line, { now })).toMatchObject({
      app: 'syslogd',
      app_version: '1.4.1',
      message: 'restart.',
    });
  });
});

describe('syslog parser on Loghub OpenSSH_2k (first 200 lines)', () => {
  const lines = readLines('openssh-2k-head-200.log.txt');
  const rows = readCsv('openssh-2k-head-200.structured.csv');
  const now = Date.UTC(2017, 0, 1);

  it('has 200 lines and 200 structured rows', () => {
    expect(lines).toHaveLength(200);
    expect(rows).toHaveLength(200);
  });

  it.each(lines.map((line, i) => [i + 1, line, rows[i]!] as const))('line %i', (_n, line, row) => {
    const record = parseSyslog(line, { now });
    expect(record.syslog_parse).toBeUndefined();
    // Loghub's columns here: Date holds the month, Day the day, Component the hostname.
    expect(record.host).toBe(row.Component);
    expect(record.app).toBe('sshd');
    expect(record.proc_id).toBe(row.Pid);
    expect(record.ts).toBe(isoOf(row.Date!, row.Day!, row.Time!, 2016));
    expect(record.message!.trimEnd()).toBe(row.Content);
    expect(line.replace(/\r$/, '').endsWith(record.message!)).toBe(true);

    const result = normaliseRecord(record, ctx);
    expect(result.ok && result.event).toMatchObject({ host: 'LabSZ', app: 'sshd', message: record.message });
    expect(result.ok && result.event.fields).toEqual({ proc_id: row.Pid });
  });

  it('frames the file over TCP (newline framing, CRLF) into the same 200 lines in any chunking', () => {
    const bytes = Buffer.from(readFixture('openssh-2k-head-200.log.txt'), 'utf8');
    for (const size of [1, 7, 1000, bytes.length]) {
      const splitter = new SyslogFrameSplitter();
      const frames = [];
      for (let i = 0; i < bytes.length; i += size) frames.push(...splitter.push(bytes.subarray(i, i + size)));
      frames.push(...splitter.end());
      expect(frames.map((f) => f.text)).toEqual(lines.map((l) => l.replace(/\r$/, '')));
    }
  });
});
