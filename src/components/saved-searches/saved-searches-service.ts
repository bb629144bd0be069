import type { Page, PageRequest } from '../../core/list.js';
import type { Identity } from '../../domain/auth/identity.js';
import {
  AppError,
  type FieldErrors,
  notFound,
  permissionDenied,
  validationError,
} from '../../errors/errors.js';
import { parseQuery } from '../../filter/language/parse-query.js';
import { parseFilter } from '../../filter/parse-filter.js';
import { validateTimeRange } from '../../query/time-range.js';
import type { TeamsService } from '../teams/teams-service.js';
import type { SavedSearch, SavedSearchInput, SavedSearchPatch } from './saved-search-schema.js';
import type { SavedSearchesRepository, SavedSearchRow } from './saved-searches-repository.js';

export interface SavedSearchFilter {
  /** Title contains, ignoring case. */
  title?: string | undefined;
  owner?: number | undefined;
  /** true: only those others shared with the caller; false: only the caller's own. */
  shared?: boolean | undefined;
}

const DEFAULT_RANGE = { preset: 'last_hour' };

/**
 * Saved searches (API §19): visible to their owner, to the teams (or everyone) they are
 * shared with and to admins; changed and deleted by their owner and admins only. What a
 * saved search shows a reader is always within that reader's own streams: it stores the
 * search, not results.
 */
export class SavedSearchesService {
  constructor(
    private readonly repo: SavedSearchesRepository,
    private readonly teams: TeamsService,
  ) {}

  async list(who: Identity, filter: SavedSearchFilter, page: PageRequest): Promise<Page<SavedSearch>> {
    const [rows, shares, mine] = await Promise.all([
      this.repo.all(),
      this.repo.teams(),
      this.teams.teamsOf(who.userId),
    ]);
    const myTeams = new Set(mine);
    const sharedWithMe = (r: SavedSearchRow) =>
      r.share_everyone === 1 || (shares.get(r.id) ?? []).some((t) => myTeams.has(t));
    const title = filter.title?.toLowerCase();
    const visible = rows.filter(
      (r) =>
        (r.owner === who.userId || who.isAdmin || sharedWithMe(r)) &&
        (title === undefined || r.title.toLowerCase().includes(title)) &&
        (filter.owner === undefined || r.owner === filter.owner) &&
        (filter.shared === undefined ||
          (filter.shared ? r.owner !== who.userId && sharedWithMe(r) : r.owner === who.userId)),
    );
    const ordered = sortRows(visible, page);
    return {
      count: ordered.length,
      rows: ordered
        .slice(page.offset, page.offset + page.limit)
        .map((r) => present(r, shares.get(r.id) ?? [])),
    };
  }

  async get(who: Identity, id: number): Promise<SavedSearch> {
    const row = await this.repo.byId(id);
    const shares = await this.repo.teams();
    if (!row || !(await this.visible(who, row, shares.get(id) ?? [])))
      throw notFound('No such saved search.');
    return present(row, shares.get(id) ?? []);
  }

  async create(who: Identity, input: SavedSearchInput): Promise<SavedSearch> {
    const checked = await this.check(input);
    const now = new Date().toISOString();
    const id = await this.repo.insert(
      {
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
      },
      checked.teams ?? [],
    );
    return this.get(who, id);
  }

  /** PATCH: what is given changes; PUT (`replace`): what is left out returns to its default. */
  async update(who: Identity, id: number, patch: SavedSearchPatch, replace = false): Promise<SavedSearch> {
    const row = await this.repo.byId(id);
    const shares = await this.repo.teams();
    if (!row || !(await this.visible(who, row, shares.get(id) ?? [])))
      throw notFound('No such saved search.');
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
    const change: Parameters<SavedSearchesRepository['update']>[1] = { updated_at: new Date().toISOString() };
    if (given.title !== undefined) change.title = given.title.trim();
    if (given.description !== undefined) change.description = given.description;
    if (given.query !== undefined) change.query = given.query;
    if (given.filter !== undefined) change.filter = JSON.stringify(given.filter);
    if (given.time_range !== undefined) change.time_range = JSON.stringify(given.time_range);
    if (given.streams !== undefined) change.streams = given.streams ? JSON.stringify(given.streams) : null;
    if (given.columns !== undefined) change.columns = JSON.stringify(given.columns);
    if (given.sort !== undefined) change.sort = JSON.stringify(given.sort);
    if (given.shared_with?.everyone !== undefined) change.share_everyone = given.shared_with.everyone ? 1 : 0;
    if (!(await this.repo.update(id, change, checked.teams))) throw notFound('No such saved search.');
    return this.get(who, id);
  }

  async delete(who: Identity, id: number): Promise<void> {
    const row = await this.repo.byId(id);
    const shares = await this.repo.teams();
    if (!row || !(await this.visible(who, row, shares.get(id) ?? [])))
      throw notFound('No such saved search.');
    if (row.owner !== who.userId && !who.isAdmin)
      throw permissionDenied('Only its owner (or an admin) deletes a saved search.');
    if (!(await this.repo.delete(id))) throw notFound('No such saved search.');
  }

  private async visible(who: Identity, row: SavedSearchRow, teams: readonly number[]): Promise<boolean> {
    if (row.owner === who.userId || who.isAdmin || row.share_everyone === 1) return true;
    const mine = new Set(await this.teams.teamsOf(who.userId));
    return teams.some((t) => mine.has(t));
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

function sortRows(rows: SavedSearchRow[], page: PageRequest): SavedSearchRow[] {
  const [term] = page.ordering;
  if (!term) return rows;
  const key = term.field as keyof SavedSearchRow;
  const sorted = [...rows].sort((a, b) => {
    const x = a[key] ?? '';
    const y = b[key] ?? '';
    const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return c === 0 ? a.id - b.id : c;
  });
  return term.desc ? sorted.reverse() : sorted;
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
