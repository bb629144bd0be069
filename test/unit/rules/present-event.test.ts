import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../../src/core/event.js';
import { presentEvent } from '../../../src/core/present-event.js';
import { event } from '../../helpers/seed.js';

const base: StoredEvent = {
  ...event({ ts: 1_700_000_000_123, received_at: 1_700_000_000_456, host: 'web-1', message: 'hello' }),
  stored_at: 1_700_000_000_789,
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
