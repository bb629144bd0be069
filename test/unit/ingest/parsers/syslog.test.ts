import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseRecord } from '../../../../src/ingest/normalise.js';
import { parseSyslog } from '../../../../src/ingest/parsers/syslog.js';

const NOW = Date.UTC(2003, 11, 1);
const parse = (line: string, now = NOW) => parseSyslog(line, { now });

describe('parseSyslog: RFC 5424', () => {
  it('parses the RFC example with a BOM and no structured data', () => {
    const line =
      "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - \uFEFF'su root' failed for lonvick on /dev/pts/8";
    expect(parse(line)).toEqual({
      ts: '2003-10-11T22:14:15.003Z',
      host: 'mymachine.example.com',
      app: 'su',
      msg_id: 'ID47',
      severity: 'critical',
      facility: 'auth',
      message: "'su root' failed for lonvick on /dev/pts/8",
    });
  });

  it('parses an offset time and a PROCID', () => {
    const line =
      "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.";
    expect(parse(line)).toEqual({
      ts: '2003-08-24T05:14:15.000003-07:00',
      host: '192.0.2.1',
      app: 'myproc',
      proc_id: '8710',
      severity: 'notice',
      facility: 'local4',
      message: "%% It's time to make the do-nuts.",
    });
  });

  it('parses structured data followed by a message', () => {
    const line =
      '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] \uFEFFAn application event log entry...';
    expect(parse(line)).toEqual({
      ts: '2003-10-11T22:14:15.003Z',
      host: 'mymachine.example.com',
      app: 'evntslog',
      msg_id: 'ID47',
      severity: 'notice',
      facility: 'local4',
      sd: { 'exampleSDID@32473': { iut: '3', eventSource: 'Application', eventID: '1011' } },
      message: 'An application event log entry...',
    });
  });

  it('parses several SD elements and no message', () => {
    const line =
      '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]';
    const record = parse(line);
    expect(record.sd).toEqual({
      'exampleSDID@32473': { iut: '3', eventSource: 'Application', eventID: '1011' },
      'examplePriority@32473': { class: 'high' },
    });
    expect(record.message).toBeUndefined();
  });

  it('unescapes \\" \\\\ and \\] in SD values and keeps other backslashes', () => {
    const line = String.raw`<14>1 - h a - - [x@1 q="say \"hi\"" b="C:\\dir" c="[a\]" d="keep\n" e="" f="sp ace"] m`;
    expect(parse(line).sd).toEqual({
      'x@1': { q: 'say "hi"', b: 'C:\\dir', c: '[a]', d: 'keep\\n', e: '', f: 'sp ace' },
    });
  });

  it('collects a repeated SD param into a list and merges a repeated SD-ID', () => {
    const record = parse('<14>1 - - - - - [x a="1" a="2" a="3"][y][x b="4"]');
    expect(record.sd).toEqual({ x: { a: ['1', '2', '3'], b: '4' }, y: {} });
  });

  it('keeps an SD-ID of "__proto__" as data', () => {
    const record = parse('<14>1 - - - - - [__proto__ a="1"]');
    expect(Object.keys(record.sd!)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(record.sd)).toBe(Object.prototype);
  });

  it('reads NILVALUE everywhere as absent', () => {
    expect(parse('<14>1 - - - - - -')).toEqual({ severity: 'info', facility: 'user' });
    expect(parse('<14>1 - - - - - - ')).toEqual({ severity: 'info', facility: 'user' });
    expect(parse('<14>1 - - - - - - hello')).toEqual({
      severity: 'info',
      facility: 'user',
      message: 'hello',
    });
  });

  it.each([
    ['an unclosed SD element', '<14>1 - h a - - [x a="1" m'],
    ['an unquoted SD value', '<14>1 - h a - - [x a=1] m'],
    ['an empty SD-ID', '<14>1 - h a - - [] m'],
    ['text glued to the SD', '<14>1 - h a - - [x]m'],
    ['an SD that is neither - nor [', '<14>1 - h a - - x m'],
    ['a header that is too short', '<14>1 2003-10-11T22:14:15Z host'],
  ])('marks %s as failed but keeps the text and PRI', (_label, line) => {
    const record = parse(line);
    expect(record.syslog_parse).toBe('failed');
    expect(record.severity).toBe('info');
    expect(record.facility).toBe('user');
    expect(record.message).toBe(line.slice('<14>'.length));
  });

  it('normalises into columns and sd.<id>.<param> fields', () => {
    const record = parse(
      '<165>1 2003-10-11T22:14:15.003+02:00 host1 app1 99 MSG1 [meta@1 region="eu" zone="a"] text',
    );
    const result = normaliseRecord(record, { receivedAt: 0, intake: 'syslog', newId: () => 'id' });
    expect(result.ok && result.event).toMatchObject({
      ts: Date.UTC(2003, 9, 11, 20, 14, 15, 3),
      host: 'host1',
      app: 'app1',
      severity: 'notice',
      facility: 'local4',
      message: 'text',
      fields: { proc_id: '99', msg_id: 'MSG1', 'sd.meta@1.region': 'eu', 'sd.meta@1.zone': 'a' },
    });
  });
});

describe('parseSyslog: RFC 3164 and plain log lines', () => {
  it('parses the RFC example', () => {
    expect(parse("<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8")).toEqual({
      ts: '2003-10-11T22:14:15.000Z',
      host: 'mymachine',
      app: 'su',
      severity: 'critical',
      facility: 'auth',
      message: "'su root' failed for lonvick on /dev/pts/8",
    });
  });

  it('parses a message without a tag (RFC example)', () => {
    expect(parse('<13>Feb  5 17:32:18 10.0.0.99 Use the BFG!')).toEqual({
      ts: '2003-02-05T17:32:18.000Z',
      host: '10.0.0.99',
      severity: 'notice',
      facility: 'user',
      message: 'Use the BFG!',
    });
  });

  it('parses a line without PRI, as in log files', () => {
    expect(parse('Jun 14 15:16:01 combo sshd(pam_unix)[19939]: check pass; user unknown')).toEqual({
      ts: '2003-06-14T15:16:01.000Z',
      host: 'combo',
      app: 'sshd(pam_unix)',
      proc_id: '19939',
      message: 'check pass; user unknown',
    });
  });

  it('accepts a single-digit day padded with one or two spaces', () => {
    expect(parse('Jul  1 09:00:00 h a: m').ts).toBe('2003-07-01T09:00:00.000Z');
    expect(parse('Jul 1 09:00:00 h a: m').ts).toBe('2003-07-01T09:00:00.000Z');
  });

  it('accepts any case of month name, fractions and a year after the day', () => {
    expect(parse('OCT 11 22:14:15.123456 h a: m').ts).toBe('2003-10-11T22:14:15.123Z');
    expect(parse('Oct 11 2001 22:14:15 h a: m').ts).toBe('2001-10-11T22:14:15.000Z');
  });

  it('accepts an RFC 3339 time in place of the BSD one (rsyslog file format)', () => {
    expect(parse('<30>2024-01-02T03:04:05.123456+01:00 web-1 nginx[77]: GET /')).toEqual({
      ts: '2024-01-02T03:04:05.123456+01:00',
      host: 'web-1',
      app: 'nginx',
      proc_id: '77',
      severity: 'info',
      facility: 'daemon',
      message: 'GET /',
    });
  });

  it('sees that the hostname is missing when the first word is a tag', () => {
    expect(parse('<34>Oct 11 22:14:15 su[123]: hi')).toMatchObject({
      app: 'su',
      proc_id: '123',
      message: 'hi',
    });
    expect(parse('<34>Oct 11 22:14:15 su[123]: hi').host).toBeUndefined();
    expect(parse('Oct 11 22:14:15 kernel: boot').host).toBeUndefined();
  });

  it('accepts an IPv6 address as hostname', () => {
    expect(parse('Oct 11 22:14:15 fe80::1 app: m')).toMatchObject({
      host: 'fe80::1',
      app: 'app',
      message: 'm',
    });
  });

  it('reads a version after the tag as app_version', () => {
    expect(parse('Jun 19 04:09:11 combo syslogd 1.4.1: restart.')).toEqual({
      ts: '2003-06-19T04:09:11.000Z',
      host: 'combo',
      app: 'syslogd',
      app_version: '1.4.1',
      message: 'restart.',
    });
  });

  it('reads app[pid] without a colon, and ignores an empty pid', () => {
    expect(parse('Oct 11 22:14:15 h app[12] started')).toMatchObject({
      app: 'app',
      proc_id: '12',
      message: 'started',
    });
    const record = parse('Oct 11 22:14:15 h app[]: m');
    expect(record).toMatchObject({ app: 'app', message: 'm' });
    expect(record.proc_id).toBeUndefined();
  });

  it('keeps a colon that is not a tag terminator in the message', () => {
    expect(parse('Oct 11 22:14:15 h see http://x/y')).toEqual({
      ts: '2003-10-11T22:14:15.000Z',
      host: 'h',
      message: 'see http://x/y',
    });
    expect(parse('Oct 11 22:14:15 h sshd[1]: pam_unix(sshd:auth): fail').message).toBe(
      'pam_unix(sshd:auth): fail',
    );
  });

  it('keeps trailing spaces but strips CR, LF, NUL and a BOM', () => {
    expect(parse('\uFEFFOct 11 22:14:15 h a: m  \r\n\0').message).toBe('m  ');
  });

  it('gives a header with nothing after it no message', () => {
    expect(parse('Oct 11 22:14:15 h')).toEqual({ ts: '2003-10-11T22:14:15.000Z', host: 'h' });
    expect(parse('Oct 11 22:14:15 h a:')).toEqual({ ts: '2003-10-11T22:14:15.000Z', host: 'h', app: 'a' });
  });

  describe('year inference', () => {
    const jan2 = Date.UTC(2024, 0, 2);
    it.each([
      ['Dec 31 23:00:00', jan2, '2023-12-31T23:00:00.000Z'],
      ['Jan  2 12:00:00', jan2, '2024-01-02T12:00:00.000Z'],
      ['Jan  2 23:59:59', jan2, '2024-01-02T23:59:59.000Z'],
      ['Jan  3 00:00:00', jan2, '2024-01-03T00:00:00.000Z'],
      ['Jan  3 00:00:01', jan2, '2023-01-03T00:00:01.000Z'],
      ['Jan  1 00:10:00', Date.UTC(2023, 11, 31, 23, 59), '2024-01-01T00:10:00.000Z'],
      ['Feb 29 12:00:00', Date.UTC(2023, 5, 1), '2020-02-29T12:00:00.000Z'],
      ['Feb 29 12:00:00', Date.UTC(2024, 5, 1), '2024-02-29T12:00:00.000Z'],
    ])('reads %s at %i as %s', (time, now, expected) => {
      expect(parse(`${time} h a: m`, now).ts).toBe(expected);
    });
  });

  it.each([
    ['a month that does not exist', 'Foo 11 22:14:15 h a: m'],
    ['a day that does not exist', 'Feb 30 22:14:15 h a: m'],
    ['an hour that does not exist', 'Oct 11 24:00:00 h a: m'],
    ['no time at all', 'just some text'],
    ['a continuation line', '    at Object.<anonymous> (file.js:1:1)'],
  ])('marks a line with %s as failed and keeps it whole', (_label, line) => {
    expect(parse(line)).toEqual({ message: line, syslog_parse: 'failed' });
  });

  it('marks an empty line as failed', () => {
    expect(parse('')).toEqual({ message: '', syslog_parse: 'failed' });
  });

  it('takes everything after a PRI as the message when no header follows (RFC 3164 §4.3.2)', () => {
    expect(parse('<13>hello world')).toEqual({
      severity: 'notice',
      facility: 'user',
      message: 'hello world',
    });
    expect(parse('<0>')).toEqual({ severity: 'emergency', facility: 'kern' });
    expect(parse('<191>x')).toEqual({ severity: 'debug', facility: 'local7', message: 'x' });
  });

  it('reads tag[pid]: after a PRI with no timestamp and no host (Python SysLogHandler)', () => {
    // SysLogHandler(ident='myapp[123]: ') and append_nul=True (its default).
    expect(parse('<14>myapp[123]: hello\0')).toEqual({
      severity: 'info',
      facility: 'user',
      app: 'myapp',
      proc_id: '123',
      message: 'hello',
    });
    // A '%(name)s: %(message)s' formatter.
    expect(parse('<11>my.logger: disk full: /var')).toEqual({
      severity: 'error',
      facility: 'user',
      app: 'my.logger',
      message: 'disk full: /var',
    });
    expect(parse('<14>myapp:')).toEqual({ severity: 'info', facility: 'user', app: 'myapp' });
    // The default formatter sends the message alone: no tag is made up.
    expect(parse('<14>hello world\0')).toEqual({
      severity: 'info',
      facility: 'user',
      message: 'hello world',
    });
    expect(parse('<14>see http://x: y')).toEqual({
      severity: 'info',
      facility: 'user',
      message: 'see http://x: y',
    });
  });

  it('does not take an out-of-range PRI for one', () => {
    expect(parse('<192>Oct 11 22:14:15 h a: m')).toEqual({
      message: '<192>Oct 11 22:14:15 h a: m',
      syslog_parse: 'failed',
    });
  });

  it('maps every PRI to its facility and severity', () => {
    const facilities = ['kern', 'user', 'mail', 'daemon', 'auth', 'syslog', 'lpr', 'news', 'uucp', 'cron'];
    facilities.forEach((facility, code) => {
      expect(parse(`<${code * 8 + 3}>x`)).toMatchObject({ facility, severity: 'error' });
    });
    expect(parse('<84>x')).toMatchObject({ facility: 'authpriv', severity: 'warning' });
    expect(parse('<134>x')).toMatchObject({ facility: 'local0', severity: 'info' });
  });

  it('marks a truncated frame like normaliseRecord marks a truncated message', () => {
    expect(parseSyslog('Oct 11 22:14:15 h a: m', { now: NOW, truncated: true })._truncated).toBe('message');
    expect(parseSyslog('Oct 11 22:14:15 h a: m', { now: NOW })._truncated).toBeUndefined();
  });

  it('normalises into columns, with proc_id as a field', () => {
    const record = parse('<38>Oct 11 22:14:15 gw sshd[42]: Accepted password for bob');
    const result = normaliseRecord(record, { receivedAt: 0, intake: 'syslog', newId: () => 'id' });
    expect(result).toEqual({
      ok: true,
      event: expect.objectContaining({
        ts: Date.UTC(2003, 9, 11, 22, 14, 15),
        host: 'gw',
        app: 'sshd',
        severity: 'info',
        facility: 'auth',
        message: 'Accepted password for bob',
        fields: { proc_id: '42' },
      }),
    });
  });
});

describe('parseSyslog: any input', () => {
  const syslogish = fc.oneof(
    fc.string(),
    fc
      .tuple(
        fc.constantFrom('<13>', '<165>1 ', '<0>', ''),
        fc.constantFrom('Oct 11 22:14:15 ', '2024-01-02T03:04:05Z ', '- ', ''),
        fc.string({ maxLength: 30 }),
      )
      .map((parts) => parts.join('')),
  );

  it('never throws and always keeps some text or a header', () => {
    fc.assert(
      fc.property(syslogish, (line) => {
        const record = parse(line);
        expect(typeof record).toBe('object');
        const result = normaliseRecord(record, { receivedAt: 0, intake: null, newId: () => 'id' });
        expect(result.ok).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
