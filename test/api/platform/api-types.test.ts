import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_TYPES_FILE, apiTypes } from '../../../scripts/api-types.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';

describe("the web UI's types of the API", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('are the ones the served OpenAPI document gives (npm run gen:api-types writes them)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/schema' });
    expect(res.statusCode).toBe(200);
    expect(readFileSync(API_TYPES_FILE, 'utf8')).toBe(await apiTypes(res.json()));
  });
});
