import { can, type Identity } from '../../core/identity.js';
import {
  conflict,
  createError,
  type FieldErrors,
  notFound,
  permissionDenied,
  validationError,
} from '../../errors/errors.js';
import type { EventStore } from '../../event-store/event-store.js';
import { SYSTEM_SCOPE } from '../../event-store/read-scope.js';
import { parseQuery } from '../../syntax/parse-query.js';
import type { TeamsService } from '../teams/teams-service.js';
import { membership } from './membership.js';
import type { Stream, StreamInput, StreamPatch, StreamTiersView } from './stream-schema.js';
import type { StreamTiers } from './stream-tiers.js';
import type { Readers, StreamRow, StreamsRepository } from './streams-repository.js';

const DAY_MS = 86_400_000;

/**
 * Streams: named rules over events and who may read them. Admins and `manage_streams`
 * holders manage them (and see them all); everyone else sees the streams they may read.
 * The built-in Default holds what no other stream claims: it cannot be deleted and has no
 * rule; its readers, retention and description can change.
 */
export class StreamsService {
  constructor(
    private readonly streams: StreamsRepository,
    private readonly teams: TeamsService,
    private readonly events: EventStore,
    /** Told after streams change: who may read what changed. */
    private readonly onChanged: () => void = () => undefined,
    /** The `retentionDays` setting: the retention of a stream whose `retention_days` is null. */
    private readonly settings: { retentionDays: number } = { retentionDays: 0 },
    /** Each stream's events and bytes per tier (stream-tiers.ts), shown with its counts. */
    private readonly tiers: StreamTiers | null = null,
  ) {}

  async list(who: Identity, opts: { counts?: boolean } = {}): Promise<Stream[]> {
    const rows = await this.streams.all();
    const readers = await this.streams.readers();
    const visible = await this.visibleTo(who, rows, readers);
    return this.present(visible, readers, opts.counts ? await this.countable(who, rows, readers) : undefined);
  }

  async get(who: Identity, id: number, opts: { counts?: boolean } = {}): Promise<Stream> {
    const rows = await this.streams.all();
    const readers = await this.streams.readers();
    const row = (await this.visibleTo(who, rows, readers)).find((r) => r.id === id);
    if (!row) throw notFound();
    const countable = await this.countable(who, rows, readers);
    const [stream] = await this.present([row], readers, opts.counts ? countable : undefined);
    // Its tiers, to those who may read it (docs/operations/cold-tier.md).
    if (!this.tiers || !countable.readable.has(id)) return stream as Stream;
    const tiers = (await this.tiers.of([id])).get(id);
    return { ...(stream as Stream), ...(tiers ? { tiers } : {}) };
  }

  async create(who: Identity, input: StreamInput): Promise<Stream> {
    requireManager(who);
    const title = await this.checkTitle(input.title);
    const rule = checkRule(input.rule);
    const readers = await this.checkReaders(input.readers ?? {});
    const retention = input.retention_days ?? null;
    const hot = input.hot_days ?? null;
    this.checkHotDays(hot, retention, { hot: input.hot_days !== undefined, retention: false });
    const now = new Date().toISOString();
    const row = await this.streams.insert(
      {
        title,
        description: input.description ?? '',
        rule,
        retention_days: retention,
        hot_days: hot,
        owner: who.userId,
        builtin: 0,
        created_at: now,
        updated_at: now,
      },
      readers,
    );
    this.onChanged();
    return this.get(who, row.id);
  }

  /** PATCH: what is given changes; PUT (`replace`): what is left out returns to its default. */
  async update(who: Identity, id: number, patch: StreamPatch, replace = false): Promise<Stream> {
    requireManager(who);
    const row = await this.streams.byId(id);
    if (!row) throw notFound();
    const errors: FieldErrors = {};
    if (row.builtin) {
      if (patch.rule !== undefined && patch.rule !== null)
        errors.rule = ['The Default stream has no rule: it holds the events no other stream claims.'];
      if (patch.title !== undefined && patch.title.trim() !== row.title)
        errors.title = [`The Default stream keeps its title "${row.title}".`];
      if (Object.keys(errors).length) throw validationError(errors);
    }
    const title =
      patch.title === undefined || row.builtin ? undefined : await this.checkTitle(patch.title, id);
    const rule = row.builtin
      ? undefined
      : patch.rule !== undefined || replace
        ? checkRule(patch.rule)
        : undefined;
    const given = patch.readers ?? (replace ? {} : undefined);
    const readers = given === undefined ? undefined : await this.checkReaders(given);
    const description = patch.description ?? (replace ? '' : undefined);
    const retention = patch.retention_days !== undefined ? patch.retention_days : replace ? null : undefined;
    const hot = patch.hot_days !== undefined ? patch.hot_days : replace ? null : undefined;
    this.checkHotDays(
      hot === undefined ? row.hot_days : hot,
      retention === undefined ? row.retention_days : retention,
      { hot: patch.hot_days !== undefined, retention: patch.retention_days !== undefined },
    );
    const updated = await this.streams.update(
      id,
      {
        ...(title !== undefined ? { title } : {}),
        ...(rule !== undefined ? { rule } : {}),
        ...(description !== undefined ? { description } : {}),
        ...(retention !== undefined ? { retention_days: retention } : {}),
        ...(hot !== undefined ? { hot_days: hot } : {}),
        updated_at: new Date().toISOString(),
      },
      readers,
    );
    if (!updated) throw notFound();
    this.onChanged();
    return this.get(who, id);
  }

  async delete(who: Identity, id: number): Promise<void> {
    requireManager(who);
    const row = await this.streams.byId(id);
    if (!row) throw notFound();
    if (row.builtin) throw conflict('The Default stream cannot be deleted.');
    if (!(await this.streams.delete(id))) throw notFound();
    this.onChanged();
  }

  /** Admins and managers see every stream; anyone else those whose readers name them or a team of theirs. */
  private async visibleTo(
    who: Identity,
    rows: readonly StreamRow[],
    readers: ReadonlyMap<number, Readers>,
  ): Promise<StreamRow[]> {
    if (can(who, 'manage_streams')) return [...rows];
    return this.readableBy(who, rows, readers);
  }

  /**
   * What `event_count` is given for: every stream (their membership rules, `all`) and the
   * ids of those the caller may read. A `manage_streams` holder sees every stream to manage
   * it, but counts only the events of those they read, as everyone else.
   */
  private async countable(
    who: Identity,
    all: readonly StreamRow[],
    readers: ReadonlyMap<number, Readers>,
  ): Promise<{ all: readonly StreamRow[]; readable: ReadonlySet<number> }> {
    const readable = await this.readableBy(who, all, readers);
    return { all, readable: new Set(readable.map((r) => r.id)) };
  }

  /** The streams the caller may read: all for admins, else those whose readers name them or a team of theirs. */
  private async readableBy(
    who: Identity,
    rows: readonly StreamRow[],
    readers: ReadonlyMap<number, Readers>,
  ): Promise<StreamRow[]> {
    if (who.isAdmin) return [...rows];
    const teams = new Set(await this.teams.teamsOf(who.userId));
    return rows.filter((r) => {
      const named = readers.get(r.id);
      return !!named && (named.users.includes(who.userId) || named.teams.some((t) => teams.has(t)));
    });
  }

  /**
   * Representations; with `countable`, those the caller may read each with its events of
   * the last 24 h (the others without `event_count`).
   */
  private async present(
    rows: readonly StreamRow[],
    readers: ReadonlyMap<number, Readers>,
    countable?: { all: readonly StreamRow[]; readable: ReadonlySet<number> },
  ): Promise<Stream[]> {
    const counts = countable
      ? await this.counts(
          rows.filter((r) => countable.readable.has(r.id)),
          countable.all,
        )
      : undefined;
    const tiers =
      countable && this.tiers
        ? await this.tiers.of(rows.map((r) => r.id))
        : new Map<number, StreamTiersView>();
    return rows.map((r) => ({
      id: r.id,
      title: r.title,
      description: r.description,
      rule: r.rule,
      readers: readers.get(r.id) ?? { teams: [], users: [] },
      retention_days: r.retention_days,
      hot_days: r.hot_days,
      owner: r.owner,
      builtin: r.builtin === 1,
      created_at: r.created_at,
      updated_at: r.updated_at,
      ...(counts && countable?.readable.has(r.id) ? { event_count: counts.get(r.id) ?? 0 } : {}),
      ...(countable?.readable.has(r.id) && tiers.has(r.id)
        ? { tiers: tiers.get(r.id) as StreamTiersView }
        : {}),
    }));
  }

  private async counts(rows: readonly StreamRow[], all: readonly StreamRow[]): Promise<Map<number, number>> {
    const filters = membership(all);
    const now = Date.now();
    const range = { fromMs: now - DAY_MS, toMs: now + 1 };
    const out = new Map<number, number>();
    for (const r of rows) {
      const filter = filters.get(r.id);
      if (!filter) continue;
      // Shown only for streams the caller may read: the stream's own events, all of them.
      const res = await this.events.execute({
        kind: 'search',
        scope: SYSTEM_SCOPE,
        filter,
        range,
        sort: [],
        limit: 0,
        offset: 0,
        count: true,
      });
      out.set(r.id, res.total);
    }
    return out;
  }

  /**
   * A stream's `hot_days` as it would be stored beside its `retention_days` (§24): none on
   * the ClickHouse event store (its own TTL moves data), and never above the effective
   * retention (`retention_days`, else the `retentionDays` setting; 0 keeps all, so allows
   * any). A clash names what the request gave: `hot_days`, `retention_days`, or both.
   */
  private checkHotDays(
    hot: number | null,
    retention: number | null,
    given: { hot: boolean; retention: boolean },
  ): void {
    // A change of neither leaves the pair as it was (even one a later retentionDays made clash).
    if (hot === null || (!given.hot && !given.retention)) return;
    if (given.hot && this.events.kind === 'clickhouse')
      throw createError(
        400,
        'cold_tier_needs_embedded_store',
        'hot_days: the cold tier needs the embedded (DuckDB) event store; on ClickHouse, use its own TTL … TO VOLUME / TO DISK storage policies (docs/operations/clickhouse.md).',
        {
          hot_days: [
            'The cold tier needs the embedded (DuckDB) event store; leave hot_days null on ClickHouse.',
          ],
        },
      );
    const keep = retention ?? this.settings.retentionDays;
    if (keep === 0 || hot <= keep) return;
    const source = retention === null ? 'the retentionDays setting' : 'its retention_days';
    const errors: FieldErrors = {};
    if (given.hot) errors.hot_days = [`At most the stream’s retention: ${keep} days (${source}).`];
    if (given.retention)
      errors.retention_days = [`At least the stream’s hot_days (${hot}), or 0 to keep its events forever.`];
    throw validationError(errors);
  }

  private async checkTitle(raw: string, self?: number): Promise<string> {
    const title = raw.trim();
    if (!title) throw validationError({ title: ['Must not be blank.'] });
    const other = await this.streams.byTitle(title);
    if (other && other.id !== self) throw conflict(`Stream "${other.title}" already exists.`);
    return title;
  }

  private async checkReaders(given: { teams?: number[]; users?: number[] }): Promise<Readers> {
    const readers: Readers = {
      teams: [...new Set(given.teams ?? [])].sort((a, b) => a - b),
      users: [...new Set(given.users ?? [])].sort((a, b) => a - b),
    };
    const found = await this.streams.existing(readers);
    const errors: FieldErrors = {};
    const missingTeams = readers.teams.filter((id) => !found.teams.has(id));
    const missingUsers = readers.users.filter((id) => !found.users.has(id));
    if (missingTeams.length)
      errors['readers.teams'] = [`No team has the id ${missingTeams.slice(0, 20).join(', ')}.`];
    if (missingUsers.length)
      errors['readers.users'] = [`No user has the id ${missingUsers.slice(0, 20).join(', ')}.`];
    if (Object.keys(errors).length) throw validationError(errors);
    return readers;
  }
}

/** A rule as stored: required, not blank, and parsed (a syntax error is a 400 on `rule`). */
function checkRule(rule: string | null | undefined): string {
  if (rule === undefined || rule === null || !rule.trim())
    throw validationError({ rule: ['Required: a query-language rule selecting the stream’s events.'] });
  parseQuery(rule, { path: 'rule' });
  return rule;
}

/** `manage_streams` is admin-level (ADR 0020): its holder may make any change, their own reading included. */
function requireManager(who: Identity): void {
  if (!can(who, 'manage_streams'))
    throw permissionDenied('Only administrators and manage_streams holders manage streams.');
}
