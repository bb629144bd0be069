import type { Identity } from '../../core/identity.js';
import type { Page, PageRequest } from '../../core/list.js';
import {
  AppError,
  type FieldErrors,
  notFound,
  permissionDenied,
  validationError,
} from '../../errors/errors.js';
import { validateTimeRange } from '../../query/time-range.js';
import { DEFAULT_PRESET } from '../../shared/time-presets.js';
import { parseFilter } from '../../syntax/parse-filter.js';
import { parseQuery } from '../../syntax/parse-query.js';
import { maySee } from '../teams/index.js';
import type { TeamsService } from '../teams/teams-service.js';
import type { SavedSearch, SavedSearchInput, SavedSearchPatch } from './saved-search-schema.js';
import type { SavedSearchesRepository, SavedSearchRow } from './saved-searches-repository.js';

export interface SavedSearchFilter {
  /** Title contains, ignoring case. */
  title?: string | undefined;
  /** Owned by any of these users. */
  owners?: readonly number[] | undefined;
  /** true: only those others shared with the caller; false: only the caller's own. */
  shared?: boolean | undefined;
}

/** How many saved searches a user may own, and how large one may be when stored. */
export interface SavedSearchBounds {
  /** Setting `savedSearchesPerUser`. */
  perUser: number;
  /** Setting `savedSearchMaxBytes`: the UTF-8 bytes of its stored texts and JSON values. */
  maxBytes: number;
}

const DEFAULT_RANGE = { preset: DEFAULT_PRESET };

/** The stored columns a saved search's size counts (each named as the API field that fills it). */
const SIZED = [
  'title',
  'description',
  'query',
  'filter',
  'time_range',
  'streams',
  'columns',
  'sort',
] as const;
type Sized = Pick<SavedSearchRow, (typeof SIZED)[number]>;

/**
 * Saved searches (docs/api/saved-searches.md): visible to their owner, to the teams (or everyone) they are
 * shared with and to admins; changed and deleted by their owner and admins only. What a
 * saved search shows a reader is always within that reader's own streams: it stores the
 * search, not results. Each is bounded in size and each user in how many they own, so no
 * user grows the store without bound; lists are filtered and paged by the store.
 */
export class SavedSearchesService {
  constructor(
    private readonly repo: SavedSearchesRepository,
    private readonly teams: TeamsService,
    private readonly bounds: SavedSearchBounds,
  ) {}

  async list(who: Identity, filter: SavedSearchFilter, page: PageRequest): Promise<Page<SavedSearch>> {
    const reader = { userId: who.userId, teams: await this.teams.teamsOf(who.userId), all: who.isAdmin };
    const found = await this.repo.list(
      { reader, titleContains: filter.title, owners: filter.owners, shared: filter.shared },
      page,
    );
    const shares = await this.repo.teamsOf(found.rows.map((r) => r.id));
    return { count: found.count, rows: found.rows.map((r) => present(r, shares.get(r.id) ?? [])) };
  }

  async get(who: Identity, id: number): Promise<SavedSearch> {
    const { row, teams } = await this.visible(who, id);
    return present(row, teams);
  }

  async create(who: Identity, input: SavedSearchInput): Promise<SavedSearch> {
    const checked = await this.check(input);
    const now = new Date().toISOString();
    const row = {
      title: input.title.trim(),
      description: input.description ?? '',
      query: input.query ?? '',
      filter: JSON.stringify(input.filter ?? []),
      time_range: JSON.stringify(input.time_range ?? DEFAULT_RANGE),
      streams: input.streams ? JSON.stringify(input.streams) : null,
      columns: JSON.stringify(input.columns ?? []),
      sort: JSON.stringify(input.sort ?? ['-ts']),
      owner: who.userId,
      share_everyone: input.shared_with?.everyone ? 1 : 0,
      created_at: now,
      updated_at: now,
    };
    const teams = checked.teams ?? [];
    this.checkSize(row, teams, input);
    const stored = await this.repo.insert(row, teams, this.bounds.perUser);
    if ('owned' in stored)
      throw new AppError(
        409,
        'limit_reached',
        `You own ${stored.owned} saved searches, the most one user may (setting savedSearchesPerUser); delete one first.`,
      );
    return this.get(who, stored.id);
  }

  /** PATCH: what is given changes; PUT (`replace`): what is left out returns to its default. */
  async update(who: Identity, id: number, patch: SavedSearchPatch, replace = false): Promise<SavedSearch> {
    const { row, teams } = await this.visible(who, id);
    if (row.owner !== who.userId && !who.isAdmin)
      throw permissionDenied('Only its owner (or an admin) changes a saved search.');
    const given = replace
      ? {
          description: '',
          query: '',
          filter: [],
          columns: [],
          sort: ['-ts'],
          streams: null,
          time_range: DEFAULT_RANGE,
          shared_with: { teams: [], everyone: false },
          ...patch,
        }
      : patch;
    const checked = await this.check(given);
    const change: Parameters<SavedSearchesRepository['update']>[1] = {
      ...columnsOf(given),
      updated_at: new Date().toISOString(),
    };
    if (given.shared_with?.everyone !== undefined) change.share_everyone = given.shared_with.everyone ? 1 : 0;
    this.checkSize({ ...row, ...change }, checked.teams ?? teams, given);
    if (!(await this.repo.update(id, change, checked.teams))) throw notFound('No such saved search.');
    return this.get(who, id);
  }

  async delete(who: Identity, id: number): Promise<void> {
    const { row } = await this.visible(who, id);
    if (row.owner !== who.userId && !who.isAdmin)
      throw permissionDenied('Only its owner (or an admin) deletes a saved search.');
    if (!(await this.repo.delete(id))) throw notFound('No such saved search.');
  }

  /** The saved search and the teams it is shared with, if the caller may see it; else 404. */
  private async visible(who: Identity, id: number): Promise<{ row: SavedSearchRow; teams: number[] }> {
    const row = await this.repo.byId(id);
    const teams = (await this.repo.teamsOf([id])).get(id) ?? [];
    if (row && (await maySee(who, row, teams, (u) => this.teams.teamsOf(u)))) return { row, teams };
    throw notFound('No such saved search.');
  }

  /**
   * A saved search as it would be stored holds at most `maxBytes`; else a 400 at the
   * largest of the fields this request gives.
   */
  private checkSize(row: Sized, teams: readonly number[], given: SavedSearchPatch) {
    const sizes: Array<[string, number]> = [
      ...SIZED.map((field): [string, number] => [field, Buffer.byteLength(row[field] ?? '')]),
      ['shared_with', Buffer.byteLength(JSON.stringify(teams))],
    ];
    const total = sizes.reduce((sum, [, n]) => sum + n, 0);
    if (total <= this.bounds.maxBytes) return;
    const [field] = sizes
      .filter(([name]) => Object.hasOwn(given, name))
      .reduce((a, b) => (b[1] > a[1] ? b : a), ['title', -1]);
    const message = `A saved search holds at most ${this.bounds.maxBytes} bytes (setting savedSearchMaxBytes); this one would hold ${total}.`;
    throw validationError({ [field]: [`${message} Make it shorter.`] }, message);
  }

  /** The query, filter and range parse; the teams exist. Returns the teams to share with. */
  private async check(input: SavedSearchPatch): Promise<{ teams: number[] | undefined }> {
    const errors: FieldErrors = {};
    if (input.title !== undefined && !input.title.trim()) errors.title = ['Must not be blank.'];
    const collect = (fn: () => void, field: string) => {
      try {
        fn();
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        // Named as this body names them (the query validator says `params.time_range`).
        for (const [k, v] of Object.entries(err.errors ?? { [field]: [err.message] }))
          errors[k.replace(/^params\./, '')] = v;
      }
    };
    if (input.query !== undefined)
      collect(() => parseQuery(input.query as string, { path: 'query' }), 'query');
    if (input.filter !== undefined)
      collect(() => parseFilter(input.filter as unknown[], { path: 'filter' }), 'filter');
    if (input.time_range !== undefined)
      collect(() => validateTimeRange(input.time_range as never), 'time_range');
    let teams: number[] | undefined;
    if (input.shared_with?.teams !== undefined) {
      teams = [...new Set(input.shared_with.teams)].sort((a, b) => a - b);
      const found = await this.repo.existingTeams(teams);
      const missing = teams.filter((t) => !found.has(t));
      if (missing.length)
        errors['shared_with.teams'] = [`No team has the id ${missing.slice(0, 20).join(', ')}.`];
    }
    if (Object.keys(errors).length) throw validationError(errors);
    return { teams };
  }
}

/** The stored columns of the fields given (JSON values as their text). */
function columnsOf(given: SavedSearchPatch): Partial<Sized> {
  const change: Partial<Sized> = {};
  if (given.title !== undefined) change.title = given.title.trim();
  if (given.description !== undefined) change.description = given.description;
  if (given.query !== undefined) change.query = given.query;
  if (given.filter !== undefined) change.filter = JSON.stringify(given.filter);
  if (given.time_range !== undefined) change.time_range = JSON.stringify(given.time_range);
  if (given.streams !== undefined) change.streams = given.streams ? JSON.stringify(given.streams) : null;
  if (given.columns !== undefined) change.columns = JSON.stringify(given.columns);
  if (given.sort !== undefined) change.sort = JSON.stringify(given.sort);
  return change;
}

const present = (r: SavedSearchRow, teams: readonly number[]): SavedSearch => ({
  id: r.id,
  title: r.title,
  description: r.description,
  query: r.query,
  filter: JSON.parse(r.filter) as unknown[],
  time_range: JSON.parse(r.time_range) as SavedSearch['time_range'],
  streams: r.streams === null ? null : (JSON.parse(r.streams) as number[]),
  columns: JSON.parse(r.columns) as string[],
  sort: JSON.parse(r.sort) as string[],
  owner: r.owner,
  shared_with: { teams: [...teams], everyone: r.share_everyone === 1 },
  created_at: r.created_at,
  updated_at: r.updated_at,
});
