import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import { SYSTEM_SCOPE } from '../../src/event-store/read-scope.js';
import { TRUE } from '../../src/filter/ast.js';
import { event, T0 } from '../helpers/seed.js';

describe('streaming a search (exports)', () => {
  let store: DuckDbEventStore;
  beforeAll(async () => {
    // Ten events a window: 1,000 events over ~3 hours stream in ~100 windows.
    store = await DuckDbEventStore.open({
      dataDir: ':memory:',
      memoryLimit: '256MB',
      checkpointThreshold: '16MB',
      streamWindowEvents: 10,
    });
    await store.append(Array.from({ length: 1000 }, (_, i) => event({ ts: T0 + i * 10_000, bytes: i })));
  });
  afterAll(() => store.close());

  const collect = async (sort: Array<{ field: string; desc: boolean }>, limit: number) => {
    const out: number[] = [];
    const range = { fromMs: T0, toMs: T0 + 10_000_000 };
    for await (const e of store.stream({
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter: TRUE,
      range,
      sort,
      limit,
      offset: 0,
      count: false,
    })) {
      out.push(e.bytes as number);
    }
    return out;
  };

  it('streams every event newest first across windows, in order, without gaps', async () => {
    const all = await collect([{ field: 'ts', desc: true }], 5000);
    expect(all).toEqual(Array.from({ length: 1000 }, (_, i) => 999 - i));
  });

  it('streams oldest first and stops at the limit', async () => {
    expect(await collect([{ field: 'ts', desc: false }], 25)).toEqual(
      Array.from({ length: 25 }, (_, i) => i),
    );
  });

  it('streams other sorts as one statement', async () => {
    const top = await collect([{ field: 'bytes', desc: true }], 3);
    expect(top).toEqual([999, 998, 997]);
  });
});
