import { createHash } from 'node:crypto';
import type { Identity } from '../../core/identity.js';
import { fieldError } from '../../errors/errors.js';
import { EVERY_EVENT, NO_EVENT, type ReadScope } from '../../event-store/read-scope.js';
import type { StreamChoice } from '../../event-store/rollups/metric-store.js';
import type { FilterNode } from '../../filter/ast.js';
import { and, not, or } from '../../filter/builders.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import type { UsersRepository } from '../identity/index.js';
import type { TeamsService } from '../teams/teams-service.js';
import { membership, streamRules } from './membership.js';
import type { Readers, StreamRow, StreamsRepository } from './streams-repository.js';

/** What a user may read: the streams, and each stream's events as a filter. */
interface Readable {
  scope: ReadScope;
  /** The streams the user may read, by id, with their filters. */
  streams: Map<number, { row: StreamRow; filter: FilterNode }>;
}

/**
 * Read scopes from streams and teams (ADR 0013). A user reads the streams whose readers
 * name them or one of their teams; the scope is the OR of those streams' filters, or every
 * event when they may read every stream (the streams, Default included, cover every
 * event). Kept per user until streams, teams or users change on any node (the bus topic
 * `rights-changed`, as token changes).
 */
export class StreamReadScopes implements ReadScopes {
  private cache = new Map<number, Promise<Readable>>();

  constructor(
    private readonly streams: StreamsRepository,
    private readonly teams: TeamsService,
    private readonly users: UsersRepository,
  ) {}

  /** Streams, teams or users changed: every scope is computed again when next asked. */
  forget(): void {
    this.cache = new Map();
  }

  async of(who: Identity): Promise<ReadScope> {
    if (who.isAdmin) return EVERY_EVENT;
    return (await this.readable(who.userId)).scope;
  }

  async ofUser(userId: number): Promise<ReadScope> {
    return (await this.readable(userId)).scope;
  }

  async streamChoice(
    userId: number,
    streams: readonly number[] | undefined,
    field: string,
  ): Promise<StreamChoice | undefined> {
    if (streams === undefined) return undefined;
    const rows = await this.streams.all();
    // An administrator's readable streams are every stream (compute).
    const readable = new Set((await this.readable(userId)).streams.keys());
    for (const id of streams)
      if (!readable.has(id)) throw fieldError(field, `No stream you may read has the id ${id}.`);
    const builtin = rows.find((r) => r.builtin)?.id;
    return {
      ids: streams.filter((id) => id !== builtin),
      unclaimed: builtin !== undefined && streams.includes(builtin),
    };
  }

  async narrow(
    userId: number,
    filter: FilterNode,
    streams: readonly number[] | undefined,
    field = { streams: 'params.streams', query: 'params.query' },
  ): Promise<FilterNode> {
    if (streams === undefined && !mentionsStream(filter)) return filter;
    const { streams: readable } = await this.readable(userId);
    const byTitle = new Map([...readable.values()].map((s) => [s.row.title.toLowerCase(), s]));
    const find = (v: unknown) =>
      (typeof v === 'number' || /^\d+$/.test(String(v)) ? readable.get(Number(v)) : undefined) ??
      byTitle.get(String(v).toLowerCase());
    let narrowed = filter;
    if (mentionsStream(filter)) {
      narrowed = replaceStreams(filter, field.query, (v) => {
        const s = find(v);
        if (!s) throw fieldError(field.query, `No stream you may read is called "${String(v)}".`);
        return s.filter;
      });
    }
    if (streams === undefined) return narrowed;
    const chosen = streams.map((id) => {
      const s = readable.get(id);
      if (!s) throw fieldError(field.streams, `No stream you may read has the id ${id}.`);
      return s.filter;
    });
    const [first, ...rest] = chosen;
    return first ? and(or(first, ...rest), narrowed) : narrowed;
  }

  private readable(userId: number): Promise<Readable> {
    let found = this.cache.get(userId);
    if (!found) {
      found = this.compute(userId);
      this.cache.set(userId, found);
      // A failed read is not kept.
      found.catch(() => this.cache.get(userId) === found && this.cache.delete(userId));
    }
    return found;
  }

  private async compute(userId: number): Promise<Readable> {
    const [user, rows, readers, teams] = await Promise.all([
      this.users.byId(userId),
      this.streams.all(),
      this.streams.readers(),
      this.teams.teamsOf(userId),
    ]);
    const rules = streamRules(rows);
    const filters = membership(rows, rules);
    const mine = new Set(teams);
    // Administrators read every stream; a deleted or disabled user none (their triggers and
    // reports included).
    const active = !!user && user.disabled !== 1;
    const names = (r: Readers | undefined) =>
      (active && user.is_admin === 1) ||
      (active && !!r && (r.users.includes(userId) || r.teams.some((t) => mine.has(t))));
    const streams = new Map<number, { row: StreamRow; filter: FilterNode }>();
    for (const row of rows) {
      const filter = filters.get(row.id);
      if (filter && names(readers.get(row.id))) streams.set(row.id, { row, filter });
    }
    const readable = [...streams.values()];
    return {
      scope: scopeOf(
        readable.map((s) => s.filter),
        streams.size === rows.length,
        {
          rules: rules.key,
          ids: readable.filter((s) => !s.row.builtin).map((s) => s.row.id),
          unclaimed: readable.some((s) => s.row.builtin),
        },
      ),
      streams,
    };
  }
}

/**
 * The scope of the OR of some streams' filters; every event when they are all the streams.
 * `streams`: which streams those are, under which rules (ADR 0016).
 */
export function scopeOf(
  filters: readonly FilterNode[],
  all: boolean,
  streams?: ReadScope['streams'],
): ReadScope {
  if (all) return EVERY_EVENT;
  const [first, ...rest] = filters;
  if (!first) return NO_EVENT;
  const filter = or(first, ...rest);
  const key = createHash('sha256').update(JSON.stringify(filter)).digest('base64url').slice(0, 22);
  return Object.freeze({ key: `streams:${key}`, filter, ...(streams ? { streams } : {}) });
}

const isStreamCond = (n: FilterNode) => n.kind === 'cond' && n.field === 'stream';

function mentionsStream(n: FilterNode): boolean {
  switch (n.kind) {
    case 'and':
    case 'or':
      return n.items.some(mentionsStream);
    case 'not':
      return mentionsStream(n.item);
    default:
      return isStreamCond(n);
  }
}

/** The filter with each `stream` condition (`eq`, `ne`, `in`, `not_in`) replaced by the streams' filters. */
function replaceStreams(n: FilterNode, field: string, filterOf: (value: unknown) => FilterNode): FilterNode {
  switch (n.kind) {
    case 'and':
      return and(...n.items.map((i) => replaceStreams(i, field, filterOf)));
    case 'or': {
      const [first, ...rest] = n.items.map((i) => replaceStreams(i, field, filterOf));
      return first ? or(first, ...rest) : n;
    }
    case 'not':
      return not(replaceStreams(n.item, field, filterOf));
    case 'cond': {
      if (n.field !== 'stream') return n;
      if (n.op === 'eq' || n.op === 'ne') {
        const f = filterOf(n.value);
        return n.op === 'eq' ? f : not(f);
      }
      if (n.op === 'in' || n.op === 'not_in') {
        const [first, ...rest] = n.value.map(filterOf);
        if (!first) return n;
        const f = or(first, ...rest);
        return n.op === 'in' ? f : not(f);
      }
      throw fieldError(field, '`stream:` takes a stream id or title: stream:<id or title>.');
    }
    default:
      return n;
  }
}
