import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDenied, parseDenyCidrs } from '../../../src/config/deny-cidrs.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

// Issue 29: any plain user could reach what webhookDenyCidrs forbids through webhook and
// Slack channels (0.0.0.0, [::], IPv4-mapped IPv6, other spellings), and `/test`
// repeated what the target answered.

describe('every spelling of a denied address is denied', () => {
  const list = parseDenyCidrs('127.0.0.0/8,::1/128,169.254.0.0/16');
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '0.0.0.0',
    '0.1.2.3',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::FFFF:7F00:0001',
    '0:0:0:0:0:ffff:7f00:1',
    '::127.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
  ])('%s', (address) => {
    expect(isDenied(list, address)).toBe(true);
  });
  it.each(['8.8.8.8', '::ffff:8.8.8.8', '2001:db8::1', '10.0.0.1'])('but not %s', (address) => {
    expect(isDenied(list, address)).toBe(false);
  });
});

describe(`webhook, Slack and Teams channels reach no denied address on ${BACKEND}`, () => {
  let t: TestApp;
  let bob: { id: number; token: string };
  let server: Server;
  let port: number;
  let hits = 0;
  let bytesSent = 0;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_WEBHOOK_DENY_CIDRS: '127.0.0.0/8,::1/128' });
    bob = await t.user('bob');
    server = createServer((req, res) => {
      hits++;
      req.resume();
      // An internal page: a body of 100 MB, sent as fast as the client reads it, that must
      // be neither read whole nor repeated.
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.write('secret-internal-page ');
      const chunk = Buffer.alloc(64 * 1024, 0x78);
      let closed = false;
      res.on('close', () => {
        closed = true;
      });
      const pump = () => {
        while (!closed && bytesSent < 100 * 1024 * 1024) {
          bytesSent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!closed) res.end();
      };
      pump();
    });
    await new Promise<void>((r) => server.listen(0, '0.0.0.0', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await t.close();
  });

  const testChannel = async (type: 'webhook' | 'slack' | 'teams', url: string) => {
    const made = await t.as(bob.token, {
      method: 'POST',
      url: '/api/channels',
      payload: { name: url, type, config: { url } },
    });
    if (made.statusCode !== 201) return { refusedAt: 'create', body: made.json() };
    const res = await t.as(bob.token, { method: 'POST', url: `/api/channels/${made.json().id}/test` });
    return res.json();
  };

  it.each([
    'http://127.0.0.1:PORT/',
    'http://0.0.0.0:PORT/',
    'http://[::]:PORT/',
    'http://[::ffff:127.0.0.1]:PORT/',
    'http://[::ffff:7f00:1]:PORT/',
    'http://2130706433:PORT/',
    'http://0177.0.0.1:PORT/',
    'http://127.1:PORT/',
    'http://0x7f.1:PORT/',
    'http://localhost:PORT/',
  ])('%s is refused, and nothing reaches the target', async (template) => {
    const before = hits;
    for (const type of ['webhook', 'slack', 'teams'] as const) {
      // A plain user learns only that it failed (issue 73): not why, nor what answered.
      const outcome = await testChannel(type, template.replace('PORT', String(port)));
      expect(outcome).toMatchObject({ sent: false, error: 'failed' });
    }
    expect(hits).toBe(before);
  });

  it('reaches no denied address through the PagerDuty and Opsgenie bases either', async () => {
    const relay = await createTestApp({
      LOGSCOPE_WEBHOOK_DENY_CIDRS: '127.0.0.0/8,::1/128',
      LOGSCOPE_PAGERDUTY_URL: `http://127.0.0.1:${port}`,
      LOGSCOPE_OPSGENIE_URL: `http://127.0.0.1:${port}`,
    });
    try {
      const before = hits;
      for (const [type, config] of [
        ['pagerduty', { routing_key: 'k' }],
        ['opsgenie', { api_key: 'k' }],
      ] as const) {
        const made = await relay.as(relay.adminToken, {
          method: 'POST',
          url: '/api/channels',
          payload: { name: type, type, config },
        });
        const res = await relay.as(relay.adminToken, {
          method: 'POST',
          url: `/api/channels/${made.json().id}/test`,
        });
        expect(res.json()).toMatchObject({ sent: false, error: expect.stringMatching(/webhookDenyCidrs/) });
      }
      expect(hits).toBe(before);
    } finally {
      await relay.close();
    }
  });

  it('reads a few KB of an answer and repeats none of it', async () => {
    const open = await createTestApp();
    try {
      const who = await open.user('carol');
      const made = await open.as(who.token, {
        method: 'POST',
        url: '/api/channels',
        payload: { name: 'internal', type: 'webhook', config: { url: `http://127.0.0.1:${port}/` } },
      });
      const res = await open.as(who.token, { method: 'POST', url: `/api/channels/${made.json().id}/test` });
      expect(res.json()).toMatchObject({ sent: false, error: 'failed' });
      expect(res.body).not.toContain('secret-internal-page');
      // An administrator is told what answered, and still none of what it said.
      const admin = await open.as(open.adminToken, {
        method: 'POST',
        url: `/api/channels/${made.json().id}/test`,
      });
      expect(admin.json()).toMatchObject({ sent: false, error: 'HTTP 500' });
      expect(admin.body).not.toContain('secret-internal-page');
      await new Promise((r) => setTimeout(r, 300));
      // The connection was closed long before 100 MB went out (socket buffers aside).
      expect(bytesSent).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await open.close();
    }
  });
});
