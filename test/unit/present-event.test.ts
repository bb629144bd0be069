import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/core/event.js';
import { presentEvent } from '../../src/core/present-event.js';

const base: StoredEvent = {
  ev_id: '01JAAAAAAAAAAAAAAAAAAAAAAA',
  ts: 1_700_000_000_123,
  received_at: 1_700_000_000_456,
  stored_at: 1_700_000_000_789,
  host: 'web-1',
  app: null,
  severity: 'info',
  facility: null,
  message: 'hello',
  src_ip: null,
  src_port: null,
  dst_ip: null,
  dst_port: null,
  user: null,
  action: null,
  status: 200,
  bytes: null,
  source: 'http:admin',
  fields: {},
};

describe('presentEvent', () => {
  it('gives every column and field, times in seconds, columns over same-named fields', () => {
    const fields: Record<string, string> = { 'http.path': '/x', host: 'shadowed' };
    Object.defineProperty(fields, '__proto__', {
      value: 'kept',
      enumerable: true,
      writable: true,
      configurable: true,
    });
    const out = presentEvent({ ...base, fields });
    expect(out).toMatchObject({
      'http.path': '/x',
      host: 'web-1',
      ts: 1_700_000_000.123,
      stored_at: 1_700_000_000.789,
    });
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(JSON.stringify(out)).toContain('"__proto__":"kept"');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(out).not.toHaveProperty('fields');
  });
});
