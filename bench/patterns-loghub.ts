import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { normaliseRecord } from '../src/ingest/normalise.js';
import { groupingAccuracy } from '../src/ingest/patterns/grouping-accuracy.js';
import { knownValues, TemplateMiner } from '../src/ingest/patterns/template-miner.js';
import { builtinPipelineSet } from '../src/ingest/pipelines/builtin-pipelines.js';
import { parseLoghubCsv } from '../test/helpers/loghub.js';
import { fmt } from './lib.js';

/**
 * Drain's published grouping accuracy on the sixteen Loghub-2k systems (Zhu et al.,
 * ICSE-SEIP 2019, table IV); average 0.865. Ten are in ../shared/data/loghub.
 */
export const DRAIN_GA: Record<string, number> = {
  HDFS: 0.998,
  Hadoop: 0.948,
  Spark: 0.92,
  Zookeeper: 0.967,
  OpenStack: 0.733,
  BGL: 0.963,
  HPC: 0.887,
  Thunderbird: 0.955,
  Windows: 0.997,
  Linux: 0.69,
  Mac: 0.787,
  Android: 0.911,
  HealthApp: 0.78,
  Apache: 1.0,
  OpenSSH: 0.788,
  Proxifier: 0.527,
};

export const LOGHUB_SYSTEMS = [
  'HDFS',
  'Hadoop',
  'Spark',
  'BGL',
  'Windows',
  'Linux',
  'Mac',
  'HealthApp',
  'Apache',
  'OpenSSH',
] as const;

export interface LoghubSystem {
  name: string;
  /** The `Content` column: the message as a shipper that parsed the header sends it. */
  messages: string[];
  /** The corrected labels (`EventId`) and templates (`EventTemplate`), one a line. */
  labels: string[];
  templates: string[];
}

/** The ten systems' corrected labels from `dir` (default ../shared/data/loghub), or none when absent. */
export function readLoghubSystems(dir?: string): LoghubSystem[] {
  const root = dir ?? path.join(import.meta.dirname, '..', '..', 'shared', 'data', 'loghub');
  const systems: LoghubSystem[] = [];
  for (const name of LOGHUB_SYSTEMS) {
    const file = path.join(root, `${name}_2k.log_structured_corrected.csv`);
    if (!existsSync(file)) continue;
    const rows = parseLoghubCsv(readFileSync(file, 'utf8')).filter((r) => r.LineId !== '');
    systems.push({
      name,
      messages: rows.map((r) => r.Content ?? ''),
      labels: rows.map((r) => r.EventId ?? ''),
      templates: rows.map((r) => r.EventTemplate ?? ''),
    });
  }
  return systems;
}

/**
 * Template-level accuracy (Khan et al., ICSE 2022, "PTA"/"RTA" as one F1): a predicted
 * group is right when it equals a true group AND its template, the tokens the miner holds
 * at the end, reads as the true template (`<*>` runs counted as one); PA (Dai et al.) is
 * the share of messages whose template is right, whatever the grouping.
 */
export function templateAccuracy(
  sys: LoghubSystem,
  predicted: readonly string[],
  templateOf: (id: string) => string | undefined,
): { fta: number; pa: number } {
  const canonical = (t: string) =>
    t
      .replace(/<\*>(?:\s*<\*>)*/g, '<*>')
      .replace(/\s+/g, ' ')
      .trim();
  const byPredicted = new Map<string, number[]>();
  predicted.forEach((p, i) => {
    const list = byPredicted.get(p);
    if (list) list.push(i);
    else byPredicted.set(p, [i]);
  });
  const trueSize = new Map<string, number>();
  for (const l of sys.labels) trueSize.set(l, (trueSize.get(l) ?? 0) + 1);
  let right = 0;
  let pa = 0;
  for (const [id, list] of byPredicted) {
    const t = canonical(templateOf(id) ?? '');
    const first = list[0] as number;
    const label = sys.labels[first] as string;
    for (const i of list) if (canonical(sys.templates[i] as string) === t) pa += 1;
    if (
      trueSize.get(label) === list.length &&
      list.every((i) => sys.labels[i] === label) &&
      canonical(sys.templates[first] as string) === t
    )
      right += 1;
  }
  const precision = byPredicted.size ? right / byPredicted.size : 0;
  const recall = trueSize.size ? right / trueSize.size : 0;
  return {
    fta: precision + recall ? (2 * precision * recall) / (precision + recall) : 0,
    pa: pa / (sys.labels.length || 1),
  };
}

/**
 * One system's messages mined in the process as ingest mines them: each a record `{message,
 * app, host}` (app `loghub-<system>`), normalised, through the built-in pipelines, then
 * matched with the values they extracted; each message's template id (a merged template's
 * resolved to the one that took it in, as stored events follow a merge) and the templates'
 * text at the end.
 */
export function mineAsIngest(sys: LoghubSystem): {
  predicted: string[];
  templateOf: (id: string) => string | undefined;
} {
  const pipelines = builtinPipelineSet();
  const ctx = { receivedAt: Date.now(), intake: 'bench', newId: () => 'bench' };
  // Stored events follow a merge of templates (features/patterns): their ids are resolved so.
  const mergedInto = new Map<string, string>();
  const miner = new TemplateMiner({
    onMerge: (into, merged) => {
      for (const m of merged) mergedInto.set(m.id, into.id);
    },
  });
  const resolve = (id: string): string => {
    let at = id;
    for (let next = mergedInto.get(at); next !== undefined; next = mergedInto.get(at)) at = next;
    return at;
  };
  const app = `loghub-${sys.name}`;
  const mined = sys.messages.map((message) => {
    const normalised = normaliseRecord({ message, app, host: 'bench' }, ctx);
    if (!normalised.ok) throw new Error(normalised.detail);
    const [e] = pipelines.process([normalised.event]);
    if (!e) return '(dropped)';
    return miner.match(e.app ?? '', e.message ?? '', knownValues(e)).id;
  });
  return { predicted: mined.map(resolve), templateOf: (id) => miner.get(id)?.tokens.join(' ') };
}

/**
 * The ten systems as ingest mines them: each message a record `{message, app, host}`
 * (app `loghub-<system>`), normalised and run through the built-in pipelines, then mined
 * by the miner ingest uses with the values pipelines extracted as variables, as
 * PatternsService.assign does. Prints GA, FGA, FTA and PA beside Drain's published GA.
 */
export function loghubAccuracy(dir?: string): { ga: number; fga: number; systems: number } {
  const systems = readLoghubSystems(dir);
  if (systems.length === 0) {
    console.log('(no Loghub systems found: pass --loghub <dir> with the *_structured_corrected.csv files)');
    return { ga: 0, fga: 0, systems: 0 };
  }
  console.log('');
  console.log('grouping accuracy on the Loghub-2k systems as ingest mines them (corrected labels)');
  console.log('system      GA      FGA     FTA     PA      groups (true)   Drain GA');
  let ga = 0;
  let fga = 0;
  let fta = 0;
  let pa = 0;
  let atOrAbove = 0;
  for (const sys of systems) {
    const { predicted, templateOf } = mineAsIngest(sys);
    const r = groupingAccuracy(sys.labels, predicted);
    const t = templateAccuracy(sys, predicted, templateOf);
    const drain = DRAIN_GA[sys.name] ?? 0;
    if (r.ga >= drain) atOrAbove += 1;
    ga += r.ga;
    fga += r.fga;
    fta += t.fta;
    pa += t.pa;
    console.log(
      `${sys.name.padEnd(10)}  ${[r.ga, r.fga, t.fta, t.pa].map((x) => fmt(x, 3).padEnd(6)).join('  ')}  ${`${r.groups} (${r.trueGroups})`.padEnd(14)}  ${fmt(drain, 3)}${r.ga >= drain ? '' : ' ✗'}`,
    );
  }
  const n = systems.length;
  const drainAvg = systems.reduce((s, x) => s + (DRAIN_GA[x.name] ?? 0), 0) / n;
  console.log(
    `average     ${[ga, fga, fta, pa].map((x) => fmt(x / n, 3).padEnd(6)).join('  ')}  ${''.padEnd(14)}  ${fmt(drainAvg, 3)}`,
  );
  console.log(
    `${atOrAbove} of ${n} systems at or above Drain (goals: every one; GA ≥ 0.95, FGA ≥ 0.85 on average)`,
  );
  return { ga: ga / n, fga: fga / n, systems: n };
}
