import type { ClusterTopics } from '../../core/bus.js';
import type { NormalisedEvent } from '../../core/event.js';
import type { Identity } from '../../core/identity.js';
import type { Log } from '../../core/log.js';
import { notFound } from '../../errors/errors.js';
import type { EventStore } from '../../event-store/event-store.js';
import { cond } from '../../filter/ast.js';
import { knownValues, type MinedTemplate, TemplateMiner } from '../../ingest/patterns/template-miner.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import type { PatternsRepository } from './patterns-repository.js';
import type { PatternRow } from './patterns-table.js';

/** How often what was mined is written to the metadata store (ms). */
export const FLUSH_MS = 1000;
/** Templates a starting miner takes up again, the most common first. */
export const ADOPTED = 100_000;
/** How often the templates none of whose events is left are deleted (ms). */
export const PRUNE_MS = 3_600_000;

const seconds = (ms: number) => ms / 1000;

type SharedTemplate = ClusterTopics['patterns-made']['templates'][number];

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
  });
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
    private readonly share: (templates: SharedTemplate[]) => void = () => undefined,
  ) {}

  /** Another node's templates: taken up, so its kinds of message get the same ids here. */
  receive(templates: readonly SharedTemplate[]): void {
    for (const t of templates) {
      this.miner.adopt({ id: t.id, app: t.app, tokens: t.tokens, count: 0 });
      if (!this.firsts.has(t.id)) this.firsts.set(t.id, t.firstSeen);
    }
  }

  async start(): Promise<void> {
    for (const r of await this.repo.mostCommon(ADOPTED)) {
      this.miner.adopt({ id: r.pattern_id, app: r.app, tokens: r.template.split(' '), count: r.count });
      this.firsts.set(r.pattern_id, r.first_seen);
    }
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
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
    if (this.changed.size) {
      const made = [...this.changed.values()].map((t) => ({
        id: t.id,
        app: t.app,
        tokens: [...t.tokens],
        firstSeen: this.firsts.get(t.id) ?? Date.now(),
      }));
      this.changed = new Map();
      this.share(made);
    }
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
}

/**
 * A pattern row before its write: the template's tokens as the miner holds them (made
 * more general in place), joined into its text only when written.
 */
type PendingRow = Omit<PatternRow, 'template'> & { tokens: readonly string[] };
