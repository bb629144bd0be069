/**
 * `npm run bench -- <name> [flags]`: runs one benchmark. Each prints its figures beside
 * the raw engine doing the same work in the same run, and their ratio.
 */
const BENCHES: Record<string, () => Promise<{ main: (argv: string[]) => Promise<void> }>> = {
  abuse: () => import('./abuse.js'),
  alerting: () => import('./alerting.js'),
  backup: () => import('./backup.js'),
  cluster: () => import('./cluster.js'),
  cold: () => import('./cold.js'),
  context: () => import('./context.js'),
  explain: () => import('./explain.js'),
  fields: () => import('./fields.js'),
  ingest: () => import('./ingest.js'),
  live: () => import('./live.js'),
  'log-metrics': () => import('./log-metrics.js'),
  mcp: () => import('./mcp.js'),
  patterns: () => import('./patterns.js'),
  pipelines: () => import('./pipelines.js'),
  query: () => import('./query.js'),
  scale: () => import('./scale.js'),
  shippers: () => import('./shippers.js'),
  ui: () => import('./ui.js'),
  viewers: () => import('./viewers.js'),
};

const [name, ...rest] = process.argv.slice(2);
const load = name ? BENCHES[name] : undefined;
if (!load) {
  console.error(`usage: npm run bench -- <${Object.keys(BENCHES).join('|')}> [flags]`);
  process.exit(2);
}
await (await load()).main(rest);
