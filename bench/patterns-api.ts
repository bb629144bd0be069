import { rmSync } from 'node:fs';
import { groupingAccuracy } from '../src/ingest/patterns/grouping-accuracy.js';
import { ingestThroughApi, ndjson } from './ingest.js';
import { type BenchServer, countFlag, cpuMs, flag, fmt, percentile, startServer } from './lib.js';
import {
  DRAIN_GA,
  type LoghubSystem,
  mineAsIngest,
  readLoghubSystems,
  templateAccuracy,
} from './patterns-loghub.js';

/**
 * Patterns measured from outside (docs/api/patterns.md), `npm run bench -- patterns
 * --through-api`: one fresh server takes the ten Loghub-2k systems' messages through
 * `POST /api/ingest` as a shipper sends them (NDJSON `{message, app: loghub-<system>-<run>,
 * host, ts}`, `--batch` 500 lines a request, in file order, one system after another);
 * every event's `pattern_id` is read back through a Search and each template's text
 * through `GET /api/patterns/{id}`, and scored with the labels as the in-process mode
 * scores what it mines (GA, FGA, FTA, PA beside Drain's published GA). The ids are read
 * at once and again after `--settle` seconds (merged templates' stored events are
 * rewritten a while after the merge); each read is compared with the in-process mining of
 * the same messages, grouping by grouping.
 *
 * Then the cost of mining at ingest from outside: two fresh servers, one with
 * `patternMining: false`, take the same NDJSON load (the ten systems' lines, `--batch` a
 * request from `--clients` clients) in `--rounds` runs of `--events` each, taking turns
 * (the order swapped every round, so what the shared machine does meanwhile falls on both
 * alike): events/s and the server's CPU per event, each run and at the median, and the
 * ratio (goal ≥ 0.95). `--rounds 0` (or `--accuracy-only`) skips it.
 */
export async function throughApi(argv: string[], loghubDir?: string, accuracyOnly = false): Promise<void> {
  const batch = flag(argv, 'batch', 500);
  const settle = countFlag(argv, 'settle', 35);
  const systems = readLoghubSystems(loghubDir);
  if (systems.length === 0) {
    console.log('(no Loghub systems found: pass --loghub <dir> with the *_structured_corrected.csv files)');
    return;
  }
  await accuracyThroughApi(systems, batch, settle);
  const rounds = accuracyOnly ? 0 : countFlag(argv, 'rounds', 10);
  if (rounds > 0)
    await miningCostThroughApi(systems, {
      batch,
      rounds,
      events: flag(argv, 'events', 100_000),
      clients: flag(argv, 'clients', 4),
    });
}

interface Read {
  /** Each message's `pattern_id` as stored, in file order. */
  ids: string[];
  /** Messages read back that differ from the one sent, ends trimmed (a pipeline rewrote it, or lines moved). */
  mismatched: number;
}

const headers = (server: BenchServer) => ({
  authorization: `token ${server.token}`,
  'content-type': 'application/json',
});

/** `POST /api/query`, polled past the server's sync window until it is SUCCESS. */
async function query<T>(server: BenchServer, type: string, params: Record<string, unknown>): Promise<T> {
  let res = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: headers(server),
    body: JSON.stringify({ type, params }),
  });
  let json = (await res.json()) as { status?: string; query_id?: string; results?: T };
  while (res.status === 202 && (json.status === 'PENDING' || json.status === 'IN_PROGRESS')) {
    await new Promise((ok) => setTimeout(ok, 50));
    res = await fetch(`${server.url}/api/query/${json.query_id}`, { headers: headers(server) });
    json = (await res.json()) as typeof json;
  }
  if (!res.ok || json.status !== 'SUCCESS' || json.results === undefined)
    throw new Error(`${type}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json.results;
}

/** A system's records as a shipper sends them: one a line, `ts` a millisecond apart from `startMs`. */
const recordsOf = (sys: LoghubSystem, app: string, startMs: number) =>
  sys.messages.map((message, i) => ({ message, app, host: 'loghub', ts: startMs + i }));

/** Sends records in `batch`-line NDJSON requests, one after another (a shipper keeps their order). */
async function send(server: BenchServer, records: Array<Record<string, unknown>>, batch: number) {
  for (let at = 0; at < records.length; at += batch) {
    const res = await fetch(`${server.url}/api/ingest`, {
      method: 'POST',
      headers: { ...headers(server), 'content-type': 'application/x-ndjson' },
      body: ndjson(records.slice(at, at + batch)),
    });
    const json = (await res.json()) as { accepted?: number; rejected?: number };
    const n = Math.min(batch, records.length - at);
    if (!res.ok || json.accepted !== n)
      throw new Error(`ingest answered ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
  }
}

/** The app's events in file order (by `ts`), a page of 10,000 at a time. */
async function readBack(server: BenchServer, sys: LoghubSystem, app: string, startMs: number): Promise<Read> {
  const ids: string[] = [];
  let mismatched = 0;
  const time_range = {
    ts_from: Math.floor(startMs / 1000),
    ts_to: Math.ceil((startMs + sys.messages.length) / 1000) + 1,
  };
  for (let page = 1; ; page++) {
    const r = await query<{ total: number; events: Array<{ message?: string; pattern_id?: string }> }>(
      server,
      'Search',
      { time_range, filter: [['app', 'eq', app]], sort: ['ts'], page, page_size: 10_000 },
    );
    for (const e of r.events) {
      // Ingest trims a message's ends (HealthApp's lines start with a space).
      if (e.message !== sys.messages[ids.length]?.trim()) mismatched += 1;
      ids.push(e.pattern_id ?? '(none)');
    }
    if (ids.length >= r.total || r.events.length === 0) break;
  }
  if (ids.length !== sys.messages.length)
    throw new Error(`${app}: ${ids.length} events read back of ${sys.messages.length} sent`);
  return { ids, mismatched };
}

/** Each pattern's template text through `GET /api/patterns/{id}` (none when it answers 404). */
async function templatesOf(server: BenchServer, ids: Iterable<string>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const id of new Set(ids)) {
    const res = await fetch(`${server.url}/api/patterns/${encodeURIComponent(id)}`, {
      headers: headers(server),
    });
    if (res.status === 404) continue;
    if (!res.ok) throw new Error(`GET /api/patterns/${id}: ${res.status} ${await res.text()}`);
    out.set(id, ((await res.json()) as { template: string }).template);
  }
  return out;
}

/**
 * Whether two groupings of the same messages are one: each group of one is exactly a
 * group of the other. Answers how many messages lie in groups that differ.
 */
function disagreement(a: readonly string[], b: readonly string[]): number {
  const aToB = new Map<string, Set<string>>();
  const bToA = new Map<string, Set<string>>();
  a.forEach((x, i) => {
    const y = b[i] as string;
    aToB.set(x, (aToB.get(x) ?? new Set()).add(y));
    bToA.set(y, (bToA.get(y) ?? new Set()).add(x));
  });
  let n = 0;
  a.forEach((x, i) => {
    if ((aToB.get(x)?.size ?? 0) > 1 || (bToA.get(b[i] as string)?.size ?? 0) > 1) n += 1;
  });
  return n;
}

interface Scored {
  ga: number;
  fga: number;
  fta: number;
  pa: number;
  groups: number;
  trueGroups: number;
}

function score(
  sys: LoghubSystem,
  predicted: string[],
  templateOf: (id: string) => string | undefined,
): Scored {
  const r = groupingAccuracy(sys.labels, predicted);
  const t = templateAccuracy(sys, predicted, templateOf);
  return { ...r, ...t };
}

function printTable(title: string, systems: LoghubSystem[], rows: Scored[], extra: string[]) {
  console.log('');
  console.log(title);
  console.log('system      GA      FGA     FTA     PA      groups (true)   Drain GA  in-process');
  const sum = { ga: 0, fga: 0, fta: 0, pa: 0 };
  let atOrAbove = 0;
  rows.forEach((r, k) => {
    const name = (systems[k] as LoghubSystem).name;
    const drain = DRAIN_GA[name] ?? 0;
    if (r.ga >= drain) atOrAbove += 1;
    sum.ga += r.ga;
    sum.fga += r.fga;
    sum.fta += r.fta;
    sum.pa += r.pa;
    console.log(
      `${name.padEnd(10)}  ${[r.ga, r.fga, r.fta, r.pa].map((x) => fmt(x, 3).padEnd(6)).join('  ')}  ${`${r.groups} (${r.trueGroups})`.padEnd(14)}  ${`${fmt(drain, 3)}${r.ga >= drain ? '' : ' ✗'}`.padEnd(8)}  ${extra[k]}`,
    );
  });
  const n = rows.length;
  const drainAvg = systems.reduce((s, x) => s + (DRAIN_GA[x.name] ?? 0), 0) / n;
  console.log(
    `average     ${[sum.ga, sum.fga, sum.fta, sum.pa].map((x) => fmt(x / n, 3).padEnd(6)).join('  ')}  ${''.padEnd(14)}  ${fmt(drainAvg, 3)}`,
  );
  console.log(`${atOrAbove} of ${n} systems at or above Drain`);
}

/**
 * The ten systems through one fresh server's API, scored at once and after `settle`
 * seconds, each beside the in-process mining of the same messages.
 */
async function accuracyThroughApi(systems: LoghubSystem[], batch: number, settle: number): Promise<void> {
  const run = Date.now().toString(36);
  const server = await startServer();
  try {
    const startOf = new Map<string, number>();
    // Each system's lines a millisecond apart, the systems a minute apart, within the last hour.
    const base = Date.now() - 3_000_000;
    const t0 = performance.now();
    for (const [k, sys] of systems.entries()) {
      const app = `loghub-${sys.name}-${run}`;
      startOf.set(sys.name, base + k * 60_000);
      await send(server, recordsOf(sys, app, base + k * 60_000), batch);
      process.stderr.write(`\r  through the API: ${sys.name} sent  `);
    }
    const sent = systems.reduce((s, x) => s + x.messages.length, 0);
    const seconds = (performance.now() - t0) / 1000;
    process.stderr.write('\n');
    console.log('');
    console.log(
      `${fmt(sent)} Loghub lines through POST /api/ingest (${batch} a request, in file order) in ${fmt(seconds, 1)} s; pattern_id read back by Search, templates by GET /api/patterns/{id}`,
    );
    const inProcess = systems.map((sys) => mineAsIngest(sys));
    const readAll = async () => {
      const out: Read[] = [];
      for (const sys of systems) {
        const app = `loghub-${sys.name}-${run}`;
        out.push(await readBack(server, sys, app, startOf.get(sys.name) as number));
      }
      return out;
    };
    const report = async (title: string, reads: Read[]) => {
      const rows: Scored[] = [];
      const extra: string[] = [];
      let differ = 0;
      for (const [k, sys] of systems.entries()) {
        const read = reads[k] as Read;
        const templates = await templatesOf(server, read.ids);
        rows.push(score(sys, read.ids, (id) => templates.get(id)));
        const mine = inProcess[k] as ReturnType<typeof mineAsIngest>;
        const here = score(sys, mine.predicted, mine.templateOf);
        const apart = disagreement(read.ids, mine.predicted);
        const missing = new Set(read.ids).size - templates.size;
        differ += apart;
        const notes = [
          apart === 0 ? 'same groups' : `${fmt(apart)} lines grouped otherwise`,
          ...(here.ga !== (rows[k] as Scored).ga ? [`GA ${fmt(here.ga, 3)}`] : []),
          ...(here.fta !== (rows[k] as Scored).fta ? [`FTA ${fmt(here.fta, 3)}`] : []),
          ...(missing ? [`${missing} ids 404`] : []),
          ...(read.mismatched ? [`${read.mismatched} messages differ`] : []),
        ];
        extra.push(notes.join(', '));
      }
      printTable(title, systems, rows, extra);
      console.log(
        differ === 0
          ? 'through the API and in the process: the same groups for every line of every system'
          : `through the API and in the process: ${fmt(differ)} of ${fmt(sent)} lines grouped otherwise (in the process merged ids are resolved at once; stored events follow a merge 2 s and 30 s after it)`,
      );
      return rows;
    };
    const atOnce = await readAll();
    await report('the ten systems through the API, read as soon as ingest acknowledged', atOnce);
    if (settle > 0) {
      process.stderr.write(`  waiting ${settle} s for merged templates' events to be rewritten\n`);
      await new Promise((ok) => setTimeout(ok, settle * 1000));
      const later = await readAll();
      const moved = later.reduce(
        (n, r, k) => n + r.ids.filter((id, i) => id !== (atOnce[k] as Read).ids[i]).length,
        0,
      );
      console.log('');
      console.log(`${fmt(moved)} events' pattern_id changed in the ${settle} s after ingest`);
      await report(`the same, read ${settle} s later`, later);
    }
  } finally {
    await server.stop();
    rmSync(server.dataDir, { recursive: true, force: true });
  }
}

/** Events/s of one timed run, and the server's CPU per event (µs: all threads, the main thread). */
interface CostRun {
  rate: number;
  cpuAll: number;
  cpuMain: number;
}

/**
 * Ingest with mining and without, from outside: two fresh servers, the same NDJSON load,
 * runs taking turns.
 */
async function miningCostThroughApi(
  systems: LoghubSystem[],
  o: { batch: number; rounds: number; events: number; clients: number },
): Promise<void> {
  const base = Date.now() - 3_000_000;
  const records = systems.flatMap((sys) =>
    sys.messages.map((message, i) => ({ message, app: `loghub-${sys.name}`, host: 'loghub', ts: base + i })),
  );
  const bodies: string[] = [];
  for (let at = 0; at < records.length; at += o.batch) bodies.push(ndjson(records.slice(at, at + o.batch)));
  const mined = await startServer();
  const unmined = await startServer({ LOGSCOPE_PATTERN_MINING: 'false' });
  const servers = [
    { label: 'mining on ', server: mined, runs: [] as CostRun[] },
    { label: 'mining off', server: unmined, runs: [] as CostRun[] },
  ];
  try {
    console.log('');
    console.log(
      `ingest with mining and without, through the API: ${fmt(o.events)} events a run (the ten systems' lines, ${o.batch} a request, ${o.clients} clients), ${o.rounds} runs each taking turns, after one warm-up pass`,
    );
    for (const s of servers)
      await ingestThroughApi(s.server, bodies, records.length, o.batch, o.clients, 'warm-up');
    for (let round = 0; round < o.rounds; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const s of order) {
        const cpu0 = cpuMs(s.server.pid);
        const r = await ingestThroughApi(s.server, bodies, o.events, o.batch, o.clients, s.label.trim());
        const cpu1 = cpuMs(s.server.pid);
        s.runs.push({
          rate: r.accepted / r.seconds,
          cpuAll: ((cpu1.all - cpu0.all) * 1000) / r.accepted,
          cpuMain: ((cpu1.main - cpu0.main) * 1000) / r.accepted,
        });
      }
    }
  } finally {
    await Promise.all([mined.stop(), unmined.stop()]);
    for (const s of [mined, unmined]) rmSync(s.dataDir, { recursive: true, force: true });
  }
  const median = (xs: number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  for (const s of servers)
    console.log(
      `${s.label}: ${fmt(median(s.runs.map((r) => r.rate)))} events/s at the median (runs: ${s.runs.map((r) => fmt(r.rate)).join(', ')}); CPU ${fmt(median(s.runs.map((r) => r.cpuAll)), 1)} µs an event in all threads, ${fmt(median(s.runs.map((r) => r.cpuMain)), 1)} on the main thread`,
    );
  const [on, off] = servers.map((s) => s.runs);
  const ratios = (on ?? []).map((r, k) => r.rate / ((off ?? [])[k]?.rate ?? Number.NaN));
  const mainOn = median((on ?? []).map((r) => r.cpuMain));
  const mainOff = median((off ?? []).map((r) => r.cpuMain));
  const allOn = median((on ?? []).map((r) => r.cpuAll));
  const allOff = median((off ?? []).map((r) => r.cpuAll));
  console.log(
    `with mining / without: ${fmt(median((on ?? []).map((r) => r.rate)) / median((off ?? []).map((r) => r.rate)), 3)} at the medians (goal ≥ 0.95); per round ${ratios.map((x) => fmt(x, 2)).join(', ')}`,
  );
  console.log(
    `by the server's CPU, steadier than the rate on a shared machine: without / with ${fmt(allOff / allOn, 3)} (all threads), ${fmt(mainOff / mainOn, 3)} (the main thread); mining ${fmt(mainOn - mainOff, 1)} µs an event on the main thread`,
  );
}
