import { describe, expect, it } from 'vitest';
import { groupingAccuracy } from '../../../../src/ingest/patterns/grouping-accuracy.js';
import { TemplateMiner, tokenize, WILDCARD } from '../../../../src/ingest/patterns/template-miner.js';

/**
 * A miner and its messages' ids as stored events hold them: a template merged into another
 * (its slot's words made a variable) is the other's, as features/patterns rewrites them.
 */
function storedIds() {
  const into = new Map<string, string>();
  const miner = new TemplateMiner({
    onMerge: (to, merged) => {
      for (const m of merged) into.set(m.id, to.id);
    },
  });
  const resolve = (id: string) => {
    let at = id;
    for (let next = into.get(at); next !== undefined; next = into.get(at)) at = next;
    return at;
  };
  return { miner, resolve };
}

/**
 * The shapes of message that split one template in many (or none), each built from
 * synthetic lines that have the shape: every group of lines below is one template.
 */
const SHAPES: Record<string, string[]> = {
  'ids of one kind with and without a minus sign': [
    'Replica rep_-4829103746615 moved to node 12 of rack east',
    'Replica rep_5519203918 moved to node 7 of rack east',
    'Replica rep_-77 moved to node 3 of rack east',
  ],
  'a value restated in parentheses, there or not': [
    'upload of report.csv done: 1190 bytes (1.16 KB) in 20 ms',
    'upload of summary.csv done: 850 bytes in 3 ms',
    'upload of big.bin done: 5242880 bytes (5.00 MB) in 1200 ms',
  ],
  'a word of a small set beside paths and ids that hold it': [
    "Mounting store ALPHA, at key '{a1b2c3d4}ROOT/Dev/Shadow4/stores/ALPHA' from path '\\\\?\\ROOT\\Dev\\Shadow4\\stores\\ALPHA'.",
    "Mounting store BETA, at key '{a1b2c3d4}ROOT/Dev/Shadow4/stores/BETA' from path '\\\\?\\ROOT\\Dev\\Shadow4\\stores\\BETA'.",
    "Mounting store GAMMA, at key '{e5f60718}ROOT/Dev/Shadow9/stores/GAMMA' from path '\\\\?\\ROOT\\Dev\\Shadow9\\stores\\GAMMA'.",
  ],
  'package names made of versions and architectures': [
    'Cached state for module: Core-Runtime~31bf3856ad364e35~x86~~2.4.7601.17514, Applicable: 112, Current:0',
    'Cached state for module: Update_for_QA2871997~31bf3856ad364e35~arm64~~6.1.2.0, Applicable: 0, Current:112',
    'Cached state for module: Net-Stack-Extras~31bf3856ad364e35~x86~~10.0.1.3, Applicable: 80, Current:80',
  ],
  'an id in a frame beside a whole id': [
    'Chunk shard_12_part0 cached in memory, size 4096',
    'Chunk shard_3_7 cached in memory, size 12',
    'Chunk 9f8e7d6c5b4a cached in memory, size 77',
  ],
  'a list of ids of variable length': [
    'scheduler asked 10.0.4.7:7001 to drop seg_7731',
    'scheduler asked 10.0.4.9:7001 to drop seg_-1200 seg_88 seg_913 seg_12',
    'scheduler asked 10.0.5.1:7001 to drop seg_4 seg_5',
  ],
  'key=value runs whose values are hex, flags and booleans': [
    'wake report src=radio mask=0x23 held=true reason=0x0',
    'wake report src=radio mask=0x1f0 held=false reason=0x4',
    'wake report src=radio mask=0x0 held=TRUE reason=0x10',
  ],
  'values after one key, comma separated': [
    'stat changed day =20240103, kind=4002,716.5,prev=698.0',
    'stat changed day =20240104, kind=4003,15336.0,prev=21065.54',
  ],
  'a URL whose query holds keys and values': [
    'fetch ended for URL: "https://updates.example.com/svc/check?req=ab12cd34ef56&key=7:1500"',
    'fetch ended for URL: "https://mirror.example.org/svc/check?req=99ffee0011aa&key=3:20"',
  ],
  'a boolean alone in a fixed position': ['cache warm: true after 12 ms', 'cache warm: false after 940 ms'],
  'a list of names of one kind, of variable length': [
    'job 17 placed on nodes cn3 cn4 cn5 cn6 for 20 s',
    'job 18 placed on nodes cn11 for 4 s',
    'job 19 placed on nodes gpu2, gpu3 for 9 s',
  ],
  'a name from a set of many in a fixed position': [
    'Starting crond: succeeded',
    'Starting sshd: succeeded',
    'Starting syslogd: succeeded',
    'Starting crond: succeeded',
    'Starting ntpd: succeeded',
  ],
  'a unit after its value': [
    'flushed 5.2 KB to disk in 12 ms',
    'flushed 93 B to disk in 3 s',
    'flushed 1 MiB to disk in 2 min',
  ],
  'a date written out': [
    'connection from 10.1.1.1 at Fri Jun 17 07:07:00 2005',
    'connection from 10.1.1.2 at Sat Jul  1 17:00:12 2005',
  ],
  "a program's file name first, a size restated or not, a lifetime with its unit or not": [
    'chrome.exe - www.example.com:443 close, 1190 bytes (1.16 KB) sent, 1671 bytes (1.63 KB) received, lifetime 00:01',
    'Dropbox.exe - files.example.org:443 close, 850 bytes sent, 4096 bytes (4.00 KB) received, lifetime <1 sec',
    'git.exe - code.example.net:22 close, 0 bytes sent, 0 bytes received, lifetime 02:13',
  ],
  'a host with its port': [
    'relay.corp.example.org:443 closed after 12 s',
    'db7.eu.example.net:5432 closed after 3 s',
  ],
};

/** Other messages, each its own template, that the shapes must not swallow. */
const OTHERS = [
  'Replica rep_12 lost before its move to rack east',
  'upload of report.csv refused by the quota of 1190 bytes (1.16 KB)',
  'Unmounting store ALPHA',
  'wake report src=timer',
  'cache cold: true after 12 ms',
  'chrome.exe - www.example.com:443 open through proxy proxy.example.edu:5070 HTTPS',
];

describe('the template miner on the shapes that split templates', () => {
  for (const [shape, lines] of Object.entries(SHAPES)) {
    it(`groups as one template: ${shape}`, () => {
      const { miner, resolve } = storedIds();
      const mined = lines.map((l) => miner.match('app', l).id);
      const ids = new Set(mined.map(resolve));
      expect(ids.size, lines.map((l) => tokenize(l).join(' ')).join('\n')).toBe(1);
      // Nothing else of the shape's app joins it.
      for (const other of OTHERS) expect(ids.has(resolve(miner.match('app', other).id)), other).toBe(false);
    });
  }

  it('masks a sign with its number, a restated value and a list of one form', () => {
    expect(tokenize('block blk_-42 and blk_42')).toEqual(['block', 'blk_<*>', 'and', 'blk_<*>']);
    expect(tokenize('sent 10 bytes (0.01 KB) ok')).toEqual(['sent', WILDCARD, 'bytes', 'ok']);
    expect(tokenize('drop a_1 a_2 a_3 now')).toEqual(['drop', 'a_<*>', 'now']);
    // A value alone in parentheses stays (it often names a host): only a value with its unit is left out.
    expect(tokenize('from 10.0.0.1 (gw.example.org)')).toEqual(['from', WILDCARD, `(${WILDCARD})`]);
  });

  it('masks a run of digits whole or not at all, a host with its port, a URL in punctuation, a size in pixels', () => {
    // Two digits after letters are a name's (`U11`, `bglio46`); three or more a value's.
    expect(tokenize('card U11 slot J16 on bglio46 and bglio559')).toEqual([
      'card',
      'U11',
      'slot',
      'J16',
      'on',
      'bglio46',
      'and',
      `bglio${WILDCARD}`,
    ]);
    expect(tokenize('to msra-sa-41:9000 and db.local:5432, memory:1024')).toEqual([
      'to',
      WILDCARD,
      'and',
      `${WILDCARD},`,
      `memory:${WILDCARD}`,
    ]);
    expect(tokenize('on :[akka.tcp://system@host-7:2552] at 80x25')).toEqual([
      'on',
      `${WILDCARD}]`,
      'at',
      WILDCARD,
    ]);
  });

  it('groups the same lines the same way in any order', () => {
    const lines = [...Object.values(SHAPES).flat(), ...OTHERS];
    const grouping = (order: readonly number[]) => {
      const { miner, resolve } = storedIds();
      const byLine: string[] = [];
      for (const i of order) byLine[i] = miner.match('app', lines[i] as string).id;
      return byLine.map(resolve);
    };
    const forward = lines.map((_, i) => i);
    const reference = grouping(forward);
    // Seeded shuffles (a linear congruential generator), and the reverse.
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const orders = [[...forward].reverse()];
    for (let k = 0; k < 20; k++) {
      const o = [...forward];
      for (let i = o.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [o[i], o[j]] = [o[j] as number, o[i] as number];
      }
      orders.push(o);
    }
    for (const order of orders) expect(groupingAccuracy(reference, grouping(order)).ga).toBe(1);
    expect(new Set(reference).size).toBe(Object.keys(SHAPES).length + OTHERS.length);
  });

  it('groups the same lines the same way across a restart, wherever it falls', () => {
    const lines = [
      ...Object.values(SHAPES).flat(),
      ...OTHERS,
      'Scanner powered On',
      'Scanner powered Off',
      'Scanner powered On',
    ];
    const whole = storedIds();
    const reference = lines.map((l) => whole.miner.match('app', l).id).map(whole.resolve);
    for (let cut = 1; cut < lines.length; cut += 3) {
      // The first process's templates as the metadata store keeps them (merged ones gone).
      const before = storedIds();
      const first = lines.slice(0, cut).map((l) => before.miner.match('app', l).id);
      const kept = new Map<string, { id: string; app: string; tokens: string[]; count: number }>();
      for (const id of new Set(first.map(before.resolve))) {
        const t = before.miner.get(id);
        if (t) kept.set(id, { id, app: t.app, tokens: [...t.tokens], count: t.count });
      }
      const after = storedIds();
      for (const t of kept.values()) after.miner.adopt(t);
      const rest = lines.slice(cut).map((l) => after.miner.match('app', l).id);
      // Events stored before the restart follow merges made after it (by their ids).
      const grouping = [...first.map(before.resolve), ...rest].map(after.resolve);
      expect(groupingAccuracy(reference, grouping).ga, `restart after ${cut} lines`).toBe(1);
    }
  });

  it('keeps apart messages that differ in one word of two (an enumeration), in any order', () => {
    const pairs = [
      ['Scanner powered On', 'Scanner powered Off'],
      ['Ending setup.', 'Ending teardown.'],
      ['Session: 4471_9 initialized by client Agent.', 'Session: 12_77 initialized by client Recovery.'],
      ['Failed password for alice from 10.0.0.1', 'Failed none for alice from 10.0.0.2'],
    ];
    for (const [a, b] of pairs) {
      const { miner, resolve } = storedIds();
      const ids = [a, b, a, a, b, a].map((l) => resolve(miner.match('app', l as string).id));
      expect(new Set(ids).size, `${a} / ${b}`).toBe(2);
      expect(ids[0]).toBe(ids[2]);
      expect(ids[1]).toBe(ids[4]);
    }
  });

  it('takes a third word at a position as a variable: the slot’s templates merge into the first', () => {
    const merges: Array<[string, string[]]> = [];
    const miner = new TemplateMiner({
      onMerge: (into, merged) => merges.push([into.id, merged.map((m) => m.id)]),
    });
    const root = miner.match('app', 'session opened for user root by uid 0').id;
    const news = miner.match('app', 'session opened for user news by uid 9').id;
    expect(news).not.toBe(root);
    expect(merges).toEqual([]);
    const cyrus = miner.match('app', 'session opened for user cyrus by uid 12');
    expect(cyrus.id).toBe(root);
    expect(cyrus.tokens).toEqual(['session', 'opened', 'for', 'user', WILDCARD, 'by', 'uid', WILDCARD]);
    expect(cyrus.count).toBe(3);
    expect(merges).toEqual([[root, [news]]]);
    // The merged template is gone; its word now joins the variable.
    expect(miner.get(news)).toBeUndefined();
    expect(miner.match('app', 'session opened for user news by uid 9').id).toBe(root);
    expect(miner.size).toBe(1);
  });
});
