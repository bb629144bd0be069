import type { ClusterTopics } from '../../core/bus.js';
import type { NormalisedEvent, StoredEvent } from '../../core/event.js';
import type { Identity } from '../../core/identity.js';
import type { Log } from '../../core/log.js';
import { notFound } from '../../errors/errors.js';
import type { EventStore } from '../../event-store/event-store.js';
import { SYSTEM_SCOPE } from '../../event-store/read-scope.js';
import { cond } from '../../filter/ast.js';
import { knownValues, type MinedTemplate, TemplateMiner } from '../../ingest/patterns/template-miner.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import { type DueRewrite, PatternMerges } from './pattern-merges.js';
import type { PatternsRepository } from './patterns-repository.js';
import type { PatternRow } from './patterns-table.js';

/** How often what was mined is written to the metadata store (ms). */
export const FLUSH_MS = 1000;
/** Templates a starting miner takes up again, the most common first. */
export const ADOPTED = 100_000;
/**
 * How far past now the events of a merged template whose row is not written yet are looked
 * for (their event times may run ahead of the clock).
 */
const UNWRITTEN_AHEAD_MS = 86_400_000;
/** Rows kept for the next write while the metadata store refuses them. */
export const MAX_PENDING = 200_000;
/** How often the templates none of whose events is left are deleted (ms). */
export const PRUNE_MS = 3_600_000;

const seconds = (ms: number) => ms / 1000;

type SharedTemplate = ClusterTopics['patterns-made']['templates'][number];
type SharedMerge = NonNullable<ClusterTopics['patterns-made']['merged']>[number];

/** Stored events of merged templates rewritten a page at a time. */
const REWRITE_PAGE = 5_000;

/** A pattern as `GET /api/patterns/{id}` shows it (docs/api/patterns.md). */
export interface Pattern {
  pattern_id: string;
  template: string;
  first_seen: number;
  last_seen: number;
  count: number;
  example_ev_id: string;
}

/**
 * Patterns (docs/api/patterns.md): every event gets the id of its message's template at ingest, after
 * pipelines (`assign`); the templates are kept in the metadata store, written every
 * second, and taken up again at start, so a template keeps its id across restarts. A
 * pattern is shown to a caller who may read one of its events, with one they may read as
 * its example (its existence does not leak otherwise).
 */
export class PatternsService {
  private readonly miner = new TemplateMiner({
    onChange: (t) => this.changed.set(t.id, t),
    onForget: (t) => this.firsts.delete(t.id),
    onMerge: (into, merged) => this.merged(into, merged),
  });
  /** Templates merged into others, until their rows and stored events follow. */
  private readonly merges = new PatternMerges();
  /** Merges to tell the other nodes of a cluster. */
  private mergedNow: SharedMerge[] = [];
  /**
   * When the events of templates merged before their rows were written happened: no row
   * tells their span, and their events already handed to the store are rewritten too.
   */
  private unwritten: Span | null = null;
  private following: Promise<void> | null = null;
  /** Templates made or generalised in the batch being assigned, told to the other nodes. */
  private changed = new Map<string, MinedTemplate>();
  /** When each held template's first event happened (ms, event time): new_pattern triggers ask. */
  private readonly firsts = new Map<string, number>();
  /** What was mined since the last write, by template id; the template's text is read at the write. */
  private pending = new Map<string, PendingRow>();
  private timer: NodeJS.Timeout | null = null;
  private pruner: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly repo: PatternsRepository,
    private readonly store: EventStore,
    private readonly scopes: ReadScopes,
    private readonly log: Log,
    /** False (`patternMining: false`): events keep a null `pattern_id`. */
    readonly enabled: boolean,
    /** Tells the other nodes of a cluster the templates made or generalised here. */
    private readonly share: (templates: SharedTemplate[], merged: SharedMerge[]) => void = () => undefined,
  ) {}

  /** Another node's templates and merges: taken up, so its kinds of message get the same ids here. */
  receive(templates: readonly SharedTemplate[], merged: readonly SharedMerge[] = []): void {
    for (const t of templates) {
      this.miner.adopt({ id: t.id, app: t.app, tokens: t.tokens, count: 0 });
      if (!this.firsts.has(t.id)) this.firsts.set(t.id, t.firstSeen);
    }
    // The node that merged rewrites the rows and the stored events; here the miner follows,
    // and what was mined here under the merged ids is written under the one they went into.
    for (const m of merged) {
      this.miner.absorb(m.into, m.ids);
      const into = this.pending.get(m.into);
      for (const id of m.ids) {
        const p = this.pending.get(id);
        if (!p) continue;
        this.pending.delete(id);
        this.merge({ ...p, pattern_id: m.into, tokens: into?.tokens ?? p.tokens });
      }
    }
  }

  /**
   * The miner merged templates into `into` (a slot's third word): what was counted for
   * them goes to it, and their rows and stored events follow at the next writes.
   */
  private merged(into: MinedTemplate, merged: readonly MinedTemplate[]): void {
    const ids = merged.map((m) => m.id);
    this.merges.note(into.id, ids);
    this.mergedNow.push({ into: into.id, ids });
    for (const id of ids) {
      const first = this.firsts.get(id);
      if (first !== undefined && first < (this.firsts.get(into.id) ?? Number.POSITIVE_INFINITY))
        this.firsts.set(into.id, first);
      this.firsts.delete(id);
      // A template another node made, whose row it may not have written yet: its events
      // lie after its first (the row, when written, may say more).
      if (first !== undefined)
        this.unwritten = span(this.unwritten, {
          fromMs: first,
          toMs: Math.max(first, Date.now()) + UNWRITTEN_AHEAD_MS,
        });
      const p = this.pending.get(id);
      if (!p) continue;
      this.pending.delete(id);
      this.unwritten = span(this.unwritten, { fromMs: p.first_seen, toMs: p.last_seen + 1 });
      this.merge({ ...p, pattern_id: into.id, app: into.app, tokens: into.tokens });
    }
  }

  async start(): Promise<void> {
    for (const r of await this.repo.mostCommon(ADOPTED)) {
      this.miner.adopt({ id: r.pattern_id, app: r.app, tokens: r.template.split(' '), count: r.count });
      this.firsts.set(r.pattern_id, r.first_seen);
    }
    this.timer = setInterval(() => void this.flush().then(() => this.followMerges()), FLUSH_MS);
    this.timer.unref();
    this.pruner = setInterval(() => {
      this.prune().catch((err: Error) => this.log.warn({ err: err.message }, 'Could not prune patterns'));
    }, PRUNE_MS);
    this.pruner.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.pruner) clearInterval(this.pruner);
    this.timer = null;
    this.pruner = null;
    await this.flush();
    // Rewrites still to come are done now: after a stop nobody would.
    await this.followMerges(true);
  }

  /**
   * Merged templates' rows go into the rows they were merged into, and their stored events
   * are given the id they went into (pattern-merges.ts: after the batches holding them
   * were stored, and once more later). A failure is logged and tried again.
   */
  followMerges(all = false): Promise<void> {
    this.following ??= (async () => {
      const pairs = this.merges.take();
      const unwritten = this.unwritten;
      this.unwritten = null;
      if (pairs.length) {
        try {
          const rows = pairs.map(([from, to]) => ({ from, to, template: this.template(to) ?? '' }));
          const range = span(await this.repo.mergeInto(rows), unwritten);
          if (range) this.merges.schedule(pairs, range, Date.now());
        } catch (err) {
          this.merges.keep(pairs);
          this.unwritten = span(this.unwritten, unwritten);
          this.log.warn({ err: (err as Error).message }, 'Could not merge patterns; retrying');
        }
      }
      for (const due of this.merges.takeDue(Date.now(), all)) {
        try {
          await this.rewrite(due);
        } catch (err) {
          if (!all) this.merges.retry(due, Date.now());
          this.log.warn({ err: (err as Error).message }, 'Could not rewrite merged patterns; retrying');
        }
      }
    })().finally(() => {
      this.following = null;
    });
    return this.following;
  }

  /** Gives the stored events of merged ids the ids they went into, a page at a time. */
  private async rewrite(due: DueRewrite): Promise<void> {
    const to = new Map(due.pairs.filter(([from, into]) => from !== into));
    if (!to.size) return;
    let previous = '';
    // Each page rewritten leaves the filter: the next read finds the rest (bounded all the same).
    for (let round = 0; round < 1_000; round++) {
      const { events } = await this.store.execute({
        kind: 'search',
        scope: SYSTEM_SCOPE,
        filter: cond('pattern_id', 'in', [...to.keys()]),
        range: due.range,
        sort: [{ field: 'ts', desc: false }],
        limit: REWRITE_PAGE,
        offset: 0,
        count: false,
      });
      if (!events.length) return;
      const first = events[0] as StoredEvent;
      const last = events[events.length - 1] as StoredEvent;
      // A page that did not leave the filter (ids going round) would come back forever.
      if (first.ev_id === previous) throw new Error('rewriting merged patterns made no progress');
      previous = first.ev_id;
      await this.store.setPatternIds(
        { fromMs: first.ts, toMs: last.ts + 1 },
        events.map((e) => [e.ev_id, to.get(e.pattern_id ?? '') ?? (e.pattern_id as string)]),
      );
      if (events.length < REWRITE_PAGE) return;
    }
  }

  /**
   * Deletes the templates last seen before the store's oldest event: retention took every
   * one of their events, so nothing shows them (the table would otherwise keep a row for
   * every template ever made, an `app` of a value per request one per event). The miner
   * keeps what it holds: a template seen again is written again, counted from then.
   */
  async prune(): Promise<number> {
    const { oldestTs } = await this.store.stats();
    if (oldestTs === null) return 0;
    await this.flush();
    return this.repo.deleteLastSeenBefore(oldestTs);
  }

  /** Gives each event its template's id (the events are the batch about to be stored). */
  assign(events: NormalisedEvent[]): void {
    if (!this.enabled) return;
    for (const e of events) {
      const t = this.miner.match(e.app ?? '', e.message ?? '', knownValues(e));
      e.pattern_id = t.id;
      if (!this.firsts.has(t.id)) this.firsts.set(t.id, e.ts);
      let p = this.pending.get(t.id);
      if (!p) {
        p = {
          pattern_id: t.id,
          app: t.app,
          tokens: t.tokens,
          first_seen: e.ts,
          last_seen: e.ts,
          count: 0,
          example_ev_id: e.ev_id,
        };
        this.pending.set(t.id, p);
      }
      p.count += 1;
      if (e.ts < p.first_seen) p.first_seen = e.ts;
      if (e.ts > p.last_seen) p.last_seen = e.ts;
    }
    // An event given an id a later one of the batch merged away takes the id it went into.
    this.merges.remap(events);
    if (this.changed.size || this.mergedNow.length) {
      const made = [...this.changed.values()].map((t) => ({
        id: t.id,
        app: t.app,
        tokens: [...t.tokens],
        firstSeen: this.firsts.get(t.id) ?? Date.now(),
      }));
      this.changed = new Map();
      const merged = this.mergedNow;
      this.mergedNow = [];
      this.share(made, merged);
    }
  }

  /**
   * Events given ids before they are handed to the store: one given an id that a later
   * event merged away (while the request was being read) takes the id it went into.
   */
  remap(events: NormalisedEvent[]): void {
    this.merges.remap(events);
  }

  /** Writes what was mined since the last write; kept for the next one when the store fails. */
  flush(): Promise<void> {
    this.flushing ??= (async () => {
      const rows = [...this.pending.values()];
      this.pending = new Map();
      try {
        await this.repo.add(rows.map(({ tokens, ...row }) => ({ ...row, template: tokens.join(' ') })));
      } catch (err) {
        this.log.warn(
          { err: (err as Error).message, patterns: rows.length },
          'Could not write patterns; retrying',
        );
        for (const r of rows) this.merge(r);
        // Kept for the next write, within a bound: past it rows are let go of
        // (their events keep their ids; a template seen again is written again).
        let over = this.pending.size - MAX_PENDING;
        for (const id of this.pending.keys()) {
          if (over-- <= 0) break;
          this.pending.delete(id);
        }
      }
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private merge(r: PendingRow): void {
    const p = this.pending.get(r.pattern_id);
    if (!p) return void this.pending.set(r.pattern_id, r);
    p.count += r.count;
    p.first_seen = Math.min(p.first_seen, r.first_seen);
    p.last_seen = Math.max(p.last_seen, r.last_seen);
  }

  /** When a pattern's first event happened (ms), if this process knows the pattern. */
  firstSeen(id: string): number | undefined {
    return this.firsts.get(id);
  }

  /** A held pattern's template text. */
  template(id: string): string | undefined {
    return this.miner.get(id)?.tokens.join(' ');
  }

  /**
   * A pattern the caller may read an event of (404 otherwise), counted over what they may
   * read: its span and count come from the store under the caller's scope, so events of
   * streams they may not read neither count nor move first and last seen. Only a scope of
   * every event (an administrator's) shows the kept counters, which count all time
   * (retention included).
   */
  async get(who: Identity, id: string): Promise<Pattern> {
    await this.flush();
    const row = await this.repo.byId(id);
    if (!row) throw notFound('No such pattern.');
    const scope = await this.scopes.of(who);
    const { items } = await this.store.execute({
      kind: 'patterns',
      scope,
      filter: cond('pattern_id', 'eq', id),
      range: { fromMs: row.first_seen, toMs: row.last_seen + 1 },
      n: 1,
      buckets: 1,
    });
    const readable = items.find((i) => i.patternId === id);
    const example = readable?.samples[0];
    if (!readable || !example) throw notFound('No such pattern.');
    const all = scope.filter === null;
    return {
      pattern_id: row.pattern_id,
      template: row.template,
      first_seen: seconds(all ? row.first_seen : readable.firstSeen),
      last_seen: seconds(all ? row.last_seen : readable.lastSeen),
      count: all ? row.count : readable.count,
      example_ev_id: example.evId,
    };
  }

  /** The templates of these ids (for query results), as text. */
  async templates(ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const id of ids) {
      const held = this.miner.get(id);
      if (held) out.set(id, held.tokens.join(' '));
    }
    const missing = ids.filter((id) => !out.has(id));
    for (const r of await this.repo.byIds(missing)) out.set(r.pattern_id, r.template);
    return out;
  }

  /**
   * When each of these patterns' first event happened (ms, event time), as written at
   * ingest over every event (what was mined up to now included), and every other pattern
   * whose template is one of `texts` (the same text in other apps) with its: a Patterns
   * query learns from it which kinds of message cannot have an event before its range.
   * An id it lost is absent.
   */
  async recordedFirstSeen(
    ids: readonly string[],
    texts: readonly string[] = [],
  ): Promise<Array<{ id: string; template: string; firstSeen: number }>> {
    await this.flush();
    const rows = [...(await this.repo.byIds(ids)), ...(await this.repo.byTemplates(texts))];
    return rows.map((r) => ({ id: r.pattern_id, template: r.template, firstSeen: r.first_seen }));
  }
}

type Span = { fromMs: number; toMs: number };

/** The span covering both (either may be none). */
function span(a: Span | null, b: Span | null): Span | null {
  if (!a || !b) return a ?? b;
  return { fromMs: Math.min(a.fromMs, b.fromMs), toMs: Math.max(a.toMs, b.toMs) };
}

/**
 * A pattern row before its write: the template's tokens as the miner holds them (made
 * more general in place), joined into its text only when written.
 */
type PendingRow = Omit<PatternRow, 'template'> & { tokens: readonly string[] };
