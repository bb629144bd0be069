import { setImmediate as nextTurn } from 'node:timers/promises';
import type { NormalisedEvent, StoredEvent } from '../../core/event.js';
import type { Identity } from '../../core/identity.js';
import { newUlid } from '../../core/ids.js';
import type { Log } from '../../core/log.js';
import { conflict, fieldError, notFound, permissionDenied } from '../../errors/errors.js';
import type { EventStore } from '../../event-store/event-store.js';
import type { TimeWindow } from '../../event-store/query-plan.js';
import { SYSTEM_SCOPE } from '../../event-store/read-scope.js';
import { cond, or, TRUE } from '../../filter/ast.js';
import type { LeasesRepository } from '../../metadata/leases-repository.js';
import type { PatternsService } from './patterns-service.js';
import type { RemineRepository, StoredSpan } from './remine-repository.js';
import type { RemineRow, RemineState } from './remine-table.js';

/**
 * Events read, re-mined and written back at a time: what a job holds in memory. DuckDB's
 * UPDATE holds the store's writes (appends wait for it), so its pages are smaller: 100,000
 * events with ingest of 100 every 100 ms beside, ingest's p50 137 ms in pages of 5,000, 48
 * in pages of 2,000. ClickHouse's mutation runs on the shards, each one rewriting parts,
 * so fewer and larger (ingest's p50 30 → 45 ms in pages of 5,000).
 */
export const REMINE_PAGE: Readonly<Record<EventStore['kind'], number>> = { duckdb: 2000, clickhouse: 5000 };
/** Events matched between two turns of the event loop, so ingest and requests keep going. */
const MATCH_SLICE = 500;
/** A runner that has not renewed its job for this long (ms) is taken for dead ("interrupted"). */
export const REMINE_LEASE_MS = 30_000;
const RENEW_MS = 5000;
/** Templates some events left, settled in the templates table this many at a time. */
const SETTLE_CHUNK = 500;
/** The lease a node holds while it runs a job: one job at a time over the cluster. */
const LEASE_NAME = 'patterns-remine';

/** A job as `GET /api/patterns/remine/{job_id}` shows it (docs/api/patterns.md#re-mining). */
export interface RemineJob {
  job_id: string;
  state: RemineState;
  ts_from: number;
  ts_to: number;
  events_done: number;
  events_total: number;
  events_changed: number;
  started: string;
  finished: string | null;
  error?: string;
}

const view = (r: RemineRow): RemineJob => ({
  job_id: r.job_id,
  state: r.state,
  ts_from: r.ts_from / 1000,
  ts_to: r.ts_to / 1000,
  events_done: r.events_done,
  // Events stored into the range while it ran are re-mined too: the total is never below.
  events_total: Math.max(r.events_total, r.events_done),
  events_changed: r.events_changed,
  started: r.started,
  finished: r.finished,
  ...(r.error === null ? {} : { error: r.error }),
});

function requireAdmin(who: Identity): void {
  if (!who.isAdmin) throw permissionDenied('Only administrators re-mine patterns.');
}

const iso = () => new Date().toISOString();

/**
 * Re-mining (docs/api/patterns.md#re-mining, ADR 0022): a time range's stored events read a
 * page at a time in (ts, ev_id) order, each message through the live miner as ingest
 * assigns it (`PatternsService.assign`), the new ids written back to the events
 * (`EventStore.setPatternIds`) and the templates table corrected, in the background, one
 * job at a time over the cluster. The job's state is a row of the metadata store, so any
 * node answers for it, and a runner that stops renewing it is seen as interrupted.
 */
export class RemineService {
  /** The job this process runs, and the promise of its end. */
  private current: { id: string; done: Promise<void>; stopping: boolean } | null = null;
  /** Set while a job is being started here: a second request meanwhile is refused at once. */
  private starting = false;

  constructor(
    private readonly repo: RemineRepository,
    private readonly leases: LeasesRepository,
    private readonly store: EventStore,
    private readonly patterns: PatternsService,
    private readonly log: Log,
    private readonly opts: { node: string; cluster: boolean; pageSize?: number },
  ) {}

  /** Jobs a process that ended left running are marked failed ("interrupted"). */
  async start(): Promise<void> {
    await this.repo.interrupt(iso(), this.opts.cluster ? Date.now() : undefined);
  }

  /** Stops the job this process runs after its page; it ends failed ("interrupted"). */
  async stop(): Promise<void> {
    const c = this.current;
    if (!c) return;
    c.stopping = true;
    await c.done;
  }

  async begin(who: Identity, input: { ts_from: number; ts_to: number }): Promise<RemineJob> {
    requireAdmin(who);
    if (input.ts_to <= input.ts_from) throw fieldError('ts_to', 'Must be after ts_from.');
    if (!this.patterns.enabled)
      throw conflict('Pattern mining is off (patternMining: false): there is nothing to re-mine with.');
    if (this.current || this.starting)
      throw conflict(
        `A re-mine is running already (job ${this.current?.id ?? 'starting'}); one runs at a time.`,
      );
    this.starting = true;
    try {
      return await this.launch(who, input);
    } finally {
      this.starting = false;
    }
  }

  private async launch(who: Identity, input: { ts_from: number; ts_to: number }): Promise<RemineJob> {
    await this.repo.interrupt(iso(), Date.now());
    const [running] = await this.repo.running();
    if (running) throw conflict(`A re-mine is running already (job ${running.job_id}); one runs at a time.`);
    if (!(await this.leases.hold(LEASE_NAME, this.opts.node, Date.now(), REMINE_LEASE_MS)))
      throw conflict('A re-mine is starting on another node; one runs at a time.');
    const row: RemineRow = {
      job_id: newUlid(),
      state: 'running',
      ts_from: Math.round(input.ts_from * 1000),
      ts_to: Math.round(input.ts_to * 1000),
      events_done: 0,
      events_total: 0,
      events_changed: 0,
      started: iso(),
      finished: null,
      error: null,
      owner: this.opts.node,
      lease_until: Date.now() + REMINE_LEASE_MS,
      stop_requested: 0,
      started_by: who.userId ?? null,
    };
    await this.repo.insert(row);
    const job = { id: row.job_id, stopping: false, done: Promise.resolve() };
    job.done = this.run(row, job).finally(() => {
      if (this.current === job) this.current = null;
    });
    this.current = job;
    return view(row);
  }

  async get(who: Identity, id: string): Promise<RemineJob> {
    requireAdmin(who);
    await this.repo.interrupt(iso(), Date.now());
    const row = await this.repo.byId(id);
    if (!row) throw notFound('No such re-mining job.');
    return view(row);
  }

  /** Asks a running job to stop after its page (whichever node runs it); an ended one is left as it is. */
  async requestStop(who: Identity, id: string): Promise<RemineJob> {
    requireAdmin(who);
    const row = await this.repo.byId(id);
    if (!row) throw notFound('No such re-mining job.');
    await this.repo.requestStop(id);
    return view(row);
  }

  /** The job's work, in the background: its end is written to its row, whatever happens. */
  private async run(row: RemineRow, job: { stopping: boolean }): Promise<void> {
    const renew = setInterval(() => {
      const until = Date.now() + REMINE_LEASE_MS;
      void this.leases.hold(LEASE_NAME, this.opts.node, Date.now(), REMINE_LEASE_MS).catch(() => false);
      void this.repo.update(row.job_id, { lease_until: until }).catch(() => false);
    }, RENEW_MS);
    renew.unref();
    let end: { state: RemineState; error: string | null };
    try {
      end = await this.pages(row, job);
    } catch (err) {
      this.log.warn({ err: (err as Error).message, job: row.job_id }, 'Re-mining failed');
      end = { state: 'failed', error: (err as Error).message };
    } finally {
      clearInterval(renew);
    }
    try {
      await this.repo.update(row.job_id, { ...end, finished: iso() });
      await this.leases.release(LEASE_NAME, this.opts.node);
    } catch (err) {
      this.log.warn(
        { err: (err as Error).message, job: row.job_id },
        'Could not record the end of a re-mine',
      );
    }
  }

  /** Reads, re-mines and writes back the range a page at a time; answers how it ended. */
  private async pages(
    row: RemineRow,
    job: { stopping: boolean },
  ): Promise<{ state: RemineState; error: string | null }> {
    const pageSize = this.opts.pageSize ?? REMINE_PAGE[this.store.kind];
    const range = { fromMs: row.ts_from, toMs: row.ts_to };
    /** Templates some events left: settled at the end. Bounded by the templates there are. */
    const left = new Set<string>();
    let cursor: { ts: number; id: string } | null = null;
    let done = 0;
    let changed = 0;
    for (;;) {
      if (job.stopping) return { state: 'failed', error: 'interrupted' };
      const page = await this.store.execute({
        kind: 'search',
        scope: SYSTEM_SCOPE,
        // After the cursor in (ts, ev_id) order: the range starts at its ts.
        filter: cursor ? or(cond('ts', 'gt', cursor.ts / 1000), cond('ev_id', 'gt', cursor.id)) : TRUE,
        range: { fromMs: cursor?.ts ?? range.fromMs, toMs: range.toMs },
        sort: [
          { field: 'ts', desc: false },
          { field: 'ev_id', desc: false },
        ],
        limit: pageSize,
        offset: 0,
        count: cursor === null,
      });
      const events = page.events;
      if (cursor === null) await this.repo.update(row.job_id, { events_total: page.total });
      if (!events.length) break;
      changed += await this.remine(events, left);
      done += events.length;
      const last = events[events.length - 1] as StoredEvent;
      cursor = { ts: last.ts, id: last.ev_id };
      const running = await this.repo.update(row.job_id, {
        events_done: done,
        events_changed: changed,
        lease_until: Date.now() + REMINE_LEASE_MS,
      });
      if (!running) return { state: 'failed', error: 'interrupted' };
      const now = await this.repo.byId(row.job_id);
      if (now?.stop_requested) {
        await this.settle(left, range);
        return { state: 'stopped', error: null };
      }
      if (events.length < pageSize) break;
      await nextTurn();
    }
    await this.settle(left, range);
    return { state: 'done', error: null };
  }

  /**
   * One page: each event's message through the live miner as ingest assigns it (in slices,
   * the event loop turning between them), the events whose id changed written back, and
   * the templates' counts corrected (the miner counted every event read under its id now:
   * each is taken off the id it had). Answers how many changed.
   */
  private async remine(events: readonly StoredEvent[], left: Set<string>): Promise<number> {
    const moved: Array<[string, string]> = [];
    const read = new Map<string, number>();
    for (let i = 0; i < events.length; i += MATCH_SLICE) {
      const slice = events.slice(i, i + MATCH_SLICE);
      const copies: NormalisedEvent[] = slice.map((e) => ({ ...e }));
      this.patterns.assign(copies);
      for (const [j, e] of slice.entries()) {
        const now = (copies[j] as NormalisedEvent).pattern_id;
        if (e.pattern_id !== null) read.set(e.pattern_id, (read.get(e.pattern_id) ?? 0) + 1);
        if (now === null || now === e.pattern_id) continue;
        moved.push([e.ev_id, now]);
        if (e.pattern_id !== null) left.add(e.pattern_id);
      }
      await nextTurn();
    }
    const first = events[0] as StoredEvent;
    const last = events[events.length - 1] as StoredEvent;
    await this.store.setPatternIds({ fromMs: first.ts, toMs: last.ts + 1 }, moved);
    await this.repo.subtract(read);
    return moved.length;
  }

  /**
   * The templates table after the events moved: what the miner counted is written first,
   * then each template some events left is deleted when the store holds none of its
   * events, or given the store's span where the range held its edge (remine-repository.ts).
   */
  private async settle(left: ReadonlySet<string>, range: TimeWindow): Promise<void> {
    await this.patterns.flush();
    if (!left.size) return;
    const { oldestTs, newestTs } = await this.store.stats();
    const ids = [...left];
    for (let i = 0; i < ids.length; i += SETTLE_CHUNK) {
      const chunk = ids.slice(i, i + SETTLE_CHUNK);
      const stored = new Map<string, StoredSpan>();
      if (oldestTs !== null && newestTs !== null) {
        const r = await this.store.execute({
          kind: 'lastn',
          scope: SYSTEM_SCOPE,
          field: 'pattern_id',
          filter: cond('pattern_id', 'in', chunk),
          range: { fromMs: oldestTs, toMs: newestTs + 1 },
          n: chunk.length,
        });
        for (const it of r.items) stored.set(it.value, it);
      }
      for (const id of chunk) await this.repo.settle(id, stored.get(id), range.fromMs, range.toMs);
    }
  }
}
