import type { Identity } from '../../core/identity.js';
import type { Page, PageRequest } from '../../core/list.js';
import {
  conflict,
  type FieldErrors,
  notFound,
  permissionDenied,
  validationError,
} from '../../errors/errors.js';
import type { Team, TeamInput, TeamPatch } from './team-schema.js';
import type { TeamRow, TeamsRepository } from './teams-repository.js';

/**
 * Teams: groups of users that streams name as readers. Admins manage them; every user may
 * list them. The built-in `everyone` holds every user, always, and cannot be changed.
 */
export class TeamsService {
  constructor(
    private readonly teams: TeamsRepository,
    /** Told after teams or their members change: who may read which stream changed. */
    private readonly onChanged: () => void = () => undefined,
  ) {}

  async list(page: PageRequest): Promise<Page<Team>> {
    const res = await this.teams.list(page);
    return { count: res.count, rows: await this.present(res.rows) };
  }

  async get(id: number): Promise<Team> {
    const row = await this.teams.byId(id);
    if (!row) throw notFound();
    return (await this.present([row]))[0] as Team;
  }

  /** The ids of the teams a user is in, `everyone` included. */
  teamsOf(userId: number): Promise<number[]> {
    return this.teams.teamsOf(userId);
  }

  async create(who: Identity, input: TeamInput): Promise<Team> {
    requireAdmin(who);
    const name = await this.checkName(input.name);
    const members = await this.checkMembers(input.members ?? []);
    const row = await this.teams.insert(
      {
        name,
        builtin: 0,
        created_at: new Date().toISOString(),
        provider_synced: input.provider_synced ? 1 : 0,
      },
      members,
    );
    this.onChanged();
    return this.get(row.id);
  }

  /**
   * PATCH: what is given changes; PUT (`replace`): members left out become none, and a
   * `provider_synced` left out becomes false.
   */
  async update(who: Identity, id: number, patch: TeamPatch, replace = false): Promise<Team> {
    requireAdmin(who);
    const row = await this.teams.byId(id);
    if (!row) throw notFound();
    if (row.builtin)
      throw conflict(`The built-in team "${row.name}" holds every user and cannot be changed.`);
    const name = patch.name === undefined ? undefined : await this.checkName(patch.name, id);
    const given = patch.members ?? (replace ? [] : undefined);
    const members = given === undefined ? undefined : await this.checkMembers(given);
    const synced = patch.provider_synced ?? (replace ? false : undefined);
    const changes = {
      ...(name !== undefined ? { name } : {}),
      ...(synced !== undefined ? { provider_synced: synced ? 1 : 0 } : {}),
    };
    if (!(await this.teams.update(id, changes, members))) throw notFound();
    this.onChanged();
    return this.get(id);
  }

  async delete(who: Identity, id: number): Promise<void> {
    requireAdmin(who);
    const row = await this.teams.byId(id);
    if (!row) throw notFound();
    if (row.builtin) throw conflict(`The built-in team "${row.name}" cannot be deleted.`);
    if (!(await this.teams.delete(id))) throw notFound();
    this.onChanged();
  }

  private async present(rows: readonly TeamRow[]): Promise<Team[]> {
    const members = await this.teams.members(rows);
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      members: members.get(r.id) ?? [],
      builtin: r.builtin === 1,
      provider_synced: r.provider_synced === 1,
      created_at: r.created_at,
    }));
  }

  private async checkName(raw: string, self?: number): Promise<string> {
    const name = raw.trim();
    if (!name) throw validationError({ name: ['Must not be blank.'] });
    const other = await this.teams.byName(name);
    if (other && other.id !== self) throw conflict(`Team "${other.name}" already exists.`);
    return name;
  }

  private async checkMembers(given: readonly number[]): Promise<number[]> {
    const ids = [...new Set(given)].sort((a, b) => a - b);
    const existing = await this.teams.existingUsers(ids);
    const missing = ids.filter((id) => !existing.has(id));
    if (missing.length) {
      const errors: FieldErrors = {
        members: [`No user has the id${missing.length > 1 ? 's' : ''} ${missing.slice(0, 20).join(', ')}.`],
      };
      throw validationError(errors);
    }
    return ids;
  }
}

function requireAdmin(who: Identity): void {
  if (!who.isAdmin) throw permissionDenied('Only administrators manage teams.');
}
