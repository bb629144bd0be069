import { loadDemo } from './fields.js';
import { flag, fmt, percentile, startServer } from './lib.js';

/**
 * What an MCP call costs the server (docs/mcp.md): `search_logs` through `POST /mcp`
 * beside the equal `POST /api/query` (a Search sorted `-ts`, `page_size` = `limit`) on the
 * same data, N demo events (default 100,000) over the last 24 h ingested through the API
 * into a fresh server. Each request is plain HTTP from this process (no SDK on the client
 * side: the figure is the server's), the two alternated, `--runs` of each (default 50)
 * after 3 warm-ups; the REST query is removed after each answer, untimed (a tool call
 * removes its own, timed). Prints both medians and their ratio, per case.
 *
 * Flags: --events 100000, --runs 50.
 */
export async function main(argv: string[]) {
  const events = flag(argv, 'events', 100_000);
  const runs = flag(argv, 'runs', 50);
  const server = await startServer();
  const cases = [
    { name: 'last hour, app:nginx, 50 events', query: 'app:nginx', preset: 'last_hour', limit: 50 },
    { name: 'last 24 h, every event, 200 events', query: '', preset: 'last_24_hours', limit: 200 },
    { name: 'last 24 h, a rare word, 20 events', query: 'timeout', preset: 'last_24_hours', limit: 20 },
  ];
  const auth = { authorization: `Bearer ${server.token}` };
  const rest = async (c: (typeof cases)[number]) => {
    const t0 = performance.now();
    const res = await fetch(`${server.url}/api/query`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'Search',
        params: { query: c.query, time_range: { preset: c.preset }, sort: ['-ts'], page_size: c.limit },
      }),
    });
    const body = (await res.json()) as { query_id: string; results: { total: number; events: unknown[] } };
    const ms = performance.now() - t0;
    if (res.status !== 200)
      throw new Error(`query ${c.name}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    await fetch(`${server.url}/api/query/${body.query_id}/remove`, { headers: auth });
    return { ms, total: body.results.total, returned: body.results.events.length };
  };
  let id = 0;
  const mcp = async (c: (typeof cases)[number]) => {
    const t0 = performance.now();
    const res = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'search_logs', arguments: { query: c.query, time_range: c.preset, limit: c.limit } },
      }),
    });
    const body = (await res.json()) as {
      result?: { isError: boolean; structuredContent?: { total: number; returned: number } };
    };
    const ms = performance.now() - t0;
    const answer = body.result?.structuredContent;
    if (!answer || body.result?.isError)
      throw new Error(`search_logs ${c.name}: ${JSON.stringify(body).slice(0, 300)}`);
    return { ms, total: answer.total, returned: answer.returned };
  };
  try {
    const seconds = await loadDemo(server, events, Date.now() - 60_000);
    console.log(`\n${fmt(events)} demo events through the API in ${fmt(seconds, 1)} s`);
    console.log(`\nsearch_logs through /mcp beside the equal POST /api/query, median of ${runs} (ms)`);
    for (const c of cases) {
      const times = { rest: [] as number[], mcp: [] as number[] };
      let seen = { rest: '', mcp: '' };
      for (let i = 0; i < runs + 3; i++) {
        const r = await rest(c);
        const m = await mcp(c);
        seen = { rest: `${r.total}/${r.returned}`, mcp: `${m.total}/${m.returned}` };
        if (i < 3) continue;
        times.rest.push(r.ms);
        times.mcp.push(m.ms);
      }
      const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
      const [pm, pr] = [percentile(sorted(times.mcp), 50), percentile(sorted(times.rest), 50)];
      console.log(
        `${c.name}: search_logs ${fmt(pm, 1)}, POST /api/query ${fmt(pr, 1)}: ${fmt(pm / pr, 2)}× (total/returned: MCP ${seen.mcp}, REST ${seen.rest})`,
      );
    }
  } finally {
    await server.stop();
  }
}
