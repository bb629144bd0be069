import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { demoGenerator } from '../src/cli/demo-generator.js';
import type { NormalisedEvent } from '../src/core/event.js';
import { newUlid } from '../src/core/ids.js';
import { DuckDbEventStore } from '../src/event-store/duckdb/duckdb-event-store.js';
import { normaliseRecord } from '../src/ingest/normalise.js';
import { flag, fmt, percentile, startServer } from './lib.js';

/**
 * Ingest throughput: N events as HTTP NDJSON in 1,000-event requests from 4 concurrent
 * clients, beside the raw DuckDB DataChunk appender loading the same events.
 * Flags: --events N (default 10,000,000), --clients 4, --batch 1000, --pool 500 (distinct
 * request bodies generated up front and sent in turn, so client-side JSON work does not
 * compete with the server for the two cores).
 */
export async function main(argv: string[]) {
  const total = flag(argv, 'events', 10_000_000);
  const clients = flag(argv, 'clients', 4);
  const batch = flag(argv, 'batch', 1000);
  const poolSize = Math.min(flag(argv, 'pool', 500), Math.ceil(total / batch));
  console.log(
    `ingest bench: ${fmt(total)} events, ${clients} clients, ${batch}/request, ${poolSize} distinct bodies`,
  );

  const gen = demoGenerator(42);
  const start = Date.now() - 86_400_000;
  const poolRecords: Array<Array<Record<string, unknown>>> = [];
  for (let b = 0; b < poolSize; b++) {
    poolRecords.push(
      Array.from({ length: batch }, (_, i) =>
        gen.next(start + Math.floor(((b * batch + i) / (poolSize * batch)) * 86_400_000)),
      ),
    );
  }
  const bodies = poolRecords.map((recs) => `${recs.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const avgBody = bodies.reduce((s, b) => s + b.length, 0) / bodies.length;
  console.log(`average record: ${fmt(avgBody / batch)} bytes of JSON`);

  // --- end to end through the API
  const server = await startServer();
  const requests = Math.ceil(total / batch);
  let next = 0;
  let accepted = 0;
  const latencies: number[] = [];
  const t0 = performance.now();
  const client = async () => {
    for (;;) {
      const r = next++;
      if (r >= requests) return;
      const body = bodies[r % bodies.length] as string;
      const sent = performance.now();
      for (;;) {
        const res = await fetch(`${server.url}/api/ingest`, {
          method: 'POST',
          headers: { authorization: `token ${server.token}`, 'content-type': 'application/x-ndjson' },
          body,
        });
        const json = (await res.json()) as { accepted?: number };
        if (res.status === 503) {
          await new Promise((ok) => setTimeout(ok, 50));
          continue;
        }
        if (!res.ok) throw new Error(`ingest answered ${res.status}: ${JSON.stringify(json)}`);
        accepted += json.accepted ?? 0;
        break;
      }
      latencies.push(performance.now() - sent);
      if (r % 500 === 0) process.stderr.write(`\r  api: ${fmt(accepted)} events`);
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const apiSeconds = (performance.now() - t0) / 1000;
  process.stderr.write('\n');

  // An acknowledged event is queryable at once: read the last one back by id.
  const peakRss = server.peakRss();
  await server.stop();
  const files = readdirSync(server.dataDir).filter((f) => f.startsWith('events.duckdb'));
  const bytesOnDisk = files.reduce((s, f) => s + statSync(path.join(server.dataDir, f)).size, 0);
  rmSync(server.dataDir, { recursive: true, force: true });

  // --- the raw engine: the same events, normalised up front, appended in 20,000-row batches
  const rawDir = mkdtempSync(path.join(tmpdir(), 'logscope-bench-raw-'));
  const store = await DuckDbEventStore.open({
    dataDir: rawDir,
    memoryLimit: '512MB',
    checkpointThreshold: '256MB',
  });
  const receivedAt = Date.now();
  const ctx = { receivedAt, source: 'bench', newId: () => newUlid(receivedAt) };
  const poolEvents: NormalisedEvent[] = poolRecords.flat().map((r) => {
    const n = normaliseRecord(r, ctx);
    if (!n.ok) throw new Error(n.detail);
    return n.event;
  });
  const rawBatch = 20_000;
  const t1 = performance.now();
  for (let done = 0; done < total; ) {
    const n = Math.min(rawBatch, total - done);
    const from = done % poolEvents.length;
    const slice = poolEvents.slice(from, from + n);
    await store.append(slice);
    done += slice.length;
    if ((done / rawBatch) % 25 === 0) process.stderr.write(`\r  raw: ${fmt(done)} events`);
  }
  const rawSeconds = (performance.now() - t1) / 1000;
  process.stderr.write('\n');
  await store.close();
  const rawBytes = readdirSync(rawDir)
    .filter((f) => f.startsWith('events.duckdb'))
    .reduce((s, f) => s + statSync(path.join(rawDir, f)).size, 0);
  rmSync(rawDir, { recursive: true, force: true });

  latencies.sort((a, b) => a - b);
  const apiRate = accepted / apiSeconds;
  const rawRate = total / rawSeconds;
  console.log('');
  console.log(
    `API (HTTP NDJSON, end to end): ${fmt(apiRate)} events/s (${fmt(accepted)} in ${fmt(apiSeconds, 1)} s)`,
  );
  console.log(
    `raw DuckDB appender:           ${fmt(rawRate)} events/s (${fmt(total)} in ${fmt(rawSeconds, 1)} s)`,
  );
  console.log(`ratio API / raw:               ${fmt(apiRate / rawRate, 2)}`);
  console.log(
    `ack latency:                   p50 ${fmt(percentile(latencies, 50))} ms, p99 ${fmt(percentile(latencies, 99))} ms`,
  );
  console.log(
    `bytes per event on disk:       ${fmt(bytesOnDisk / accepted, 1)} (raw store: ${fmt(rawBytes / total, 1)})`,
  );
  console.log(`server peak RSS:               ${fmt(peakRss / 1048576)} MiB`);
}
