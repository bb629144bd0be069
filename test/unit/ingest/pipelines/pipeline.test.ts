/**
 * The pipeline engine: every step kind, `when` and `if`, failure and drop, what `raw`
 * gives back afterwards, definitions refused with the position of the problem, the time
 * formats, and the built-ins' patterns held to RE2.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NormalisedEvent } from '../../../../src/core/event.js';
import { rebuildRecord } from '../../../../src/core/record-shape.js';
import { normaliseRecord } from '../../../../src/ingest/normalise.js';
import { BUILTIN_PIPELINES, builtinPipelineSet } from '../../../../src/ingest/pipelines/builtin-pipelines.js';
import {
  compileTrustedPattern,
  compileUserPattern,
  expandGrok,
} from '../../../../src/ingest/pipelines/grok.js';
import {
  compilePipeline,
  PipelineDefinitionError,
  PipelineSet,
  type PipelineTrace,
} from '../../../../src/ingest/pipelines/pipeline.js';
import { compileTimeFormat } from '../../../../src/ingest/pipelines/time-format.js';

const RECEIVED = Date.UTC(2024, 5, 1, 12);

function event(record: Record<string, unknown>): NormalisedEvent {
  const r = normaliseRecord(record, { receivedAt: RECEIVED, intake: 'test', newId: () => 'id' });
  if (!r.ok) throw new Error(r.detail);
  return r.event;
}

function apply(steps: unknown[], record: Record<string, unknown>, when = '') {
  const set = new PipelineSet([compilePipeline(1, { name: 'p', when, steps })]);
  const trace: PipelineTrace = { applied: [], failures: [] };
  const out = set.run(event(record), trace);
  return { out, trace, stats: set.pipelines[0]!.stats };
}

function refused(steps: unknown[], when = ''): Record<string, string[]> {
  try {
    compilePipeline(1, { name: 'p', when, steps });
  } catch (err) {
    if (err instanceof PipelineDefinitionError) return err.errors;
    throw err;
  }
  throw new Error('accepted');
}

describe('step kinds', () => {
  it('grok: the first matching pattern fills fields and typed columns', () => {
    const { out } = apply(
      [
        {
          grok: {
            patterns: [
              '^nope %{WORD:x}',
              '^%{WORD:http.method} %{URIPATH:url.path} %{INT:status} from %{IP:src_ip}',
            ],
          },
        },
      ],
      { message: 'GET /a/b 404 from 10.0.0.1' },
    );
    expect(out).toMatchObject({
      status: 404,
      src_ip: '10.0.0.1',
      fields: { 'http.method': 'GET', 'url.path': '/a/b' },
    });
  });

  it('grok: a value a column cannot take stays a field of that name', () => {
    const { out } = apply([{ grok: { patterns: ['port %{WORD:src_port}'] } }], { message: 'port abc' });
    expect(out?.src_port).toBeNull();
    expect(out?.fields.src_port).toBe('abc');
  });

  it('regex: RE2 named groups become fields', () => {
    const { out } = apply([{ regex: { pattern: 'user=(?P<user>\\w+) id=(?P<req_id>\\d+)' } }], {
      message: 'x user=ann id=42',
    });
    expect(out).toMatchObject({ user: 'ann', fields: { req_id: '42' } });
  });

  it('kv: pairs with quotes removed, empty values skipped, optional prefix', () => {
    const { out } = apply([{ kv: { separator: ' ', assign: '=', prefix: 'kv.' } }], {
      message: 'a=1 b="two" c= d',
    });
    expect(out?.fields).toMatchObject({ 'kv.a': '1', 'kv.b': 'two' });
    expect(out?.fields).not.toHaveProperty('kv.c');
  });

  it('json: an object in a field becomes fields (columns by their names), nested ones dotted', () => {
    const { out } = apply([{ json: { field: 'message' } }], {
      message: '{"user":"bob","req":{"id":7,"ok":true},"tags":["a"]}',
    });
    expect(out).toMatchObject({ user: 'bob', fields: { 'req.id': '7', 'req.ok': 'true', tags: '["a"]' } });
    expect(apply([{ json: { field: 'message' } }], { message: '{not json' }).out?.fields).toEqual({});
  });

  it('rename, set with a template, remove', () => {
    const { out } = apply(
      [
        { rename: { from: 'client', to: 'src_ip' } },
        { set: { field: 'label', value: '{{app}}:{{src_ip}}' } },
        { remove: { field: 'secret' } },
      ],
      { app: 'web', client: '1.2.3.4', secret: 'hunter2', message: 'm' },
    );
    expect(out).toMatchObject({ src_ip: '1.2.3.4', fields: { label: 'web:1.2.3.4' } });
    expect(out?.fields).not.toHaveProperty('secret');
    expect(out?.fields).not.toHaveProperty('client');
    // Edits are edits: raw no longer holds the secret.
    expect(rebuildRecord(out!)).not.toHaveProperty('secret');
  });

  it('timestamp: the first format that reads the value sets ts', () => {
    const { out } = apply([{ timestamp: { field: 't', formats: ['UNIX', 'dd/MMM/yyyy:HH:mm:ss Z'] } }], {
      t: '10/Oct/2000:13:55:36 -0700',
      message: 'm',
    });
    expect(out?.ts).toBe(Date.parse('2000-10-10T20:55:36Z'));
  });

  it('drop: the event is not stored', () => {
    const set = new PipelineSet([
      compilePipeline(1, { name: 'p', when: 'app:noise', steps: [{ drop: {} }] }),
    ]);
    expect(
      set.process([event({ app: 'noise', message: 'x' }), event({ app: 'keep', message: 'y' })]),
    ).toHaveLength(1);
    expect(set.pipelines[0]!.stats).toMatchObject({ matched: 1, dropped: 1 });
  });
});

describe('when, if, failures and raw', () => {
  it('applies a pipeline only where its when matches, and a step only where its if does', () => {
    const steps = [
      { set: { field: 'action', value: 'deny' }, if: 'message:blocked' },
      { set: { field: 'action', value: 'allow' }, if: 'NOT message:blocked' },
    ];
    expect(apply(steps, { app: 'fw', message: 'blocked' }, 'app:fw').out?.action).toBe('deny');
    expect(apply(steps, { app: 'fw', message: 'passed' }, 'app:fw').out?.action).toBe('allow');
    const other = apply(steps, { app: 'web', message: 'blocked' }, 'app:fw');
    expect(other.out?.action).toBeNull();
    expect(other.stats.matched).toBe(0);
  });

  it('a failing step undoes its pipeline for that event and is counted', () => {
    const { out, trace, stats } = apply(
      [{ set: { field: 'user', value: 'changed' } }, { set: { field: 'ts', value: 'not a time' } }],
      { user: 'orig', message: 'm' },
    );
    expect(out?.user).toBe('orig');
    expect(stats.failed).toBe(1);
    expect(trace.failures[0]).toMatchObject({ pipeline: 'p', error: expect.stringContaining('not a time') });
  });

  it('an untouched event stays the same object', () => {
    const e = event({ message: 'nothing here' });
    const set = new PipelineSet([
      compilePipeline(1, { name: 'p', when: '', steps: [{ grok: { patterns: ['^zzz %{WORD:x}'] } }] }),
    ]);
    expect(set.run(e)).toBe(e);
  });

  it('raw keeps what was sent when an extraction replaces it, and leaves out what was added', () => {
    const line = 'May 30 10:00:00 host1 sshd[7]: Failed password for root from 1.2.3.4 port 22 ssh2';
    const set = builtinPipelineSet();
    const out = set.run(event({ message: line, host: 'shipper' }))!;
    expect(out).toMatchObject({ host: 'host1', app: 'sshd', action: 'login_failure', user: 'root' });
    expect(new Date(out.ts).toISOString()).toBe('2024-05-30T10:00:00.000Z');
    expect(rebuildRecord(out)).toEqual({ message: line, host: 'shipper' });
  });
});

describe('definitions refused with where the problem is', () => {
  it('names an unknown grok pattern and its position', () => {
    const errors = refused([{ grok: { patterns: ['ok %{WORD:a}', 'x %{NOPE:b}'] } }]);
    expect(errors['steps[0].grok.patterns[1]']?.[0]).toMatch(
      /unknown grok pattern %\{NOPE\} \(at position 2\)/,
    );
  });

  it('refuses patterns RE2 cannot run, bad step shapes, options, formats and queries', () => {
    expect(Object.keys(refused([{ regex: { pattern: '(?P<a>x)(?=y)' } }]))).toEqual([
      'steps[0].regex.pattern',
    ]);
    expect(refused([{ regex: { pattern: '(unclosed' } }])['steps[0].regex.pattern']?.[0]).toMatch(/position/);
    expect(Object.keys(refused([{ grok: {}, set: {} }]))).toEqual(['steps[0]']);
    expect(Object.keys(refused([{ kv: { sep: ',' } }]))).toContain('steps[0].kv.sep');
    expect(Object.keys(refused([{ timestamp: { field: 't', formats: ['yyyy-MM-dd Q'] } }]))).toEqual([
      'steps[0].timestamp.formats[0]',
    ]);
    expect(Object.keys(refused([{ set: { field: 'ev_id', value: 'x' } }]))).toEqual(['steps[0].set.field']);
    expect(Object.keys(refused([], 'app:('))).toEqual(['when']);
    expect(Object.keys(refused([{ drop: {}, if: 'a AND (' }]))).toEqual(['steps[0].if']);
    expect(Object.keys(refused([{ regex: { pattern: 'no groups' } }]))).toEqual(['steps[0].regex.pattern']);
  });
});

describe('time formats', () => {
  const parse = (format: string, text: string, received = RECEIVED) =>
    compileTimeFormat(format)(text, received);
  it('reads Joda-style patterns', () => {
    expect(parse('EEE MMM dd HH:mm:ss yyyy', 'Sun Dec 04 04:47:44 2005')).toBe(
      Date.UTC(2005, 11, 4, 4, 47, 44),
    );
    expect(parse('EEE MMM dd HH:mm:ss.SSSSSS yyyy', 'Wed Oct 11 14:32:52.123456 2000')).toBe(
      Date.UTC(2000, 9, 11, 14, 32, 52, 123),
    );
    expect(parse('yyyy/MM/dd HH:mm:ss', '2024/01/02 03:04:05')).toBe(Date.UTC(2024, 0, 2, 3, 4, 5));
    expect(parse('dd/MMM/yyyy:hh:mm:ss a ZZ', '02/jan/2024:01:00:00 PM +01:00')).toBe(
      Date.UTC(2024, 0, 2, 12),
    );
    expect(parse('yyyy-MM-dd', '2024-02-30')).toBeNull();
  });

  it('gives a year-less time the latest year at most a day after it was received', () => {
    expect(parse('MMM d HH:mm:ss', 'Dec  4 10:00:00', Date.UTC(2024, 0, 10))).toBe(Date.UTC(2023, 11, 4, 10));
    expect(parse('MMM d HH:mm:ss', 'Jan 10 10:00:00', Date.UTC(2024, 0, 10))).toBe(Date.UTC(2024, 0, 10, 10));
  });

  it('reads the named formats', () => {
    expect(parse('UNIX', '1700000000.5')).toBe(1_700_000_000_500);
    expect(parse('UNIX_MS', '1700000000500')).toBe(1_700_000_000_500);
    expect(parse('ISO8601', '2024-01-02T03:04:05+02:00')).toBe(Date.UTC(2024, 0, 2, 1, 4, 5));
  });
});

describe('the built-in pipelines', () => {
  const samples = [
    'Dec 10 06:55:46 LabSZ sshd[24200]: Invalid user webmaster from 173.234.31.186',
    'Failed password for invalid user admin from 10.1.2.3 port 5555 ssh2',
    'Accepted publickey for deploy from 2001:db8::1 port 22 ssh2',
    'pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=1.2.3.4  user=root',
    'alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/bin/ls',
    '[UFW BLOCK] IN=eth0 OUT= MAC=aa:bb SRC=1.2.3.4 DST=5.6.7.8 LEN=40 PROTO=TCP SPT=1 DPT=22',
    '10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /x?y=1 HTTP/1.1" 200 512 "-" "curl/8"',
    '[Wed Oct 11 14:32:52.123456 2000] [core:error] [pid 35708:tid 4328] [client 72.15.99.187:1234] File does not exist',
    '2024/01/02 03:04:05 [error] 12#0: *3 open() failed, client: 9.8.7.6, server: x',
  ];

  it('every pattern compiles under RE2 too and extracts the same', () => {
    for (const def of BUILTIN_PIPELINES) {
      for (const step of def.steps as Array<Record<string, { patterns?: string[] }>>) {
        for (const pattern of step.grok?.patterns ?? []) {
          const js = compileTrustedPattern(pattern);
          const re2 = compileUserPattern(pattern, true);
          for (const text of samples)
            expect(re2(text), `${def.key}: ${pattern} on ${text}`).toEqual(js(text));
        }
      }
    }
  });

  it('give on a text without a colon what the whole pattern gives (an IPv6 address needs a colon)', () => {
    const grokPatterns = BUILTIN_PIPELINES.flatMap((def) =>
      (def.steps as Array<Record<string, { patterns?: string[] }>>).flatMap((s) => s.grok?.patterns ?? []),
    );
    const withIp = grokPatterns.filter((p) => /%\{IP(?:V6|ORHOST)?[:}]/.test(p));
    expect(withIp.length).toBeGreaterThan(10);
    // The whole expansion, compiled as a plain regex (groups g0, g1, ... named back to fields).
    const whole = withIp.map((pattern) => {
      const { source, captures } = expandGrok(pattern);
      const field = new Map(captures.map((c) => [c.group, c.field]));
      const regex = compileUserPattern(source, false);
      return {
        pattern,
        grok: compileUserPattern(pattern, true),
        whole: (text: string) => regex(text)?.map(([g, v]) => [field.get(g), v]) ?? null,
      };
    });
    const token = fc.oneof(
      fc.constantFrom(
        ...'Accepted Failed Invalid Disconnected Received Connection closed by disconnect password publickey none for invalid user from port ssh2 root admin rhost= user= [preauth] - " GET /x HTTP/1.1 200 512 [client] error'.split(
          ' ',
        ),
      ),
      fc.ipV4(),
      fc.integer({ min: 0, max: 70_000 }).map(String),
      fc.stringMatching(/^[0-9a-fA-F.]{1,12}$/),
    );
    const colonless = [
      ...samples.map((s) => s.replaceAll(':', ' ')),
      'Accepted publickey for deploy from 2001 db8  1 port 22 ssh2',
    ];
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(token, { maxLength: 14 }).map((t) => t.join(' ')),
          fc.constantFrom(...colonless),
        ),
        (text) => {
          for (const p of whole) expect(p.grok(text), `${p.pattern} on ${text}`).toEqual(p.whole(text));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('fill the columns the dashboards query', () => {
    const set = builtinPipelineSet();
    const run = (r: Record<string, unknown>) => set.run(event(r))!;
    expect(run({ app: 'sshd', message: samples[1] })).toMatchObject({
      action: 'login_failure',
      user: 'admin',
      src_ip: '10.1.2.3',
      src_port: 5555,
    });
    expect(run({ app: 'sshd', message: samples[2] })).toMatchObject({
      action: 'login_success',
      src_ip: '2001:db8::1',
    });
    // A line no pattern reads an address from: the first one in its text, unless the
    // event came with one; a pattern's address wins over the sender's.
    const mapsTo = 'Address 203.0.113.7 maps to example.com, but this does not map back to the address';
    expect(run({ app: 'sshd', message: mapsTo }).src_ip).toBe('203.0.113.7');
    expect(run({ app: 'sshd', message: mapsTo, src_ip: '198.51.100.1' }).src_ip).toBe('198.51.100.1');
    expect(run({ app: 'sshd', message: samples[1], src_ip: '198.51.100.1' }).src_ip).toBe('10.1.2.3');
    expect(run({ app: 'sudo', message: samples[4] })).toMatchObject({
      action: 'sudo',
      user: 'alice',
      fields: { 'sudo.command': '/bin/ls' },
    });
    expect(run({ app: 'kernel', message: samples[5] })).toMatchObject({
      action: 'deny',
      dst_port: 22,
      dst_ip: '5.6.7.8',
    });
    expect(run({ message: samples[6] })).toMatchObject({
      status: 200,
      bytes: 512,
      fields: { 'url.path': '/x', 'http.method': 'GET', user_agent: 'curl/8' },
    });
    expect(run({ app: 'httpd', message: samples[7] })).toMatchObject({
      severity: 'error',
      src_ip: '72.15.99.187',
      message: expect.stringMatching(/^\[client/),
    });
    expect(run({ app: 'nginx', message: samples[8] })).toMatchObject({
      severity: 'error',
      src_ip: '9.8.7.6',
      fields: { proc_id: '12' },
    });
  });

  it('expand every library name without error', () => {
    for (const name of [
      'COMBINEDAPACHELOG',
      'SYSLOGBASE',
      'URI',
      'EMAILADDRESS',
      'MAC',
      'UUID',
      'DATESTAMP',
    ]) {
      expect(() => compileUserPattern(`%{${name}:x}`, true)).not.toThrow();
    }
    expect(expandGrok('%{SYSLOGPROG}').captures.map((c) => c.field)).toEqual(['program', 'pid']);
  });
});
