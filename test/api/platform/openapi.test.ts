import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';

describe('OpenAPI document', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('is a valid OpenAPI 3.1 document generated from the routes', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/schema' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    for (const path of [
      '/api/authtokens',
      '/api/authtokens/{secret_key}',
      '/api/users/me',
      '/api/auth/login',
    ]) {
      expect(doc.paths).toHaveProperty([path]);
    }
    expect(doc.paths['/api/authtokens'].post.requestBody.content).toHaveProperty(['application/json']);
  });

  it('bounds every array a request may send (maxItems): no body makes validation superlinear', async () => {
    // Issue 29: a 20,000-element `permissions` took over 10 s to validate and stalled
    // every other request. Every array in every request schema, however deep, has a cap.
    const doc = (await t.app.inject({ method: 'GET', url: '/api/schema' })).json();
    const unbounded = new Set<string>();
    const seen = new Set<unknown>();
    const walk = (schema: unknown, where: string): void => {
      if (typeof schema !== 'object' || schema === null || seen.has(schema)) return;
      seen.add(schema);
      const s = schema as Record<string, unknown>;
      if (typeof s.$ref === 'string') {
        const name = s.$ref.split('/').pop() as string;
        walk(doc.components?.schemas?.[name], `${where}→${name}`);
        return;
      }
      if (s.type === 'array' || (Array.isArray(s.type) && s.type.includes('array')) || 'items' in s) {
        if (typeof s.maxItems !== 'number') unbounded.add(where);
        if (s.uniqueItems === true && !(typeof s.maxItems === 'number' && s.maxItems <= 1000))
          unbounded.add(`${where} (uniqueItems over a large array is quadratic)`);
      }
      for (const [key, value] of Object.entries(s)) {
        if (key === 'examples' || key === 'example' || key === 'default' || key === 'enum' || key === 'const')
          continue;
        if (Array.isArray(value)) {
          for (const [i, v] of value.entries()) walk(v, `${where}.${key}[${i}]`);
        } else walk(value, key === 'properties' ? where : `${where}.${key}`);
      }
    };
    interface Operation {
      requestBody?: { content?: Record<string, { schema?: unknown }> };
      parameters?: Array<{ in: string; name: string; schema?: unknown }>;
    }
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, op] of Object.entries(methods)) {
        for (const [type, content] of Object.entries(op.requestBody?.content ?? {}))
          walk(content.schema, `${method.toUpperCase()} ${path} body (${type})`);
        for (const param of op.parameters ?? [])
          walk(param.schema, `${method.toUpperCase()} ${path} ${param.in} ${param.name}`);
      }
    }
    expect([...unbounded].sort()).toEqual([]);
  });

  it('serves the interactive reference without a token', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });
});
