import { describe, expect, it } from 'vitest';
import { LoginThrottle } from '../../../src/features/identity/login-throttle.js';
import { redactUrl } from '../../../src/http/request-log.js';

describe('redactUrl', () => {
  it.each([
    ['/ws/live-updates?token=ls1_secret', '/ws/live-updates?token=<redacted>'],
    ['/ws/live-updates?a=1&token=ls1_secret&b=2', '/ws/live-updates?a=1&token=<redacted>&b=2'],
    ['/ws/live-updates?%74oken=ls1_secret', '/ws/live-updates?%74oken=<redacted>'],
    ['/ws/live-updates?TOKEN=x&token=y', '/ws/live-updates?TOKEN=<redacted>&token=<redacted>'],
    ['/ws/live-updates?token', '/ws/live-updates?token=<redacted>'],
    ['/api/tasks?tokens=1&my_token=2', '/api/tasks?tokens=1&my_token=2'],
    ['/api/tasks', '/api/tasks'],
    ['/x?%E0%A4%A=1&token=s', '/x?%E0%A4%A=1&token=<redacted>'],
  ])('%s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});

describe('LoginThrottle', () => {
  it('counts failures per username and address over a sliding minute', () => {
    let now = 1_000_000;
    const th = new LoginThrottle({ perUsername: 2, perAddress: 3, now: () => now });
    expect(th.usernameWait('a')).toBe(0);
    th.fail('a', 'ip1');
    expect(th.usernameWait('a')).toBe(0);
    now += 10_000;
    th.fail('a', 'ip1');
    expect(th.usernameWait('a')).toBe(50);
    expect(th.usernameWait('b')).toBe(0);
    expect(th.addressWait('ip1')).toBe(0);
    th.fail('b', 'ip1');
    expect(th.addressWait('ip1')).toBe(50);
    expect(th.addressWait('ip2')).toBe(0);
    // The oldest failure leaves the window: one slot frees.
    now += 50_001;
    expect(th.usernameWait('a')).toBe(0);
    expect(th.addressWait('ip1')).toBe(0);
    now += 60_000;
    expect(th.usernameWait('a')).toBe(0);
  });

  it('0 means no limit', () => {
    const th = new LoginThrottle({ perUsername: 0, perAddress: 0 });
    for (let i = 0; i < 50; i++) th.fail('a', 'ip');
    expect(th.usernameWait('a')).toBe(0);
    expect(th.addressWait('ip')).toBe(0);
  });
});
