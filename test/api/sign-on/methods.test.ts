import { afterEach, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

/**
 * `GET /api/auth/methods` without single sign-on: password sign-in, and `public_url`, the
 * configured `publicUrl` the web UI builds other clients' addresses on (the MCP endpoint),
 * null when unset (the UI then takes the browser's origin).
 */
describe(`how one may sign in and where clients reach the server, on ${BACKEND}`, () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('says public_url is null when publicUrl is not set, to anyone without a token', async () => {
    t = await createTestApp();
    const res = await t.as(null, { method: 'GET', url: '/api/auth/methods' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ password: true, oidc: null, public_url: null });
  });

  it('gives publicUrl as configured, path kept and trailing slashes dropped', async () => {
    t = await createTestApp({ LOGSCOPE_PUBLIC_URL: 'https://logs.example.com/logscope//' });
    const res = await t.as(null, { method: 'GET', url: '/api/auth/methods' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      password: true,
      oidc: null,
      public_url: 'https://logs.example.com/logscope',
    });
  });
});
