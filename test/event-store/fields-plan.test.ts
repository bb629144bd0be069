import { ulid } from 'ulidx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../src/cli/demo-generator.js';
import { COLUMN_KINDS, type EventColumn, type NormalisedEvent } from '../../src/core/event.js';
import { presentEvent } from '../../src/core/present-event.js';
import type { EventStore } from '../../src/event-store/event-store.js';
import type { FieldsPlan, FieldsResult, FieldType } from '../../src/event-store/query-plan.js';
import { type ReadScope, SYSTEM_SCOPE } from '../../src/event-store/read-scope.js';
import { cond, type FilterNode, not, TRUE } from '../../src/filter/ast.js';
import { normaliseRecord } from '../../src/ingest/normalise.js';
import { event } from './filter-store.js';
import { STORES, type StoreUnderTest } from './stores.js';

/**
 * The Fields plan (the field list) on every store, held to what the list computed in
 * JavaScript from the newest events read whole (`reference`, the former implementation):
 * the same fields, types, counts and top values, in the same order, for records as
 * ingest makes them and for events made by hand with every oddity a stored text can have.
 */

const T0 = Date.UTC(2024, 4, 1);
const HOUR = 3_600_000;
const ALL = { fromMs: T0 - HOUR, toMs: T0 + 48 * HOUR };

const IPV4 = /^(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

/** The field list as it was computed before the store did it: from the events read whole. */
async function reference(store: EventStore, plan: FieldsPlan): Promise<FieldsResult> {
  const result = await store.execute({
    kind: 'search',
    filter: plan.filter,
    range: plan.range,
    scope: plan.scope,
    sort: [{ field: 'ts', desc: true }],
    limit: plan.sample,
    offset: 0,
    count: true,
  });
  const typeOf = (name: string, value: unknown): FieldType => {
    const column = COLUMN_KINDS[name as EventColumn];
    if (column === 'time') return 'time';
    if (column === 'ip') return 'ip';
    if (column === 'integer' || typeof value === 'number') return 'number';
    if (
      typeof value === 'string' &&
      (IPV4.test(value) || (value.includes(':') && /^[0-9a-f:.]+$/i.test(value)))
    )
      return 'ip';
    return 'string';
  };
  const shown = (value: unknown): string | number | boolean =>
    typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? value
      : JSON.stringify(value);
  const skipped = new Set(['ev_id', 'received_at', 'stored_at']);
  const tallies = new Map<string, { type: FieldType; count: number; values: Map<unknown, number> }>();
  for (const stored of result.events) {
    const e = presentEvent(stored);
    for (const name in e) {
      const value = e[name];
      if (value === null || value === undefined || skipped.has(name)) continue;
      let t = tallies.get(name);
      if (!t) {
        t = { type: typeOf(name, value), count: 0, values: new Map() };
        tallies.set(name, t);
      } else if (t.type !== 'string' && t.type !== 'time' && typeOf(name, value) !== t.type) {
        t.type = 'string';
      }
      t.count++;
      if (t.type === 'time') continue;
      const v = shown(value);
      t.values.set(v, (t.values.get(v) ?? 0) + 1);
    }
  }
  const fields = [...tallies.entries()]
    .map(([name, t]) => ({
      name,
      type: t.type,
      count: t.count,
      top: [...t.values.entries()]
        .sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0])))
        .slice(0, plan.top)
        .map(([value, count]) => ({ value: value as string | number | boolean, count })),
    }))
    .sort((a, b) => b.count - a.count || a.name.localeCompare(b.name));
  return { total: result.total, events: result.events.length, fields };
}

const random = prng(42);
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
let clock = 0;
const nextTs = () => {
  clock += 1 + Math.floor(random() * 40_000);
  return T0 + clock;
};

/** Records as shippers send them, through ingest: shapes with JSON types, renamed keys, arrays. */
function ingested(count: number): NormalisedEvent[] {
  const out: NormalisedEvent[] = [];
  for (let i = 0; i < count; i++) {
    const ts = nextTs();
    const kind = i % 4;
    const record: Record<string, unknown> =
      kind === 0
        ? {
            '@timestamp': new Date(ts).toISOString(),
            host: `web-${i % 3}`,
            status: pick([200, 200, 404, 500]),
            http: { method: pick(['GET', 'POST']), duration_ms: Math.floor(random() * 50), ok: i % 5 !== 0 },
            url: { path: `/p/${Math.floor(random() * 400)}` },
            client: pick(['10.0.0.1', '::1', 'fe80::2', '300.1.1.1', 'cafe']),
            tags: i % 7 === 0 ? ['a', 'b'] : undefined,
            code: i % 2 ? 12 : '12',
          }
        : kind === 1
          ? {
              timestamp: new Date(ts).toUTCString(),
              hostname: 'bastion',
              severity: pick(['WARN', 'info', 'error']),
              message: `login ${Math.floor(random() * 3000)}`,
              latency: pick([1.5, 2, 1e21, 0.000001, -3]),
              'weird/key~name': pick(['x', 'y']),
              'quote"d': pick([1, 'one']),
            }
          : kind === 2
            ? { ts: ts / 1000, app: 'fw', src_ip: `10.1.0.${i % 50}`, dst_port: 443, action: 'allow', n: i }
            : {
                time: ts,
                msg: `error ${i % 11}`,
                user: pick(['alice', 'bob', null]),
                flag: pick([true, false]),
              };
    const r = normaliseRecord(JSON.parse(JSON.stringify(record)), {
      receivedAt: ts + 5,
      intake: 'http:test',
      newId: () => ulid(ts + 5),
    });
    if (!r.ok) throw new Error(r.detail);
    out.push(r.event);
  }
  return out;
}

/** Events made by hand: texts a record's JSON types read differently, odd names, ties. */
function oddities(): NormalisedEvent[] {
  const odd: Array<Partial<NormalisedEvent>> = [
    { fields: { num: '1.0' }, shape: '{"t":{"num":"n"}}' },
    { fields: { num: '1' }, shape: '{"t":{"num":"n"}}' },
    { fields: { num: '0x10' }, shape: '{"t":{"num":"n"}}' },
    { fields: { num: '16' }, shape: '{"t":{"num":"n"}}' },
    { fields: { num: ' 7' }, shape: '{"t":{"num":"n"}}' },
    { fields: { num: '-0' }, shape: '{"t":{"num":"n"}}' },
    { fields: { num: '1e400' }, shape: '{"t":{"num":"n"}}' },
    { fields: { num: 'abc' }, shape: '{"t":{"num":"n"}}' },
    // 2 twice and 1 twice (as 1 and 1.0): a cut by text alone would keep 2 only.
    { fields: { num: '2' }, shape: '{"t":{"num":"n"}}' },
    { fields: { num: '2' }, shape: '{"t":{"num":"n"}}' },
    { fields: { b: 'yes' }, shape: '{"t":{"b":"b"}}' },
    { fields: { b: 'false' }, shape: '{"t":{"b":"b"}}' },
    { fields: { b: 'true' }, shape: '{"t":{"b":"b"}}' },
    { fields: { b: 'true' }, shape: '{"t":{"b":"b"}}' },
    { fields: { b: 'no' }, shape: '{"t":{"b":"b"}}' },
    { fields: { arr: '[1, 2]' }, shape: '{"t":{"arr":"j"}}' },
    { fields: { arr: '[1,2]' }, shape: '{"t":{"arr":"j"}}' },
    { fields: { arr: 'not json' }, shape: '{"t":{"arr":"j"}}' },
    { fields: { arr: 'null' }, shape: '{"t":{"arr":"j"}}' },
    { fields: { arr: '[3]' }, shape: '{"t":{"arr":"j"}}' },
    { fields: { arr: '[3]' }, shape: '{"t":{"arr":"j"}}' },
    { fields: { host: 'shadowed', '': 'empty name', __proto__x: 'p' }, host: 'real' },
    {
      fields: { ['__proto__']: 'proto', 'a/b': '1', 'a~b': '2', ü: 'x' },
      shape: '{"t":{"a/b":"n","a~b":"n"}}',
    },
    {
      fields: { 'tab\tname': '3', 'q"k': '4', 'back\\slash': '5' },
      shape: '{"t":{"tab\\tname":"n","q\\"k":"n","back\\\\slash":"n"}}',
    },
    { fields: { broken: '5' }, shape: '{"t":{"broken":"n"' },
    { fields: { ip6: 'FE80::1', ip4: '192.168.0.1' } },
    { fields: { ip6: 'fe80::1', ip4: '192.168.0.256' } },
    { bytes: 2 ** 53 + 1, fields: { big: '9007199254740993' }, shape: '{"t":{"big":"n"}}' },
    { bytes: 2 ** 53, fields: { big: '9007199254740992' }, shape: '{"t":{"big":"n"}}' },
    { fields: { same: '12' }, shape: '{"t":{"same":"n"}}' },
    { fields: { same: '12' } },
    { fields: { '10': 'index', '2': 'index', z: 'z' } },
  ];
  return odd.map((fields) => {
    const ts = nextTs();
    return event(ulid(ts + 5), { ts, received_at: ts + 5, ...fields });
  });
}

/** Many distinct values with ties at the cut, and as many events as the sample holds and more. */
function many(count: number, from: number): NormalisedEvent[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    const ts = nextTs();
    return event(ulid(ts + 5), {
      ts,
      received_at: ts + 5,
      host: `h${i % 4}`,
      message: `m${i}`,
      status: [200, 404, 500, 503, 302, 301, 201][i % 7] as number,
      fields: { id: `id-${i % 997}`, tie: `t${i % 9}`, ...(i % 3 === 0 ? { seq: String(i % 13) } : {}) },
      shape: i % 3 === 0 ? '{"t":{"seq":"n"}}' : null,
    });
  });
}

describe.each(STORES.filter((s) => s.run))('$name: the Fields plan', (kind) => {
  let t: StoreUnderTest;
  let store: EventStore;

  beforeAll(async () => {
    t = await kind.open();
    store = t.store;
    // In three appends: a store that gives common fields columns of their own (DuckDB
    // after 1,000 events) holds some in the map and some in columns.
    await store.append(ingested(1_200));
    await store.append([...oddities(), ...ingested(400)]);
    await store.append(many(1_100, 0));
    await store.append(many(400, 1_100));
  }, 120_000);

  afterAll(async () => {
    await t?.close();
  });

  const plan = (over: Partial<FieldsPlan> = {}): FieldsPlan => ({
    kind: 'fields',
    filter: TRUE,
    range: ALL,
    scope: SYSTEM_SCOPE,
    sample: 10_000,
    top: 5,
    ...over,
  });

  const cases: Array<[string, Partial<FieldsPlan>]> = [
    ['every event', {}],
    ['the newest 700 (a sample of fewer than match)', { sample: 700 }],
    ['the newest 2,500 with 3 top values', { sample: 2_500, top: 3 }],
    ['one top value (texts that read as one value count as one)', { top: 1 }],
    ['two top values', { top: 2 }],
    ['a filter', { filter: not(cond('host', 'eq', 'h1')) as FilterNode }],
    ['a narrow range', { range: { fromMs: T0 + 20 * 40_000 * 200, toMs: T0 + 20 * 40_000 * 260 } }],
    ['nothing', { filter: cond('host', 'eq', 'no such host') }],
  ];

  for (const [name, over] of cases) {
    it(`gives what the events read whole gave: ${name}`, async () => {
      const p = plan(over);
      const [got, expected] = await Promise.all([store.execute(p), reference(store, p)]);
      expect(got).toEqual(expected);
    });
  }

  it('reads only what its scope may: the scope is the store’s to apply, as for every plan', async () => {
    const scope: ReadScope = { key: 'web', filter: cond('host', 'startswith', 'web-') };
    const p = plan({ scope });
    const got = await store.execute(p);
    expect(got).toEqual(await reference(store, p));
    expect(got.fields.map((f) => f.name)).not.toContain('hostname');
    expect(
      got.fields.find((f) => f.name === 'host')?.top.every((v) => String(v.value).startsWith('web-')),
    ).toBe(true);
    expect((await store.execute(plan({ scope: { key: 'none', filter: not(TRUE) } }))).fields).toEqual([]);
  });

  it.runIf(kind.name === 'duckdb')(
    'reads the extra fields kept in columns of their own (DuckDB)',
    async () => {
      const columns = await (
        store as unknown as { runSql(sql: string, p: unknown[]): Promise<unknown[]> }
      ).runSql('SELECT key FROM field_columns', []);
      expect(columns.length).toBeGreaterThan(0);
    },
  );

  it('cuts a field of many distinct values to its top values, ties at the cut kept in order', async () => {
    const got = await store.execute(plan({ filter: cond('message', 'startswith', 'm') }));
    const id = got.fields.find((f) => f.name === 'id');
    expect(id?.top).toHaveLength(5);
    expect(id?.count).toBe(1_500);
    expect(got.fields.find((f) => f.name === 'message')?.top.every((v) => v.count === 1)).toBe(true);
    expect(got.fields.find((f) => f.name === 'seq')).toMatchObject({ type: 'number', count: 500 });
  });
});
