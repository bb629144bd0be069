import v8 from 'node:v8';
import vm from 'node:vm';
import { normaliseRecord } from '../src/ingest/normalise.js';
import { groupingAccuracy } from '../src/ingest/patterns/grouping-accuracy.js';
import { knownValues, TemplateMiner, tokenize } from '../src/ingest/patterns/template-miner.js';
import { builtinPipelineSet } from '../src/ingest/pipelines/builtin-pipelines.js';
import { readLoghubCsv, readLoghubLines } from '../test/helpers/loghub.js';
import { flag, fmt, percentile, textFlag } from './lib.js';
import { throughApi } from './patterns-api.js';
import { loghubAccuracy, readLoghubSystems } from './patterns-loghub.js';

/** Drain's published grouping accuracy on these Loghub-2k datasets (Zhu et al., ICSE-SEIP 2019). */
const DRAIN: Record<string, number> = { OpenSSH: 0.788, Linux: 0.69, Apache: 1.0 };
const DATASETS = ['OpenSSH', 'Linux', 'Apache'];

/**
 * Patterns (docs/api/patterns.md): the template miner's grouping accuracy (GA, and FGA) on the Loghub-2k
 * samples in test/fixtures/loghub (message = the `Content` column), beside Drain's
 * published figures, and again as ingest makes templates (each raw log line as a record's
 * message, through the built-in pipelines, mined per app with the values the pipelines
 * extracted as variables); its cost per message (median of `--runs` passes over the 6,000
 * messages, a new miner each pass, so templates are made as well as matched) beside
 * splitting the messages into tokens alone (the least any miner does); and the memory of
 * `--templates` templates (100,000). Then the ten Loghub-2k systems of `--loghub <dir>`
 * (../shared/data/loghub) as ingest mines them, GA, FGA and template accuracy beside
 * Drain's published GA (`--accuracy-only` stops there); their messages join the cost's.
 * `--through-api` then measures the ten systems from outside, through a server's API
 * (bench/patterns-api.ts; with `--accuracy-only`, their accuracy alone).
 */
export async function main(argv: string[]) {
  const runs = flag(argv, 'runs', 30);
  const templateCount = flag(argv, 'templates', 100_000);
  const loghubDir = textFlag(argv, 'loghub');
  const outside = argv.includes('--through-api');
  if (argv.includes('--accuracy-only')) {
    loghubAccuracy(loghubDir);
    if (outside) await throughApi(argv, loghubDir, true);
    return;
  }
  const sets = DATASETS.map((name) => ({ name, rows: readLoghubCsv(`${name}_2k.log_structured.csv`) }));

  console.log('');
  console.log('grouping accuracy on Loghub-2k (message = Content)');
  console.log('dataset     GA      FGA     groups (true)   Drain GA');
  let gaSum = 0;
  let fgaSum = 0;
  for (const { name, rows } of sets) {
    const miner = new TemplateMiner();
    const predicted = rows.map((r) => miner.match(name, r.Content ?? '').id);
    const r = groupingAccuracy(
      rows.map((x) => x.EventId ?? ''),
      predicted,
    );
    gaSum += r.ga;
    fgaSum += r.fga;
    console.log(
      `${name.padEnd(10)}  ${fmt(r.ga, 3).padEnd(6)}  ${fmt(r.fga, 3).padEnd(6)}  ${`${r.groups} (${r.trueGroups})`.padEnd(14)}  ${fmt(DRAIN[name] ?? 0, 3)}`,
    );
  }
  console.log(
    `average     ${fmt(gaSum / sets.length, 3).padEnd(6)}  ${fmt(fgaSum / sets.length, 3).padEnd(6)}  (goals: GA ≥ 0.95, FGA ≥ 0.85)`,
  );

  // --- as ingest mines: raw lines, built-in pipelines (app, host, time, extracted values), per app
  const pipelines = builtinPipelineSet();
  const ctx = { receivedAt: Date.now(), intake: 'bench', newId: () => 'bench' };
  console.log('');
  console.log('the same lines as ingest mines them (raw line → built-in pipelines → templates per app)');
  console.log('dataset     GA      FGA     groups (true)   apps');
  for (const { name, rows } of sets) {
    const lines = readLoghubLines(`${name}_2k.log.txt`).filter((l) => l.trim() !== '');
    if (lines.length !== rows.length)
      throw new Error(`${name}: ${lines.length} lines, ${rows.length} labels`);
    const miner = new TemplateMiner();
    const apps = new Set<string>();
    const predicted = lines.map((line) => {
      const normalised = normaliseRecord({ message: line }, ctx);
      if (!normalised.ok) throw new Error(normalised.detail);
      const [e] = pipelines.process([normalised.event]);
      if (!e) return '(dropped)';
      apps.add(e.app ?? '');
      return miner.match(e.app ?? '', e.message ?? '', knownValues(e)).id;
    });
    const r = groupingAccuracy(
      rows.map((x) => x.EventId ?? ''),
      predicted,
    );
    console.log(
      `${name.padEnd(10)}  ${fmt(r.ga, 3).padEnd(6)}  ${fmt(r.fga, 3).padEnd(6)}  ${`${r.groups} (${r.trueGroups})`.padEnd(14)}  ${apps.size}`,
    );
  }
  console.log(
    '(the labels group by text alone: one text under two apps, `su` and `sshd`, is one true group and two templates)',
  );

  const ten = loghubAccuracy(loghubDir);

  // --- cost per message: mining, and splitting alone (the fixtures' messages and the ten systems')
  const messages = [
    ...sets.flatMap(({ name, rows }) => rows.map((r) => ({ app: name, text: r.Content ?? '' }))),
    ...readLoghubSystems(loghubDir).flatMap((s) => s.messages.map((text) => ({ app: s.name, text }))),
  ];
  const time = (pass: () => void) => {
    const per: number[] = [];
    for (let i = 0; i < runs + 3; i++) {
      const t0 = process.hrtime.bigint();
      pass();
      if (i >= 3) per.push(Number(process.hrtime.bigint() - t0) / 1000 / messages.length);
    }
    return percentile(
      per.sort((a, b) => a - b),
      50,
    );
  };
  let sink = 0;
  const mining = time(() => {
    const miner = new TemplateMiner();
    for (const m of messages) sink += miner.match(m.app, m.text).count;
  });
  const splitting = time(() => {
    for (const m of messages) sink += m.text.split(/\s+/).length;
  });
  const tokenizing = time(() => {
    for (const m of messages) sink += tokenize(m.text).length;
  });
  console.log('');
  console.log(`cost per message (µs, median of ${runs} passes over ${fmt(messages.length)} messages)`);
  console.log(`mining (tokens masked, matched, templates made)  ${fmt(mining, 2)}  (goal ≤ 5)`);
  console.log(`of which masking the tokens                      ${fmt(tokenizing, 2)}`);
  console.log(`splitting into tokens alone (the least work)     ${fmt(splitting, 2)}`);
  console.log(`mining / splitting: ${fmt(mining / splitting, 1)}×`);

  // --- memory of many templates (one app; distinct first words make distinct templates)
  // A full collection before each reading, so the heap holds what is reachable and no
  // garbage (without one the figure moved 58–70 MiB from run to run).
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  gc();
  const before = process.memoryUsage().heapUsed;
  const miner = new TemplateMiner({ maxTemplatesPerApp: templateCount });
  // Letters only: a word with digits would be masked, and the messages would share templates.
  const word = (n: number) => {
    let w = '';
    for (let k = n + 1; k > 0; k = Math.floor((k - 1) / 26)) w = String.fromCharCode(97 + ((k - 1) % 26)) + w;
    return w;
  };
  for (let i = 0; i < templateCount; i++)
    miner.match('app', `${word(i)} handler finished ${word(i * 7919)} step for job ${i} in ${i % 1000} ms`);
  gc();
  const bytes = process.memoryUsage().heapUsed - before;
  console.log('');
  console.log(
    `memory: ${fmt(miner.size)} templates hold ${fmt(bytes / 2 ** 20, 1)} MiB of heap (goal ≤ 64 MiB for 100,000)`,
  );
  console.log('');
  console.log(
    'Ingest with and without mining: `--through-api` (the Loghub lines), `npm run bench -- ingest` (demo events).',
  );
  if (outside) await throughApi(argv, loghubDir);
  if (sink < 0 || ten.systems < 0) console.log(sink);
}
