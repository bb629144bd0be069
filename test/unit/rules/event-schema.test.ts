import { describe, expect, it } from 'vitest';
import { COLUMN_KINDS, EVENT_COLUMNS, EVENT_SCHEMA } from '../../../src/core/event.js';
import { newUlid } from '../../../src/core/ids.js';
import { CREATE_EVENTS } from '../../../src/event-store/duckdb/duckdb-schema.js';
import { normaliseRecord } from '../../../src/ingest/normalise.js';

describe('the event schema', () => {
  it('names exactly the columns of a stored event', () => {
    const now = Date.UTC(2024, 4, 1);
    const n = normaliseRecord(
      { message: 'hello', host: 'web-1', extra: 'x' },
      {
        receivedAt: now,
        intake: 'test',
        newId: () => newUlid(now),
      },
    );
    if (!n.ok) throw new Error(n.detail);
    const stored = { ...n.event, stored_at: now };
    expect(EVENT_SCHEMA.map((c) => c.name).sort()).toEqual(Object.keys(stored).sort());
  });

  it('queries address every column but the fields map and the internal shape', () => {
    expect(EVENT_COLUMNS).not.toContain('fields');
    expect(EVENT_COLUMNS).not.toContain('shape');
    expect(EVENT_COLUMNS.length).toBe(EVENT_SCHEMA.length - 2);
    expect(COLUMN_KINDS.ts).toBe('time');
    expect(COLUMN_KINDS.bytes).toBe('integer');
    expect(COLUMN_KINDS.src_ip).toBe('ip');
  });

  it('gives DuckDB a table with every column, quoted, NOT NULL where the schema says, ZSTD for prose', () => {
    for (const c of EVENT_SCHEMA) {
      const prose = 'prose' in c ? ' USING COMPRESSION zstd' : '';
      expect(CREATE_EVENTS).toMatch(
        new RegExp(`"${c.name}" [A-Z(), ]+?${c.notNull ? ' NOT NULL' : ''}${prose}(,|\\n)`),
      );
    }
    expect(CREATE_EVENTS.match(/USING COMPRESSION zstd/g)).toHaveLength(1);
  });
});
