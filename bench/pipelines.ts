import { readFileSync } from 'node:fs';
import type { NormalisedEvent } from '../src/core/event.js';
import { normaliseRecord } from '../src/ingest/normalise.js';
import { parseSyslog } from '../src/ingest/parsers/syslog.js';
import { BUILTIN_PIPELINES, builtinPipelineSet } from '../src/ingest/pipelines/builtin-pipelines.js';
import { compileTrustedPattern } from '../src/ingest/pipelines/grok.js';
import { compilePipeline, PipelineSet } from '../src/ingest/pipelines/pipeline.js';
import { countFlag, fmt } from './lib.js';

/**
 * Cost of the built-in pipelines per event, in the process (no I/O), beside what intake
 * does anyway and beside the raw regex engine:
 * - events no built-in matches: JSON app logs with an app (`payments`, `api`), and
 *   messages without an app that look like nothing the built-ins read;
 * - events they do match: Loghub's OpenSSH lines (syslog-parsed) and Apache access lines.
 * "normalise" is normaliseRecord on the same records (work every event pays at intake);
 * "raw regex" runs the sshd pipeline's patterns straight on the messages, first match
 * wins, as JavaScript RegExp: the pipelines' own overhead is the difference.
 * Flags: --events N (default 200,000), --rounds 5.
 */
export async function main(argv: string[]): Promise<void> {
  const n = countFlag(argv, 'events', 200_000);
  const rounds = countFlag(argv, 'rounds', 5);
  const set = builtinPipelineSet();
  const ctx = { receivedAt: Date.now(), intake: 'bench', newId: () => 'id' };
  const normalise = (records: Record<string, unknown>[]): NormalisedEvent[] =>
    records.map((r) => {
      const out = normaliseRecord(r, ctx);
      if (!out.ok) throw new Error(out.detail);
      return out.event;
    });

  const appLogs = Array.from({ length: n }, (_, i) => ({
    app: i % 2 ? 'payments' : 'api',
    host: `node-${i % 7}`,
    level: 'info',
    message: `order ${i} settled in ${i % 300} ms for customer ${i % 1000}`,
    'trace.id': `t${i}`,
  }));
  const bare = Array.from({ length: n }, (_, i) => ({
    message: `worker ${i % 16} finished job ${i} (queue=default, attempts=${i % 3})`,
  }));
  const sshLines = readFileSync(
    new URL('../test/fixtures/loghub/OpenSSH_2k.log.txt', import.meta.url),
    'utf8',
  )
    .replace(/\r/g, '')
    .trim()
    .split('\n');
  const ssh = Array.from(
    { length: n },
    (_, i) => parseSyslog(sshLines[i % sshLines.length] as string) as unknown as Record<string, unknown>,
  );
  const access = Array.from({ length: n }, (_, i) => {
    const ip = `10.${i % 250}.${(i >> 8) % 250}.${i % 200}`;
    return {
      app: 'nginx',
      message: `${ip} - - [10/Oct/2025:13:55:${String(i % 60).padStart(2, '0')} +0000] "GET /p/${i % 97}?q=${i} HTTP/1.1" ${i % 9 ? 200 : 404} ${i % 5000} "-" "Mozilla/5.0"`,
    };
  });

  const sshPatterns = (
    BUILTIN_PIPELINES.find((p) => p.key === 'sshd')!.steps[1] as { grok: { patterns: string[] } }
  ).grok.patterns.map(compileTrustedPattern);

  const time = (work: () => void): number => {
    let best = Number.POSITIVE_INFINITY;
    for (let r = 0; r < rounds; r++) {
      const started = performance.now();
      work();
      best = Math.min(best, performance.now() - started);
    }
    return (best * 1e6) / n; // ns per event
  };

  console.log(
    `pipelines bench: ${fmt(n)} events per set, best of ${rounds} rounds, ${set.pipelines.length} built-ins`,
  );
  console.log('| events | pipelines ns/event | normalise ns/event | pipelines ÷ normalise |');
  console.log('|---|---|---|---|');
  for (const [name, records] of [
    ['JSON app logs (not matched)', appLogs],
    ['bare messages, no app (not matched)', bare],
    ['sshd lines (matched)', ssh],
    ['nginx access lines (matched)', access],
  ] as const) {
    const events = normalise(records as Record<string, unknown>[]);
    const pipelineNs = time(() => {
      set.process(events);
    });
    const normaliseNs = time(() => {
      normalise(records as Record<string, unknown>[]);
    });
    console.log(
      `| ${name} | ${pipelineNs.toFixed(0)} | ${normaliseNs.toFixed(0)} | ${(pipelineNs / normaliseNs).toFixed(2)} |`,
    );
  }
  const sshEvents = normalise(ssh);
  const messages = sshEvents.map((e) => e.message ?? '');
  const rawNs = time(() => {
    for (const m of messages) for (const p of sshPatterns) if (p(m)) break;
  });
  const sshOnly = new PipelineSet([
    compilePipeline(1, BUILTIN_PIPELINES.find((p) => p.key === 'sshd')!, true),
  ]);
  const sshNs = time(() => {
    sshOnly.process(sshEvents);
  });
  console.log(
    `sshd pipeline alone on sshd lines: ${sshNs.toFixed(0)} ns/event; raw regex engine (its patterns, first match) ${rawNs.toFixed(0)} ns/event; ratio ${(sshNs / rawNs).toFixed(2)}`,
  );
  console.log('goal: ≤ 3,000 ns/event for the built-ins on events they do not match');
}
