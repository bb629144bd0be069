import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestApp } from './app.js';

/** The app listening on loopback (the SDK's transport speaks HTTP); its `/mcp` URL. */
export async function mcpUrl(t: TestApp): Promise<string> {
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `${address}/mcp`;
}

/** The official SDK's client, connected (initialize, initialized) with `token` as a Bearer token. */
export async function mcpClient(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'logscope-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/** One POST to `/mcp` as a client would send it: JSON unless `body` is a string. */
export async function mcpPost(
  url: string,
  body: unknown,
  opts: { token?: string | null; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; text: string; json: () => Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
      ...opts.headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    json: () => JSON.parse(text) as Record<string, unknown>,
  };
}

/** A JSON-RPC request body. */
export const rpc = (method: string, params?: Record<string, unknown>, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params ? { params } : {}),
});
