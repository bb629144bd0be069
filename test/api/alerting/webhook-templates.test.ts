/**
 * Webhook body templates from outside: checked when the channel is saved (a template that
 * does not parse is a 400 on config.body_template naming the name or the position), and
 * rendered for a test and a firing, escaped for the content type and signed.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { receiver } from '../../helpers/webhook-receiver.js';

describe('webhook body templates', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object) =>
    t.as(t.adminToken, { method, url, ...(payload ? { payload } : {}) });

  it('refuses a template that does not parse, at create and update, naming the problem', async () => {
    const create = await call('POST', '/api/channels', {
      name: 'tpl',
      type: 'webhook',
      config: { url: 'http://127.0.0.1:9/', body_template: '{"who": "{{trigger.nmae}}"}' },
    });
    expect(create.statusCode).toBe(400);
    expect(create.json().errors['config.body_template'][0]).toMatch(
      /unknown variable "trigger.nmae" at line 1, column 10/i,
    );
    const made = await call('POST', '/api/channels', {
      name: 'tpl',
      type: 'webhook',
      config: { url: 'http://127.0.0.1:9/', body_template: '{{headline}}', content_type: 'text/plain' },
    });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json().config).toMatchObject({ body_template: '{{headline}}', content_type: 'text/plain' });
    const id = made.json().id;
    for (const [method, template, problem] of [
      ['PATCH', '{{#samples}}{{message}}', /section "samples" opened at line 1, column 1 is not closed/i],
      ['PUT', '{{#samples}}{{/trigger}}', /does not close "samples"/],
      ['PATCH', 'a\n{{kind', /unterminated tag at line 2, column 1/i],
    ] as const) {
      const res = await call(method, `/api/channels/${id}`, {
        name: 'tpl',
        type: 'webhook',
        config: { url: 'http://127.0.0.1:9/', body_template: template },
      });
      expect(res.statusCode, template).toBe(400);
      expect(res.json().errors['config.body_template'][0]).toMatch(problem);
    }
    const tooBig = await call('POST', '/api/channels', {
      name: 'big',
      type: 'webhook',
      config: { url: 'http://127.0.0.1:9/', body_template: 'x'.repeat(16 * 1024 + 1) },
    });
    expect(Object.keys(tooBig.json().errors)).toEqual(['config.body_template']);
    const badType = await call('POST', '/api/channels', {
      name: 'ct',
      type: 'webhook',
      config: { url: 'http://127.0.0.1:9/', body_template: '{{kind}}', content_type: 'text\nplain' },
    });
    expect(Object.keys(badType.json().errors)).toEqual(['config.content_type']);
  });

  it('renders for a test and a firing, escaped for JSON and signed', async () => {
    const r = await receiver();
    const template =
      '{"kind": "{{kind}}", "test": {{is_test}}, "who": "{{trigger.name}}", "n": {{#count}}{{count}}{{/count}}{{^count}}null{{/count}}, ' +
      '"host": "{{group.host}}", "msgs": [{{#samples}}"{{message}}",{{/samples}}""], "g": {{#group}}{{{group}}}{{/group}}{{^group}}null{{/group}}}';
    const made = await call('POST', '/api/channels', {
      name: 'rendered',
      type: 'webhook',
      config: { url: r.url, secret: 'k3y', body_template: template },
    });
    expect(made.statusCode, made.body).toBe(201);
    const test = await call('POST', `/api/channels/${made.json().id}/test`);
    expect(test.json()).toMatchObject({ sent: true });
    expect(JSON.parse(r.got[0]?.body ?? '')).toEqual({
      kind: 'test',
      test: true,
      who: '',
      n: null,
      host: '',
      msgs: [''],
      g: null,
    });

    await call('POST', '/api/triggers', {
      name: 'Quote "burst"',
      query: 'tplword',
      condition: { type: 'threshold', window_seconds: 60, op: 'gt', value: 1, group_by: ['host'] },
      notify: [made.json().id],
    });
    await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: [
        { host: 'web "1"', message: 'tplword said "no"' },
        { host: 'web "1"', message: 'tplword back\\slash\nnewline' },
      ]
        .map((e) => JSON.stringify(e))
        .join('\n'),
    });
    const hit = await eventually('the firing', () => r.got[1], { withinMs: 10_000 });
    expect(hit.headers['content-type']).toBe('application/json');
    expect(hit.headers['x-logscope-signature']).toBe(
      `sha256=${createHmac('sha256', 'k3y').update(hit.body).digest('hex')}`,
    );
    expect(JSON.parse(hit.body)).toEqual({
      kind: 'fire',
      test: false,
      who: 'Quote "burst"',
      n: 2,
      host: 'web "1"',
      msgs: ['tplword said "no"', 'tplword back\\slash\nnewline', ''],
      g: { host: 'web "1"' },
    });
    await r.close();
  });

  it('sends another content type as it is, unescaped', async () => {
    const r = await receiver();
    const made = await call('POST', '/api/channels', {
      name: 'text',
      type: 'webhook',
      config: {
        url: r.url,
        body_template: '{{#is_test}}TEST {{/is_test}}{{headline}} "{{kind}}"',
        content_type: 'text/plain; charset=utf-8',
      },
    });
    expect((await call('POST', `/api/channels/${made.json().id}/test`)).json()).toMatchObject({ sent: true });
    expect(r.got[0]?.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.got[0]?.body).toBe('TEST Logscope test notification: this channel works. "test"');
    await r.close();
  });

  it('refuses a section inside one of its own name, at every depth up to the size limit', async () => {
    // The template that stalled the server: the samples walked samples^depth times.
    for (const depth of [2, 3, 8, 64, 600]) {
      const template = `${'{{#samples}}'.repeat(depth)}{{message}}${'{{/samples}}'.repeat(depth)}`;
      const res = await call('POST', '/api/channels', {
        name: 'nested',
        type: 'webhook',
        config: { url: 'http://127.0.0.1:9/', body_template: template, content_type: 'text/plain' },
      });
      expect(res.statusCode, `depth ${depth}`).toBe(400);
      expect(res.json().errors['config.body_template'][0]).toMatch(
        /ection "samples" at line 1, column 13 is inside a section of the same name/,
      );
    }
    // Other sections may nest (an object inside the list's items).
    const ok = await call('POST', '/api/channels', {
      name: 'nested-ok',
      type: 'webhook',
      config: {
        url: 'http://127.0.0.1:9/',
        body_template: '{{#samples}}{{#trigger}}{{name}}{{/trigger}}{{^trigger}}-{{/trigger}}{{/samples}}',
        content_type: 'text/plain',
      },
    });
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('fails a delivery whose template renders past the budget, with the reason, the server answering', async () => {
    const r = await receiver();
    // The largest fan-out the rules allow: each sample writes the whole text many times.
    const unit = '{{text}}{{headline}}{{{samples}}}';
    const template = `{{#samples}}${unit.repeat(Math.floor((16 * 1024 - 40) / unit.length))}{{/samples}}`;
    const made = await call('POST', '/api/channels', {
      name: 'heavy',
      type: 'webhook',
      config: { url: r.url, body_template: template, content_type: 'text/plain' },
    });
    expect(made.statusCode, made.body).toBe(201);
    await call('POST', '/api/triggers', {
      name: 'heavy trigger',
      query: 'heavyword',
      notify: [made.json().id],
    });
    // Samples as long as events may be: every variable multiplies them.
    const long = 'x'.repeat(2000);
    const health: number[] = [];
    let measuring = true;
    const sampler = (async () => {
      while (measuring) {
        const started = performance.now();
        const h = await t.app.inject({ method: 'GET', url: '/api/health' });
        expect(h.statusCode).toBe(200);
        health.push(performance.now() - started);
        await new Promise((res) => setTimeout(res, 20));
      }
    })();
    await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: Array.from({ length: 10 }, (_, i) =>
        JSON.stringify({ message: `heavyword ${i} ${long}` }),
      ).join('\n'),
    });
    const failed = await eventually(
      'the failed delivery',
      async () => {
        const list = await call('GET', `/api/deliveries?channel_id=${made.json().id}`);
        const row = list.json().results[0];
        return row?.status === 'failed' ? row : undefined;
      },
      { withinMs: 15_000 },
    );
    await new Promise((res) => setTimeout(res, 500));
    measuring = false;
    await sampler;
    expect(failed.last_error).toMatch(/^not sent: the body template renders more than \d+ (bytes|tags)/);
    expect(failed.attempts).toBe(1);
    expect(r.got).toHaveLength(0);
    expect(health.length).toBeGreaterThan(3);
    expect(Math.max(...health)).toBeLessThan(250);
    await r.close();
  });
});
