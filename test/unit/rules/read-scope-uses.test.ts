import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/**
 * Every read states whose events it may see (ADR 0013). The reads the server makes for
 * itself, for no user, name SYSTEM_SCOPE: they are few, and a new one is a decision this
 * test makes someone write down.
 */
describe('SYSTEM_SCOPE', () => {
  it('is used only by the reads the system makes for itself', () => {
    const users = files(SRC)
      .filter((f) => readFileSync(f, 'utf8').includes('SYSTEM_SCOPE'))
      .map((f) => path.relative(SRC, f))
      .sort();
    expect(users).toEqual([
      // a log metric's backfill: it counts every matching event (each read sums only what its reader may read)
      'event-store/duckdb/duckdb-event-store.ts',
      'event-store/read-scope.ts',
      // the duplicate check of journald's cursors
      'features/intake/protocols/journald-intake.ts',
      // merged templates: their stored events, given the id they were merged into
      'features/patterns/patterns-service.ts',
      // re-mining: every event of a range an administrator asked for, read by the job
      'features/patterns/remine-service.ts',
      // the release gate: whether an event a notification names was deleted since (not refused then)
      'features/streams/release-gate.ts',
      // retention: the oldest event, for retentionMaxBytes
      'features/streams/retention.ts',
      // a stream's event_count, shown only to those who may read the stream
      'features/streams/streams-service.ts',
      // which event ids a task names exist, so a reader is not shown those they cannot read
      'features/tasks/hidden-events.ts',
    ]);
  });
});
