import { parentPort, workerData } from 'node:worker_threads';
import type { NormalisedEvent, StoredEvent } from '../../core/event.js';
import { ClickHouseEventStore } from '../clickhouse/clickhouse-event-store.js';
import { DuckDbEventStore } from '../duckdb/duckdb-event-store.js';
import { DuckDbRecovery } from '../duckdb/duckdb-recovery.js';
import type { EngineEventStore } from '../event-store.js';
import type { QueryPlan, SearchPlan } from '../query-plan.js';
import {
  eventValues,
  type StoreRequest,
  type StoreResponse,
  toWire,
  type WorkerStoreConfig,
} from './protocol.js';

/**
 * The event-store worker: owns the store (DuckDB or ClickHouse) and answers the main
 * thread's requests (see worker-event-store.ts). Building DuckDB's data chunks, commits and
 * checkpoints, or ClickHouse's insert bodies and requests, statements and decoding their
 * rows all run here, off the main thread's event loop.
 */
const port = parentPort;
if (!port) throw new Error('store-worker.ts runs as a worker thread');

const send = (message: StoreResponse) => port.postMessage(message);

/** Requests that can be stopped: execute and streams, by request id. */
const running = new Map<number, AbortController>();
const streams = new Map<
  number,
  { it: AsyncGenerator<StoredEvent>; abort: AbortController; openedBy: number }
>();
let nextStream = 1;
/** The first parts of a large append, by request id, until its last part arrives. */
const parts = new Map<number, NormalisedEvent[][]>();

function endStream(stream: number): void {
  const s = streams.get(stream);
  if (!s) return;
  streams.delete(stream);
  running.delete(s.openedBy);
}

/** An engine's store as served here: the contract and what the worker's proxy asks beyond it. */
type Store = EngineEventStore;

async function serve(store: Store, req: StoreRequest): Promise<unknown> {
  switch (req.op) {
    case 'appendPart':
      parts.set(req.id, [...(parts.get(req.id) ?? []), req.events as NormalisedEvent[]]);
      return undefined;
    case 'append': {
      const earlier = parts.get(req.id) ?? [];
      parts.delete(req.id);
      return store.append(
        earlier.length
          ? [...earlier, req.events as NormalisedEvent[]].flat()
          : (req.events as NormalisedEvent[]),
      );
    }
    case 'execute': {
      const abort = new AbortController();
      running.set(req.id, abort);
      try {
        return await store.execute(req.plan as QueryPlan, {
          signal: abort.signal,
          ...(req.tag === undefined ? {} : { tag: req.tag }),
          ...(req.progress ? { onProgress: (p: number) => send({ id: req.id, progress: p }) } : {}),
        });
      } finally {
        running.delete(req.id);
      }
    }
    case 'streamOpen': {
      const abort = new AbortController();
      const stream = nextStream++;
      const it = store.stream(req.plan as SearchPlan, {
        signal: abort.signal,
        ...(req.tag === undefined ? {} : { tag: req.tag }),
      });
      streams.set(stream, { it, abort, openedBy: req.id });
      running.set(req.id, abort);
      return stream;
    }
    case 'streamNext': {
      const s = streams.get(req.stream);
      if (!s) return { events: [], done: true };
      const events: StoredEvent[] = [];
      let values = 0;
      running.set(req.id, s.abort);
      try {
        while (events.length < req.max && values < req.maxValues) {
          const next = await s.it.next();
          if (next.done) {
            endStream(req.stream);
            return { events, done: true };
          }
          events.push(next.value);
          values += eventValues(next.value);
        }
      } catch (err) {
        endStream(req.stream);
        throw err;
      } finally {
        running.delete(req.id);
      }
      return { events, done: false };
    }
    case 'streamClose': {
      const s = streams.get(req.stream);
      endStream(req.stream);
      await s?.it.return(undefined);
      return null;
    }
    case 'abort':
      running.get(req.target)?.abort();
      return null;
    case 'setStreamRules':
      return store.setStreamRules(req.rules);
    case 'setMetricRules':
      return store.setMetricRules(req.rules);
    case 'metricBuckets':
      return store.metricBuckets(req.read);
    case 'metricCounts':
      return store.metricCounts(req.metric, req.generation);
    case 'metricTotals':
      return store.metricTotals(req.metric, req.generation, req.scope);
    case 'maintainMetrics':
      return store.maintainMetrics(req.nowMs);
    case 'backfillMetric':
      return store.backfillMetric(req.req);
    case 'metricBackfilled':
      return store.metricBackfilled(req.metric, req.generation);
    case 'getById':
      return store.getById(req.evId, req.scope);
    case 'deleteOlderThan':
      return store.deleteOlderThan(req.tsMs, req.keep);
    case 'setPatternIds':
      return store.setPatternIds(req.range, req.ids);
    case 'hourCounts':
      return store.hourCounts();
    case 'stats':
      return store.stats();
    case 'moveCold':
      return store.moveCold(req.move);
    case 'coldFiles':
      return store.coldFiles();
    case 'dropOldestCold':
      return store.dropOldestCold(req.bytes);
    case 'countHot':
      return store.countHot(req.filters);
    case 'verifyCold':
      return store.verifyCold(req.req);
    case 'importCold':
      return store.importCold(req.req);
    case 'readReach':
      return store.readReach(req.filter, req.scope, req.range);
    case 'openBackup':
      return store.openBackup(req.req);
    case 'releaseBackup':
      return store.releaseBackup(req.backup);
    case 'backupStep':
      return store.backupStep(req.backup, req.step);
    case 'interruptBackup':
      return store.interruptBackup(req.backup);
    case 'closeBackup':
      return store.closeBackup(req.backup);
    case 'ping':
      return store.ping();
    case 'abandon':
      return store.abandon(req.tagPrefix);
    case 'runSql':
      return store.runSql(req.sql, req.params);
    case 'checkpoint':
      // Only an engine that keeps a write-ahead log of its own has one to write.
      return store.checkpoint ? store.checkpoint() : null;
    case 'close':
      for (const s of streams.values()) s.abort.abort();
      await store.close();
      return null;
    default: {
      // A request this worker does not know (a main thread of another build): an error,
      // never the request echoed back as its answer.
      const unknown: never = req;
      throw new Error(`The event store worker has no operation ${(unknown as { op: string }).op}`);
    }
  }
}

/**
 * A request served by the store, DuckDB's opened again first if a fatal error invalidated
 * it (duckdb-recovery.ts): a full disk that is freed needs no restart.
 */
async function serveRecovering(store: Store, recovery: DuckDbRecovery | null, req: StoreRequest) {
  if (!recovery) return serve(store, req);
  if (req.op === 'close') {
    for (const s of streams.values()) s.abort.abort();
    await recovery.close();
    return null;
  }
  if (req.op === 'setStreamRules') recovery.rulesSet(req.rules);
  if (req.op === 'setMetricRules') recovery.metricRulesSet(req.rules);
  try {
    return await serve(await recovery.current(), req);
  } catch (err) {
    recovery.failed(err);
    throw err;
  }
}

async function main(): Promise<void> {
  let store: Store;
  let recovery: DuckDbRecovery | null = null;
  try {
    const config = workerData as WorkerStoreConfig;
    if (config.kind === 'duckdb') {
      const duckdb = await DuckDbEventStore.open(config.options);
      recovery = new DuckDbRecovery(duckdb, config.options);
      store = duckdb;
    } else store = await ClickHouseEventStore.open(config.options);
  } catch (err) {
    send({ id: 0, error: toWire(err) });
    return;
  }
  port?.on('message', (req: StoreRequest) => {
    if (req.op === 'appendPart') {
      void serve(store, req);
      return;
    }
    serveRecovering(store, recovery, req).then(
      (value) => send({ id: req.id, value }),
      (err: unknown) => send({ id: req.id, error: toWire(err) }),
    );
  });
  send({ id: 0, ready: true, kind: store.kind, capabilities: { ...store.capabilities } });
}

void main();
