import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SEVERITIES } from '../../../src/core/event.js';
import { presentEvent } from '../../../src/core/present-event.js';
import { rebuildRecord } from '../../../src/core/record-shape.js';
import {
  MAX_MESSAGE_BYTES,
  parseSeverity,
  parseTimestamp,
  truncateUtf8,
} from '../../../src/ingest/column-values.js';
import {
  MAX_FIELD_NAME_LENGTH,
  MAX_FIELDS,
  type NormaliseContext,
  normaliseRecord,
  TRUNCATED_FIELD,
  TS_UNPARSED_FIELD,
} from '../../../src/ingest/normalise.js';
import { COLUMN_ALIASES } from '../../../src/ingest/record-aliases.js';

const RECEIVED = Date.UTC(2024, 0, 15, 12, 0, 0);

function context(): NormaliseContext & { ids: string[] } {
  const ids: string[] = [];
  return {
    receivedAt: RECEIVED,
    intake: 'token-a',
    newId: () => {
      const id = `id-${ids.length + 1}`;
      ids.push(id);
      return id;
    },
    ids,
  };
}

function accept(record: unknown) {
  const result = normaliseRecord(record, context());
  if (!result.ok) throw new Error(`rejected: ${result.detail}`);
  return result;
}

function reject(record: unknown): string {
  const result = normaliseRecord(record, context());
  if (result.ok) throw new Error('accepted a record that should be rejected');
  return result.detail;
}

describe('normaliseRecord: the record itself', () => {
  it.each([
    ['an array', [{ message: 'x' }], /got an array/],
    ['a string', 'hello', /got a string/],
    ['a number', 42, /got a number/],
    ['a boolean', true, /got a boolean/],
    ['null', null, /got null/],
    ['undefined', undefined, /got nothing/],
    ['a Date', new Date(0), /got a non-JSON object/],
    ['a Map', new Map(), /got a non-JSON object/],
  ])('rejects %s with a clear detail', (_label, record, pattern) => {
    const detail = reject(record);
    expect(detail).toMatch(/^record must be a JSON object/);
    expect(detail).toMatch(pattern);
  });

  it('accepts an empty object: every column null, ts the receive time', () => {
    const ctx = context();
    const result = normaliseRecord({}, ctx);
    expect(result).toEqual({
      ok: true,
      event: {
        ev_id: 'id-1',
        ts: RECEIVED,
        received_at: RECEIVED,
        host: null,
        app: null,
        severity: null,
        facility: null,
        message: null,
        src_ip: null,
        src_port: null,
        dst_ip: null,
        dst_port: null,
        user: null,
        action: null,
        status: null,
        bytes: null,
        source: null,
        intake: 'token-a',
        fields: {},
        shape: '{"nt":1}',
        pattern_id: null,
      },
    });
    expect(ctx.ids).toEqual(['id-1']);
  });

  it('accepts an object without prototype', () => {
    const record = Object.create(null) as Record<string, unknown>;
    record.message = 'hi';
    expect(accept(record).event.message).toBe('hi');
  });

  it('asks for an id once per accepted record and never for a rejected one', () => {
    const ctx = context();
    normaliseRecord({ a: 1 }, ctx);
    normaliseRecord([1], ctx);
    normaliseRecord({ [`k${'x'.repeat(300)}`]: 1 }, ctx);
    normaliseRecord({ b: 2 }, ctx);
    expect(ctx.ids).toEqual(['id-1', 'id-2']);
  });

  it('takes ev_id, received_at and intake from the context; the record keeps its own as orig.*', () => {
    const { event } = accept({ ev_id: 'forged', received_at: 1, stored_at: 2, source: 'elsewhere' });
    expect(event.ev_id).toBe('id-1');
    expect(event.received_at).toBe(RECEIVED);
    expect(event.intake).toBe('token-a');
    expect(event.source).toBe('elsewhere');
    expect(event.fields).toEqual({ 'orig.ev_id': 'forged', 'orig.received_at': '1', 'orig.stored_at': '2' });
  });

  it('has no notes when nothing needed saying', () => {
    expect(accept({ message: 'fine', level: 'info' }).notes).toBeUndefined();
  });
});

describe('normaliseRecord: ts', () => {
  const cases: [string, unknown, number][] = [
    ['epoch seconds', 1_700_000_000, 1_700_000_000_000],
    ['epoch seconds with a fraction', 1_700_000_000.123, 1_700_000_000_123],
    ['epoch seconds, fraction beyond ms', 1_700_000_000.1239, 1_700_000_000_123],
    ['epoch ms', 1_700_000_000_123, 1_700_000_000_123],
    ['epoch µs', 1_700_000_000_123_456, 1_700_000_000_123],
    ['epoch ns (a double, so imprecise below the ms)', Number(1_700_000_000_123_456_789n), 1_700_000_000_123],
    ['epoch seconds as a string', '1700000000', 1_700_000_000_000],
    ['epoch seconds with a fraction as a string', '1700000000.5', 1_700_000_000_500],
    ['epoch ms as a string', '1700000000123', 1_700_000_000_123],
    ['epoch µs as a string', '1700000000123456', 1_700_000_000_123],
    ['epoch ns as a string (exact)', '1700000000123456789', 1_700_000_000_123],
    ['epoch zero', 0, 0],
    ['negative zero', -0, 0],
    ['a tiny number in exponent notation', 5e-7, 0],
    ['largest seconds (11 digits)', 99_999_999_999, 99_999_999_999_000],
    ['smallest ms (12 digits)', 100_000_000_000, 100_000_000_000],
    ['ISO with Z', '2024-01-02T03:04:05.678Z', Date.UTC(2024, 0, 2, 3, 4, 5, 678)],
    ['ISO with +02:00', '2024-01-02T03:04:05+02:00', Date.UTC(2024, 0, 2, 1, 4, 5)],
    ['ISO with -0800', '2024-01-02T03:04:05-0800', Date.UTC(2024, 0, 2, 11, 4, 5)],
    ['ISO with +05:30', '2024-01-02T03:04:05.1+05:30', Date.UTC(2024, 0, 1, 21, 34, 5, 100)],
    ['ISO with hour-only offset', '2024-01-02T03:04:05+01', Date.UTC(2024, 0, 2, 2, 4, 5)],
    ['ISO without zone (UTC)', '2024-01-02T03:04:05', Date.UTC(2024, 0, 2, 3, 4, 5)],
    ['ISO without seconds', '2024-01-02T03:04Z', Date.UTC(2024, 0, 2, 3, 4)],
    ['ISO with a space and a comma', '2024-01-02 03:04:05,250', Date.UTC(2024, 0, 2, 3, 4, 5, 250)],
    ['ISO with µs (truncated)', '2024-01-02T03:04:05.123999Z', Date.UTC(2024, 0, 2, 3, 4, 5, 123)],
    ['ISO lower case', '2024-01-02t03:04:05z', Date.UTC(2024, 0, 2, 3, 4, 5)],
    ['ISO date only', '2024-02-29', Date.UTC(2024, 1, 29)],
    ['ISO year below 100 (not 19xx)', '0050-06-01T00:00:00Z', new Date('0050-06-01T00:00:00Z').getTime()],
    ['ISO leap second', '2016-12-31T23:59:60Z', Date.UTC(2017, 0, 1)],
    ['ISO with surrounding spaces', ' 2024-01-02T03:04:05Z ', Date.UTC(2024, 0, 2, 3, 4, 5)],
  ];
  it.each(cases)('reads %s', (_label, value, expected) => {
    const result = accept({ ts: value });
    expect(Object.is(result.event.ts, expected)).toBe(true);
    expect(result.event.fields).toEqual({});
    expect(result.notes).toBeUndefined();
  });

  const garbage: [string, unknown, string][] = [
    ['words', 'yesterday', 'yesterday'],
    ['an empty string', '', ''],
    ['month 13', '2024-13-01T00:00:00Z', '2024-13-01T00:00:00Z'],
    ['February 30', '2024-02-30', '2024-02-30'],
    ['February 29 of a common year', '2023-02-29', '2023-02-29'],
    ['hour 25', '2024-01-02T25:00:00Z', '2024-01-02T25:00:00Z'],
    ['an offset of 24 hours', '2024-01-02T03:00:00+24:00', '2024-01-02T03:00:00+24:00'],
    ['an RFC 2822 date', 'Tue, 14 Nov 2023 22:13:20 GMT', 'Tue, 14 Nov 2023 22:13:20 GMT'],
    ['a boolean', true, 'true'],
    ['an array', [1, 2], '[1,2]'],
    ['too many digits', '123456789012345678901', '123456789012345678901'],
    ['a number too large', 1e21, '1e+21'],
    ['a negative epoch', -86_400, '-86400'],
    ['exponent notation in a string', '1.7e9', '1.7e9'],
  ];
  it.each(garbage)('uses the receive time for %s and keeps the value visibly', (_label, value, kept) => {
    const result = accept({ time: value, message: 'm' });
    expect(result.event.ts).toBe(RECEIVED);
    expect(result.event.fields).toEqual({ [TS_UNPARSED_FIELD]: kept });
    expect(result.notes).toHaveLength(1);
    expect(result.notes![0]).toMatch(/^ts: .* in "time" is not a timestamp/);
  });

  it('uses the receive time without a note when there is no ts', () => {
    const result = accept({ message: 'm' });
    expect(result.event.ts).toBe(RECEIVED);
    expect(result.notes).toBeUndefined();
  });

  it('prefers @timestamp, then timestamp, then ts, then time; the others stay fields', () => {
    const all = { time: 4, ts: 3, timestamp: 2, '@timestamp': 1 };
    expect(accept(all).event).toMatchObject({ ts: 1000, fields: { time: '4', ts: '3', timestamp: '2' } });
    const { '@timestamp': _a, ...three } = all;
    expect(accept(three).event).toMatchObject({ ts: 2000, fields: { time: '4', ts: '3' } });
    const { timestamp: _b, ...two } = three;
    expect(accept(two).event).toMatchObject({ ts: 3000, fields: { time: '4' } });
    const { ts: _c, ...one } = two;
    expect(accept(one).event).toMatchObject({ ts: 4000, fields: {} });
  });

  it('lets the first alias decide even when its value is unparseable', () => {
    const result = accept({ '@timestamp': 'bad', time: 1_700_000_000 });
    expect(result.event.ts).toBe(RECEIVED);
    expect(result.event.fields).toEqual({ time: '1700000000', [TS_UNPARSED_FIELD]: 'bad' });
  });

  it('skips a ts that is an object (it flattens away) and a null one', () => {
    const result = accept({ ts: null, '@timestamp': { seconds: 5 }, time: 1_700_000_000 });
    expect(result.event.ts).toBe(1_700_000_000_000);
    expect(result.event.fields).toEqual({ '@timestamp.seconds': '5' });
  });

  it('parseTimestamp is null for non-finite numbers and objects', () => {
    expect(parseTimestamp(Number.NaN)).toBeNull();
    expect(parseTimestamp(Number.POSITIVE_INFINITY)).toBeNull();
    expect(parseTimestamp({})).toBeNull();
    expect(parseTimestamp(null)).toBeNull();
  });
});

describe('normaliseRecord: string columns and their aliases', () => {
  it.each([
    ['message', 'message'],
    ['msg', 'message'],
    ['log', 'message'],
    ['host', 'host'],
    ['hostname', 'host'],
    ['host.name', 'host'],
    ['app', 'app'],
    ['service', 'app'],
    ['program', 'app'],
    ['appname', 'app'],
    ['service.name', 'app'],
    ['user', 'user'],
    ['user.name', 'user'],
    ['action', 'action'],
  ] as const)('reads %s into %s and does not keep it in fields', (key, column) => {
    const { event } = accept({ [key]: 'value', other: 'x' });
    expect(event[column]).toBe('value');
    expect(event.fields).toEqual({ other: 'x' });
  });

  it('reads nested aliases (Beats/ECS objects) and keeps their siblings as fields', () => {
    const { event } = accept({
      host: { name: 'web-1', ip: ['10.0.0.1'], os: { family: 'debian' } },
      service: { name: 'api', version: '1.2' },
      user: { name: 'alice', id: 7 },
    });
    expect(event).toMatchObject({ host: 'web-1', app: 'api', user: 'alice' });
    expect(event.fields).toEqual({
      'host.ip': '["10.0.0.1"]',
      'host.os.family': 'debian',
      'service.version': '1.2',
      'user.id': '7',
    });
  });

  it('takes the first alias present and leaves the others in fields', () => {
    const { event } = accept({ log: 'c', msg: 'b', message: 'a', hostname: 'h2', host: 'h1' });
    expect(event.message).toBe('a');
    expect(event.host).toBe('h1');
    expect(event.fields).toEqual({ log: 'c', msg: 'b', hostname: 'h2' });
  });

  it('turns numbers and booleans into strings for string columns', () => {
    const { event } = accept({ message: 42, host: true, user: 1001 });
    expect(event).toMatchObject({ message: '42', host: 'true', user: '1001' });
  });

  it('keeps an array in fields, leaves the column null and says so', () => {
    const result = accept({ message: ['a', 'b'], msg: 'ignored alias' });
    expect(result.event.message).toBeNull();
    expect(result.event.fields).toEqual({ message: '["a","b"]', msg: 'ignored alias' });
    expect(result.notes).toEqual(['message: an array is not a single value; kept in fields.message']);
  });

  it('keeps strings verbatim (spaces, empty, unicode), but for one leading space of the message', () => {
    const { event } = accept({ message: '  padded\n', host: '', app: 'ünïcødé' });
    expect(event).toMatchObject({ message: ' padded\n', host: '', app: 'ünïcødé' });
    expect(rebuildRecord(event)).toEqual({ message: '  padded\n', host: '', app: 'ünïcødé' });
  });

  it('is case-sensitive about keys', () => {
    const { event } = accept({ Message: 'x', Host: 'y' });
    expect(event.message).toBeNull();
    expect(event.host).toBeNull();
    expect(event.fields).toEqual({ Message: 'x', Host: 'y' });
  });
});

describe('normaliseRecord: severity', () => {
  const aliases: [string, string][] = [
    ['emerg', 'emergency'],
    ['emergency', 'emergency'],
    ['panic', 'emergency'],
    ['alert', 'alert'],
    ['crit', 'critical'],
    ['critical', 'critical'],
    ['fatal', 'critical'],
    ['err', 'error'],
    ['error', 'error'],
    ['warn', 'warning'],
    ['warning', 'warning'],
    ['notice', 'notice'],
    ['info', 'info'],
    ['information', 'info'],
    ['informational', 'info'],
    ['debug', 'debug'],
    ['trace', 'debug'],
  ];
  it.each(aliases)('maps %s to %s, in any case', (alias, expected) => {
    expect(accept({ severity: alias }).event.severity).toBe(expected);
    expect(accept({ severity: alias.toUpperCase() }).event.severity).toBe(expected);
    const mixed = alias[0]!.toUpperCase() + alias.slice(1);
    expect(accept({ level: ` ${mixed} ` }).event.severity).toBe(expected);
  });

  it.each(SEVERITIES.map((name, code) => [code, name] as const))(
    'maps syslog code %i to %s',
    (code, name) => {
      expect(accept({ severity: code }).event.severity).toBe(name);
      expect(accept({ severity: String(code) }).event.severity).toBe(name);
    },
  );

  it.each([
    [10, 'debug'],
    [20, 'debug'],
    [30, 'info'],
    [40, 'warning'],
    [50, 'error'],
    [60, 'critical'],
  ])('maps pino level %i to %s', (level, name) => {
    expect(accept({ level }).event.severity).toBe(name);
  });

  it('reads severity, then level, then log.level (nested or dotted)', () => {
    expect(accept({ 'log.level': 'warn', level: 'error', severity: 'info' }).event).toMatchObject({
      severity: 'info',
      fields: { 'log.level': 'warn', level: 'error' },
    });
    expect(accept({ log: { level: 'warn' }, level: 'error' }).event.severity).toBe('error');
    expect(accept({ log: { level: 'warn', logger: 'x' } }).event).toMatchObject({
      severity: 'warning',
      fields: { 'log.logger': 'x' },
    });
  });

  it.each([
    ['verbose', 'verbose'],
    [8, '8'],
    [35, '35'],
    [3.5, '3.5'],
    ['', ''],
    ['constructor', 'constructor'],
    [true, 'true'],
  ])('keeps unknown severity %j under its own key, column null, with a note', (value, kept) => {
    const result = accept({ level: value });
    expect(result.event.severity).toBeNull();
    expect(result.event.fields).toEqual({ level: kept });
    expect(result.notes).toHaveLength(1);
    expect(result.notes![0]).toMatch(/^severity: .* is not a recognised severity; kept in fields\.level$/);
  });

  it('parseSeverity ignores non-scalars', () => {
    expect(parseSeverity(['info'])).toBeNull();
    expect(parseSeverity(null)).toBeNull();
  });
});

describe('normaliseRecord: facility', () => {
  it.each([
    ['auth', 'auth'],
    ['local3', 'local3'],
    ['Custom Thing', 'Custom Thing'],
    [0, 'kern'],
    [4, 'auth'],
    ['23', 'local7'],
    [16, 'local0'],
    [99, '99'],
  ])('reads %j as %s', (value, expected) => {
    expect(accept({ facility: value }).event.facility).toBe(expected);
  });
});

describe('normaliseRecord: integer columns', () => {
  it.each([
    ['src_port', 22, 22],
    ['src_port', '22', 22],
    ['src_port', ' 443 ', 443],
    ['src_port', 0, 0],
    ['dst_port', 65_535, 65_535],
    ['dst_port', '+80', 80],
    ['status', 200, 200],
    ['status', '404', 404],
    ['status', -1, -1],
    ['status', '-0', 0],
    ['bytes', 0, 0],
    ['bytes', '1234567890123', 1_234_567_890_123],
    ['bytes', 2.0, 2],
  ] as const)('reads %s=%j as %d', (column, value, expected) => {
    const result = accept({ [column]: value });
    expect(result.event[column]).toBe(expected);
    expect(Object.is(result.event[column], expected)).toBe(true);
    expect(result.event.fields).toEqual({});
  });

  it.each([
    ['src_port', 'ssh', 'ssh'],
    ['src_port', 65_536, '65536'],
    ['dst_port', -1, '-1'],
    ['status', 1.5, '1.5'],
    ['status', '200 OK', '200 OK'],
    ['status', '', ''],
    ['status', 2 ** 53, '9007199254740992'],
    ['bytes', -5, '-5'],
    ['bytes', '1e3', '1e3'],
    ['bytes', true, 'true'],
    ['bytes', [1], '[1]'],
  ] as const)('keeps %s=%j in fields and leaves the column null', (column, value, kept) => {
    const result = accept({ [column]: value, message: 'still stored' });
    expect(result.event[column]).toBeNull();
    expect(result.event.message).toBe('still stored');
    expect(result.event.fields).toEqual({ [column]: kept });
    expect(result.notes).toHaveLength(1);
    expect(result.notes![0]).toMatch(new RegExp(`^${column}: .*; kept in fields\\.${column}$`));
  });

  it('reads ECS source/destination ports', () => {
    const { event } = accept({
      source: { port: 5000, ip: '10.1.1.1' },
      destination: { port: '53', ip: '::1' },
    });
    expect(event).toMatchObject({
      src_port: 5000,
      src_ip: '10.1.1.1',
      dst_port: 53,
      dst_ip: '::1',
      fields: {},
    });
  });
});

describe('normaliseRecord: IP columns', () => {
  it.each([
    ['src_ip', '192.168.1.10'],
    ['src_ip', '2001:db8::1'],
    ['dst_ip', '::ffff:10.0.0.1'],
    ['dst_ip', '::'],
  ] as const)('reads %s=%s', (column, value) => {
    expect(accept({ [column]: value }).event[column]).toBe(value);
  });

  it.each([
    ['src_ip', 'example.com', 'example.com'],
    ['src_ip', '256.1.1.1', '256.1.1.1'],
    ['src_ip', '10.0.0.1:80', '10.0.0.1:80'],
    ['dst_ip', '[::1]', '[::1]'],
    ['dst_ip', 'fe80::1%eth0', 'fe80::1%eth0'],
    ['dst_ip', 167_772_161, '167772161'],
    ['dst_ip', ' 10.0.0.1', ' 10.0.0.1'],
  ] as const)('keeps invalid %s=%j in fields', (column, value, kept) => {
    const result = accept({ [column]: value });
    expect(result.event[column]).toBeNull();
    expect(result.event.fields).toEqual({ [column]: kept });
    expect(result.notes![0]).toMatch(/is not an IP address/);
  });

  it('reads client_ip as src_ip after src_ip and source.ip', () => {
    expect(accept({ client_ip: '1.1.1.1' }).event.src_ip).toBe('1.1.1.1');
    expect(accept({ client_ip: '1.1.1.1', src_ip: '2.2.2.2' }).event).toMatchObject({
      src_ip: '2.2.2.2',
      fields: { client_ip: '1.1.1.1' },
    });
  });
});

describe('normaliseRecord: flattening', () => {
  it('flattens nested objects to dotted names', () => {
    const { event } = accept({
      http: { method: 'GET', response: { status_code: 200, headers: { a: 'b' } } },
    });
    expect(event.fields).toEqual({
      'http.method': 'GET',
      'http.response.status_code': '200',
      'http.response.headers.a': 'b',
    });
  });

  it('turns arrays into JSON text, numbers and booleans into strings', () => {
    const { event } = accept({
      tags: ['a', 'b'],
      matrix: [[1, 2], { x: null }],
      empty: [],
      n: 1.5,
      big: 1e21,
      neg: -3,
      yes: true,
      no: false,
    });
    expect(event.fields).toEqual({
      tags: '["a","b"]',
      matrix: '[[1,2],{"x":null}]',
      empty: '[]',
      n: '1.5',
      big: '1e+21',
      neg: '-3',
      yes: 'true',
      no: 'false',
    });
  });

  it('drops nulls and empty objects, at any depth', () => {
    const { event } = accept({ a: null, b: { c: null, d: {} }, e: {}, f: 'kept' });
    expect(event.fields).toEqual({ f: 'kept' });
  });

  it('keeps keys that contain dots and empty keys as they are', () => {
    const { event } = accept({ 'a.b': 'x', '': 'empty', c: { '': 'nested empty' } });
    expect(event.fields).toEqual({ 'a.b': 'x', '': 'empty', 'c.': 'nested empty' });
  });

  it('keeps the first value when flattening makes two names equal, with a note', () => {
    const result = accept({ 'a.b': 'first', a: { b: 'second' } });
    expect(result.event.fields).toEqual({ 'a.b': 'first' });
    expect(result.notes).toEqual(['field "a.b" appears twice after flattening; kept the first value']);
  });

  it('stores a "__proto__" key as an ordinary field', () => {
    const { event } = accept(JSON.parse('{"__proto__": "p", "x": {"__proto__": {"y": 1}}}'));
    expect(Object.getPrototypeOf(event.fields)).toBe(Object.prototype);
    expect(Object.keys(event.fields)).toEqual(['__proto__', 'x.__proto__.y']);
    expect(Object.getOwnPropertyDescriptor(event.fields, '__proto__')?.value).toBe('p');
  });

  it('does not duplicate any consumed key in fields', () => {
    const record = {
      '@timestamp': '2024-01-02T03:04:05Z',
      message: 'm',
      host: 'h',
      app: 'a',
      severity: 'info',
      facility: 'daemon',
      src_ip: '10.0.0.1',
      src_port: 1,
      dst_ip: '10.0.0.2',
      dst_port: 2,
      user: 'u',
      action: 'login',
      status: 0,
      bytes: 10,
      extra: 'e',
    };
    const result = accept(record);
    expect(result.event.fields).toEqual({ extra: 'e' });
    expect(result.notes).toBeUndefined();
  });

  it('has an alias list for every column it fills from the record', () => {
    expect(Object.keys(COLUMN_ALIASES).sort()).toEqual(
      [
        'action',
        'app',
        'bytes',
        'dst_ip',
        'dst_port',
        'facility',
        'host',
        'message',
        'severity',
        'source',
        'src_ip',
        'src_port',
        'status',
        'ts',
        'user',
      ].sort(),
    );
  });
});

describe('normaliseRecord: caps', () => {
  it('exports the caps', () => {
    expect(MAX_MESSAGE_BYTES).toBe(65_536);
    expect(MAX_FIELDS).toBe(1000);
    expect(MAX_FIELD_NAME_LENGTH).toBe(256);
  });

  it('keeps a message of exactly the cap', () => {
    const message = 'a'.repeat(MAX_MESSAGE_BYTES);
    const result = accept({ message });
    expect(result.event.message).toBe(message);
    expect(result.event.fields).toEqual({});
  });

  it('truncates a longer message, marks it and says so', () => {
    const result = accept({ message: 'a'.repeat(MAX_MESSAGE_BYTES + 1) });
    expect(result.event.message).toBe('a'.repeat(MAX_MESSAGE_BYTES));
    expect(result.event.fields).toEqual({ [TRUNCATED_FIELD]: 'message' });
    expect(result.notes).toEqual([`message truncated from 65537 to ${MAX_MESSAGE_BYTES} bytes`]);
  });

  it.each([
    ['2-byte', 'é', 2],
    ['3-byte', '€', 3],
    ['4-byte (surrogate pair)', '😀', 4],
  ])('truncates %s characters at a character boundary', (_label, char, size) => {
    const count = Math.ceil(MAX_MESSAGE_BYTES / size) + 1;
    const message = char.repeat(count);
    const truncated = accept({ message }).event.message!;
    const bytes = Buffer.byteLength(truncated);
    expect(bytes).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(bytes).toBeGreaterThan(MAX_MESSAGE_BYTES - size);
    expect(truncated).toBe(char.repeat(Math.floor(MAX_MESSAGE_BYTES / size)));
    expect(Buffer.from(truncated, 'utf8').toString('utf8')).toBe(truncated);
  });

  it('truncateUtf8 leaves short text alone', () => {
    expect(truncateUtf8('héllo', 6)).toBe('héllo');
    expect(truncateUtf8('héllo', 2)).toBe('h');
    expect(truncateUtf8('héllo', 3)).toBe('hé');
  });

  const manyFields = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, i]));

  it(`accepts ${MAX_FIELDS} fields (columns do not count)`, () => {
    const result = accept({ ...manyFields(MAX_FIELDS), message: 'm', host: 'h', level: 'info' });
    expect(Object.keys(result.event.fields)).toHaveLength(MAX_FIELDS);
  });

  it(`rejects ${MAX_FIELDS + 1} fields`, () => {
    expect(reject(manyFields(MAX_FIELDS + 1))).toBe(
      `record has ${MAX_FIELDS + 1} fields (limit ${MAX_FIELDS})`,
    );
  });

  it('counts the fields it adds itself', () => {
    expect(reject({ ...manyFields(MAX_FIELDS), ts: 'garbage' })).toMatch(/fields \(limit 1000\)/);
  });

  it('rejects a huge record without flattening all of it', () => {
    expect(reject({ nested: manyFields(50_000) })).toBe(`record has more than ${MAX_FIELDS} fields`);
  });

  it(`accepts a field name of ${MAX_FIELD_NAME_LENGTH} characters and rejects a longer one`, () => {
    const ok = 'k'.repeat(MAX_FIELD_NAME_LENGTH);
    expect(accept({ [ok]: 1 }).event.fields).toEqual({ [ok]: '1' });
    const detail = reject({ [`${ok}k`]: 1 });
    expect(detail).toMatch(/^field name "k{40}…" is 257 characters long \(limit 256\)$/);
  });

  it('measures the flattened name', () => {
    expect(reject({ a: { ['b'.repeat(MAX_FIELD_NAME_LENGTH - 1)]: 1 } })).toMatch(/257 characters/);
  });

  it('stops deep nesting through the name cap instead of overflowing the stack', () => {
    const deep = JSON.parse(`${'{"":'.repeat(100_000)}1${'}'.repeat(100_000)}`);
    expect(reject(deep)).toMatch(/^field name .* characters long/);
  });

  it('rejects an array nested too deeply to serialise', () => {
    const deep = JSON.parse(`{"a": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`);
    expect(reject(deep)).toBe('field "a" is nested too deeply to store');
  });
});

const toRawRecord = rebuildRecord;

describe('raw: the record as sent (docs/intake/http.md)', () => {
  it('gives back key names, nesting and JSON types as sent', () => {
    const record = {
      '@timestamp': '2024-01-02T03:04:05.678+01:00',
      msg: 'hello',
      hostname: 'web-1',
      program: 'nginx',
      level: 'WARN',
      facility: 4,
      source: { ip: '10.0.0.1', port: '5000', geo: { country: 'NL' } },
      status: '200',
      http: { method: 'GET', version: 1.1, ok: true, empty: {}, gone: null },
      tags: ['a', { b: 1 }],
    };
    const { event } = accept(record);
    expect(event).toMatchObject({ message: 'hello', host: 'web-1', severity: 'warning', facility: 'auth' });
    expect(event).toMatchObject({ src_port: 5000, status: 200, fields: { 'http.version': '1.1' } });
    expect(toRawRecord(event)).toEqual(record);
  });

  it('keeps extra fields typed in the representation', () => {
    const { event } = accept({ 'http.duration_ms': 1979, ok: false, code: '007', list: [1, 2] });
    const shown = presentEvent({ ...event, stored_at: RECEIVED });
    expect(shown).toMatchObject({ 'http.duration_ms': 1979, ok: false, code: '007', list: [1, 2] });
  });

  it("keeps a sender's own source, ev_id, received_at, stored_at and intake", () => {
    const record = {
      message: 'x',
      source: 'billing',
      ev_id: 'theirs',
      received_at: 5,
      stored_at: 'y',
      intake: 'z',
    };
    const { event } = accept(record);
    expect(event.source).toBe('billing');
    expect(event.intake).toBe('token-a');
    expect(event.fields).toEqual({
      'orig.ev_id': 'theirs',
      'orig.received_at': '5',
      'orig.stored_at': 'y',
      'orig.intake': 'z',
    });
    expect(toRawRecord(event)).toEqual(record);
  });

  it('leaves out ts when the record had none, and keeps an unparseable one as sent', () => {
    expect(toRawRecord(accept({}).event)).toEqual({});
    const raw = toRawRecord(accept({ time: 'last tuesday', message: 'm' }).event);
    expect(raw).toEqual({ time: 'last tuesday', message: 'm' });
  });

  it('keeps a _ts_unparsed the sender wrote when the ts was fine', () => {
    const record = { ts: 1_700_000_000, [TS_UNPARSED_FIELD]: 'theirs' };
    expect(toRawRecord(accept(record).event)).toEqual(record);
  });

  it('keeps the truncation marker, without a second copy of the message', () => {
    const { event } = accept({ message: 'x'.repeat(MAX_MESSAGE_BYTES + 10) });
    expect(event.shape ?? '').not.toContain('xxx');
    const raw = toRawRecord(event);
    expect(raw[TRUNCATED_FIELD]).toBe('message');
    expect(raw.message).toHaveLength(MAX_MESSAGE_BYTES);
  });

  it('keeps literal dotted keys flat and nested ones nested', () => {
    const record = { 'host.name': 'h', host2: { 'a.b': { c: 1 } }, a: 'x', 'b.c': 'y' };
    expect(toRawRecord(accept(record).event)).toEqual(record);
  });

  it('rebuilds events stored before shapes under canonical names', () => {
    const base = { ...accept({}).event, ts: 0, shape: null };
    expect(toRawRecord({ ...base, fields: { 'a.b': '1', 'a.b.c': '2' } })).toEqual({
      ts: '1970-01-01T00:00:00.000Z',
      a: { b: '1' },
      'a.b.c': '2',
    });
  });

  it('rebuilds "__proto__" keys as data', () => {
    const raw = toRawRecord(accept(JSON.parse('{"__proto__": {"x": 1}, "a": {"__proto__": "2"}}')).event);
    expect(Object.getPrototypeOf(raw)).toBe(Object.prototype);
    expect(JSON.stringify(raw)).toBe('{"__proto__":{"x":1},"a":{"__proto__":"2"}}');
  });

  it('does not throw for a ts out of Date range', () => {
    const event = { ...accept({}).event, ts: Number.NaN, shape: null };
    expect(toRawRecord(event).ts).toBeNaN();
  });
});

describe('shipper layouts (docs/intake/http.md)', () => {
  it.each([
    [
      'syslog-ng',
      {
        '@timestamp': '2024-05-01T10:00:00+02:00',
        ISODATE: '2024-05-01T10:00:00+02:00',
        HOST: 'web-1',
        PROGRAM: 'sshd',
        PID: '123',
        PRIORITY: 'notice',
        FACILITY: 'auth',
        MESSAGE: 'Accepted password for bob',
      },
      { host: 'web-1', app: 'sshd', severity: 'notice', facility: 'auth', fields: { proc_id: '123' } },
    ],
    [
      'rsyslog',
      {
        timereported: '2024-05-01T10:00:00.123456+02:00',
        fromhost: 'web-1',
        syslogtag: 'sshd[123]:',
        severity: 'info',
        facility: 'authpriv',
        msg: ' Accepted password for bob',
      },
      {
        host: 'web-1',
        app: 'sshd',
        severity: 'info',
        facility: 'authpriv',
        message: 'Accepted password for bob',
        fields: { proc_id: '123' },
      },
    ],
    [
      'rsyslog default omelasticsearch template',
      {
        message: ' Accepted password for bob',
        fromhost: 'web-1',
        facility: 'user',
        priority: 'info',
        timereported: '2024-05-01T10:00:00.123456+00:00',
        timegenerated: '2024-05-01T10:00:00.200000+00:00',
      },
      { host: 'web-1', severity: 'info', facility: 'user', message: 'Accepted password for bob' },
    ],
    [
      'winston-elasticsearch',
      {
        '@timestamp': '2024-05-01T10:00:00.123Z',
        message: 'Accepted password for bob',
        severity: 'warn',
        fields: { timestamp: '2024-05-01T10:00:00.123Z', service: 'billing', host: 'web-1' },
      },
      { host: 'web-1', app: 'billing', severity: 'warning' },
    ],
    [
      'journald',
      {
        __REALTIME_TIMESTAMP: '1714550400000000',
        _HOSTNAME: 'web-1',
        SYSLOG_IDENTIFIER: 'sshd',
        _PID: '123',
        PRIORITY: '6',
        SYSLOG_FACILITY: '4',
        MESSAGE: 'Accepted password for bob',
      },
      { host: 'web-1', app: 'sshd', severity: 'info', facility: 'auth', fields: { proc_id: '123' } },
    ],
    [
      'GELF',
      {
        version: '1.1',
        host: 'web-1',
        short_message: 'Accepted password',
        timestamp: 1714550400.5,
        level: 3,
      },
      { host: 'web-1', severity: 'error', message: 'Accepted password', ts: 1714550400500 },
    ],
    [
      'Docker',
      { log: 'Accepted password\n', stream: 'stderr', time: '2024-05-01T08:00:00.123456789Z' },
      {
        message: 'Accepted password\n',
        ts: Date.UTC(2024, 4, 1, 8, 0, 0, 123),
        fields: { stream: 'stderr' },
      },
    ],
  ])('%s: the main columns are filled and raw is the record', (_name, record, expected) => {
    const { event } = accept(record);
    expect(event).toMatchObject(expected);
    expect(event.message).toMatch(/Accepted password/);
    expect(event.ts).not.toBe(RECEIVED);
    expect(toRawRecord(event)).toEqual(record);
  });
});

describe('normaliseRecord: properties', () => {
  const aliasKey = fc.constantFrom(
    ...Object.values(COLUMN_ALIASES).flat(),
    TS_UNPARSED_FIELD,
    TRUNCATED_FIELD,
    'log',
    '__proto__',
    'ev_id',
    'intake',
    'orig',
    'orig.ev_id',
    'PID',
    '_PID',
    'proc_id',
    'a.b',
  );
  const key = fc.oneof(aliasKey, fc.string({ maxLength: 8 }));
  const record = fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 12 });

  it('never throws on any JSON value, and accepts exactly the objects', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), record), (value) => {
        const result = normaliseRecord(value, context());
        const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
        expect(result.ok).toBe(isObject);
        if (!result.ok) return;
        const { event } = result;
        expect(Number.isFinite(event.ts)).toBe(true);
        expect(event.severity === null || SEVERITIES.includes(event.severity)).toBe(true);
        expect(Buffer.byteLength(event.message ?? '')).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
        for (const [k, v] of Object.entries(event.fields)) {
          expect(typeof v).toBe('string');
          expect(k.length).toBeLessThanOrEqual(MAX_FIELD_NAME_LENGTH);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on any JS value either (BigInt, Date, Map, typed arrays, no prototype)', () => {
    const anything = fc.anything({
      withBigInt: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withTypedArray: true,
      withNullPrototype: true,
      withBoxedValues: true,
      withSparseArray: true,
    });
    fc.assert(
      fc.property(anything, (value) => {
        expect(() => normaliseRecord(value, context())).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });

  it('raw is the record as sent: rebuilding gives back every key, nesting and type', () => {
    fc.assert(
      fc.property(record, (value) => {
        const sent = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
        if (Object.hasOwn(sent, TS_UNPARSED_FIELD) || Object.hasOwn(sent, 'syslogtag')) return;
        const result = normaliseRecord(sent, context());
        if (!result.ok) return;
        // Two keys that flatten to one name keep the first (noted): nothing to rebuild.
        if (result.notes?.some((n) => n.includes('appears twice'))) return;
        expect(toRawRecord(result.event)).toEqual(sent);
      }),
      { numRuns: 500 },
    );
  });
});
