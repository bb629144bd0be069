import { describe, expect, it } from 'vitest';
import type { NormalisedEvent } from '../../../src/core/event.js';
import { IngestService, SLICE_RECORDS } from '../../../src/features/intake/ingest-service.js';
import type { Batcher } from '../../../src/ingest/batcher.js';
import type { ParsedEntry } from '../../../src/ingest/parsers/ndjson.js';
import type { PipelineSet } from '../../../src/ingest/pipelines/pipeline.js';

/** A batcher that takes every batch at once (what it stores is not the point here). */
const taking = { submit: async (_events: NormalisedEvent[]) => undefined } as unknown as Batcher;

/** A piece of one record whose parsing keeps the thread busy for `ms` and says when it ran. */
const piece = (name: string, order: string[], ms: number) => (): ParsedEntry[] => {
  order.push(name);
  const until = performance.now() + ms;
  while (performance.now() < until);
  return [{ index: 0, value: { message: name } }];
};

describe('ingest service', () => {
  it("runs one piece per turn of the event loop: timers fire between two requests' pieces", async () => {
    const ingest = new IngestService(taking);
    const order: string[] = [];
    // Two requests arriving together, and a timer due meanwhile: the timer runs between
    // their pieces, not after both (each piece is normalised, piped and mined in one go).
    const a = ingest.ingestPieces([piece('a1', order, 5), piece('a2', order, 5)], 'test');
    const b = ingest.ingestPieces([piece('b1', order, 5)], 'test');
    setTimeout(() => order.push('timer'), 0);
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.accepted + rb.accepted).toBe(3);
    expect(order.indexOf('timer')).toBeGreaterThan(0);
    expect(order.indexOf('timer')).toBeLessThan(order.length - 1);
    expect(order.slice(0, 1)).toEqual(['a1']);
  });

  it('turns the event loop between slices of a piece, and keeps its records in order', async () => {
    const log: string[] = [];
    const seen: string[] = [];
    const batcher = {
      submit: async (events: NormalisedEvent[]) => {
        seen.push(...events.map((e) => e.message ?? ''));
      },
    } as unknown as Batcher;
    // The pipelines see each slice; an immediate re-queued by itself marks each turn.
    const pipelines = {
      process: (events: NormalisedEvent[]) => {
        log.push(`slice ${events.length}`);
        return events;
      },
    } as unknown as PipelineSet;
    const ingest = new IngestService(batcher, () => pipelines);
    const n = SLICE_RECORDS * 2 + 7;
    const entries: ParsedEntry[] = Array.from({ length: n }, (_, i) => ({
      index: i,
      value: { message: `m${i}` },
    }));
    let done = false;
    const turn = () => {
      log.push('turn');
      if (!done) setImmediate(turn);
    };
    setImmediate(turn);
    const out = await ingest.ingestPieces([() => entries], 'test');
    done = true;
    expect(out.accepted).toBe(n);
    const slices = log.filter((l) => l !== 'turn');
    expect(slices).toEqual([`slice ${SLICE_RECORDS}`, `slice ${SLICE_RECORDS}`, 'slice 7']);
    // A turn between each two slices: no slice right after another.
    expect(log.filter((l, i) => l !== 'turn' && log[i - 1]?.startsWith('slice'))).toEqual([]);
    expect(seen).toEqual(entries.map((e) => `m${e.index}`));
  });
});
