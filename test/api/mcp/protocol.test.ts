import { readFileSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { mcpClient, mcpPost, mcpUrl, rpc } from '../../helpers/mcp.js';

/**
 * `/mcp` from outside, with the official SDK's client and plain HTTP: initialize and
 * version negotiation, ping, the tool and resource lists, authentication before the body
 * (no token, an INGEST token, an unknown one: 401 with a Bearer challenge), the origin
 * rule and CORS, the transport's status codes (202, 400, 405, 413, 415) with the server
 * serving on, OAuth discovery paths answering 404, and `mcpEnabled: false`.
 */

const ALLOWED = 'http://localhost:6274';
let t: TestApp;
let url: string;
let client: Client;
let ingestToken: string;

beforeAll(async () => {
  t = await createTestApp({
    LOGSCOPE_MCP_ALLOWED_ORIGINS: `${ALLOWED}, http://127.0.0.1:9`,
    LOGSCOPE_BODY_LIMIT: '4096',
  });
  url = await mcpUrl(t);
  client = await mcpClient(url, t.adminToken);
  ingestToken = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'shipper' })).secret_key;
});

afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe('initialize, ping, lists', () => {
  it('initializes with the server info, capabilities and instructions', async () => {
    const health = await t.as(null, { method: 'GET', url: '/api/health' });
    expect(client.getServerVersion()).toEqual({
      name: 'logscope',
      title: 'Logscope',
      version: health.json().version,
    });
    expect(client.getServerCapabilities()).toEqual({
      tools: { listChanged: false },
      resources: { listChanged: false },
    });
    const instructions = client.getInstructions() ?? '';
    expect(instructions.length).toBeGreaterThan(200);
    expect(instructions.length).toBeLessThanOrEqual(2000);
    expect(instructions).toContain('logscope://query-language');
    expect(instructions).toContain('ISO 8601');
  });

  it('answers the version a client asks for when served, else 2025-11-25', async () => {
    const init = (protocolVersion: string) =>
      mcpPost(
        url,
        rpc('initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '0' } }),
        { token: t.adminToken },
      );
    for (const v of ['2025-11-25', '2025-06-18', '2025-03-26']) {
      const res = await init(v);
      expect(res.status).toBe(200);
      expect((res.json().result as { protocolVersion: string }).protocolVersion).toBe(v);
      // Stateless: no session is minted.
      expect(res.headers.get('mcp-session-id')).toBeNull();
    }
    for (const v of ['2024-11-05', '2099-01-01']) {
      const res = await init(v);
      expect((res.json().result as { protocolVersion: string }).protocolVersion).toBe('2025-11-25');
    }
  });

  it('pings, lists seven read-only tools and one resource, reads it, refuses an unknown URI', async () => {
    expect(await client.ping()).toEqual({});
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'aggregate',
      'event_context',
      'explain_changes',
      'list_fields',
      'list_streams',
      'search_logs',
      'top_patterns',
    ]);
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description, tool.name).toContain('Example');
      expect(tool.inputSchema.type).toBe('object');
      expect((tool.inputSchema as Record<string, unknown>).additionalProperties).toBe(false);
      for (const [name, p] of Object.entries(tool.inputSchema.properties ?? {}))
        expect((p as { description?: string }).description, `${tool.name}.${name}`).toBeTruthy();
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
    }
    const search = tools.find((tool) => tool.name === 'search_logs');
    expect(search?.inputSchema.required).toEqual(['query', 'time_range']);
    expect(search?.inputSchema.properties?.limit).toMatchObject({ maximum: 200 });

    const { resources } = await client.listResources();
    expect(resources).toEqual([
      {
        uri: 'logscope://query-language',
        name: 'query-language',
        title: 'Logscope query language',
        mimeType: 'text/markdown',
      },
    ]);
    const read = await client.readResource({ uri: 'logscope://query-language' });
    const text = (read.contents[0] as { text: string }).text;
    expect(text).toBe(readFileSync('docs/query-language.md', 'utf8'));
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(65_536);
    const unknown = await client.readResource({ uri: 'logscope://nope' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).code).toBe(-32002);
  });

  it('serves tools/list without a prior initialize, and ignores a session id sent', async () => {
    const res = await mcpPost(url, rpc('tools/list'), {
      token: t.adminToken,
      headers: { 'mcp-session-id': 'made-up', 'mcp-protocol-version': '2025-11-25' },
    });
    expect(res.status).toBe(200);
    expect((res.json().result as { tools: unknown[] }).tools).toHaveLength(7);
  });

  it('answers initialize without its params -32602', async () => {
    const res = await mcpPost(url, rpc('initialize', { protocolVersion: '2025-11-25' }), {
      token: t.adminToken,
    });
    expect(res.status).toBe(200);
    expect(res.json().error).toMatchObject({ code: -32602 });
  });

  it('answers an unknown method -32601, an unknown tool -32602, a notification and a response 202', async () => {
    const res = await mcpPost(url, rpc('prompts/list'), { token: t.adminToken });
    expect(res.json().error).toMatchObject({ code: -32601 });
    const unknown = await client.callTool({ name: 'drop_tables', arguments: {} }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).code).toBe(-32602);
    expect((unknown as McpError).message).toContain('Unknown tool: drop_tables');
    const note = await mcpPost(
      url,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { token: t.adminToken },
    );
    expect(note.status).toBe(202);
    expect(note.text).toBe('');
    const response = await mcpPost(url, { jsonrpc: '2.0', id: 9, result: {} }, { token: t.adminToken });
    expect(response.status).toBe(202);
  });
});

describe('authentication comes first', () => {
  const expect401 = (res: Awaited<ReturnType<typeof mcpPost>>) => {
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="logscope"');
    expect(res.json()).toMatchObject({ detail: expect.any(String), code: expect.any(String) });
  };

  it('refuses no token, an unknown one and an INGEST one alike, before reading the body', async () => {
    expect401(await mcpPost(url, 'not json at all', { token: null }));
    expect401(await mcpPost(url, rpc('tools/list'), { token: 'lsk_unknown_0123456789' }));
    expect401(await mcpPost(url, rpc('tools/list'), { token: ingestToken }));
    expect401(await mcpPost(url, rpc('tools/list'), { headers: { authorization: 'Basic YWRtaW46eA==' } }));
    // A big body is not read either: 401, not 413.
    expect401(await mcpPost(url, 'x'.repeat(10_000), { token: null }));
    // The scheme in any case, and "token" too.
    const lower = await mcpPost(url, rpc('ping'), { headers: { authorization: `bearer ${t.adminToken}` } });
    expect(lower.status).toBe(200);
    const token = await mcpPost(url, rpc('ping'), { headers: { authorization: `token ${t.adminToken}` } });
    expect(token.json().result).toEqual({});
  });

  it('authenticates every message on its own: a deleted token opens nothing more', async () => {
    const made = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/authtokens',
      payload: { token_type: 'USER', name: 'mcp-2026-11-28' },
    });
    const { secret_key: secret, key_id: keyId } = made.json() as { secret_key: string; key_id: string };
    const assistant = await mcpClient(url, secret);
    const listed = await assistant.callTool({ name: 'list_streams', arguments: {} });
    expect(listed.isError).toBe(false);
    const deleted = await t.as(t.adminToken, { method: 'DELETE', url: `/api/authtokens/${keyId}` });
    expect(deleted.statusCode).toBeLessThan(300);
    expect401(
      await mcpPost(url, rpc('tools/call', { name: 'list_streams', arguments: {} }), { token: secret }),
    );
    await assistant.close();
  });

  it('answers 404 JSON at the OAuth discovery paths, whatever the client accepts', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
    ]) {
      const res = await t.as(null, { method: 'GET', url: path, headers: { accept: 'text/html' } });
      expect(res.statusCode, path).toBe(404);
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.json().code).toBe('not_found');
    }
  });
});

describe('origins and CORS', () => {
  it('refuses a foreign Origin with 403 before authentication', async () => {
    const res = await mcpPost(url, rpc('ping'), {
      token: t.adminToken,
      headers: { origin: 'http://evil.example' },
    });
    expect(res.status).toBe(403);
    const anonymous = await mcpPost(url, rpc('ping'), {
      token: null,
      headers: { origin: 'http://evil.example' },
    });
    expect(anonymous.status).toBe(403);
    const preflight = await fetch(url, { method: 'OPTIONS', headers: { origin: 'http://evil.example' } });
    expect(preflight.status).toBe(403);
  });

  it('answers an allowed origin’s preflight without a token, and its POSTs with CORS', async () => {
    const preflight = await fetch(url, {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    const allowed = preflight.headers.get('access-control-allow-headers') ?? '';
    for (const h of ['authorization', 'content-type', 'mcp-protocol-version']) expect(allowed).toContain(h);
    const res = await mcpPost(url, rpc('ping'), { token: t.adminToken, headers: { origin: ALLOWED } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    const second = await mcpPost(url, rpc('ping'), {
      token: t.adminToken,
      headers: { origin: 'http://127.0.0.1:9' },
    });
    expect(second.status).toBe(200);
  });
});

describe('the transport', () => {
  it('answers 405 with Allow: POST to GET and DELETE', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(url, { method, headers: { authorization: `Bearer ${t.adminToken}` } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('answers 415, 413, -32700 and -32600, and serves on', async () => {
    const text = await mcpPost(url, JSON.stringify(rpc('ping')), {
      token: t.adminToken,
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    const big = await mcpPost(url, { ...rpc('ping'), pad: 'x'.repeat(5000) }, { token: t.adminToken });
    expect(big.status).toBe(413);
    const broken = await mcpPost(url, '{"jsonrpc": "2.0", "id": 1, "method": ', { token: t.adminToken });
    expect(broken.status).toBe(400);
    expect(broken.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: expect.any(String) },
    });
    for (const body of [
      '{"hello": 1}',
      '[]',
      '42',
      '[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]',
      '{"jsonrpc": "1.0", "id": 1, "method": "ping"}',
    ]) {
      const res = await mcpPost(url, body, { token: t.adminToken });
      expect(res.status, body).toBe(400);
      expect((res.json().error as { code: number }).code, body).toBe(-32600);
    }
    const version = await mcpPost(url, rpc('ping'), {
      token: t.adminToken,
      headers: { 'mcp-protocol-version': '1999-01-01' },
    });
    expect(version.status).toBe(400);
    expect(await client.ping()).toEqual({});
  });
});

describe('mcpEnabled: false', () => {
  it('answers 404 at /mcp', async () => {
    const off = await createTestApp({ LOGSCOPE_MCP_ENABLED: 'false' });
    try {
      const res = await off.as(off.adminToken, {
        method: 'POST',
        url: '/mcp',
        headers: { 'content-type': 'application/json' },
        payload: rpc('ping'),
      });
      expect(res.statusCode).toBe(404);
      const page = await off.as(null, { method: 'GET', url: '/mcp', headers: { accept: 'text/html' } });
      expect(page.statusCode).toBe(404);
      expect(page.headers['content-type']).toContain('application/json');
    } finally {
      await off.close();
    }
  });
});
