import { type Kysely, sql } from 'kysely';
import type { Page, PageRequest } from '../../core/list.js';
import { paginate } from '../../metadata/paginate.js';
import type { Database } from '../../metadata/schema.js';
import type { TeamsTable } from './teams-table.js';

export interface TeamRow {
  id: number;
  name: string;
  builtin: number;
  created_at: string;
  provider_synced: number;
}

/** Teams and their member rows; `everyone`'s members are every user, read from `users`. */
export class TeamsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  list(page: PageRequest): Promise<Page<TeamRow>> {
    return paginate(this.db.selectFrom('teams').selectAll(), page);
  }

  byId(id: number): Promise<TeamRow | undefined> {
    return this.db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** A team whose name equals `name` ignoring case. */
  byName(name: string): Promise<TeamRow | undefined> {
    return this.db
      .selectFrom('teams')
      .selectAll()
      .where(sql<string>`lower(name)`, '=', name.toLowerCase())
      .executeTakeFirst();
  }

  /** The member ids of each of the given teams (every user for a built-in one), in id order. */
  async members(teams: readonly TeamRow[]): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>(teams.map((t) => [t.id, []]));
    const ids = teams.filter((t) => t.builtin === 0).map((t) => t.id);
    if (ids.length) {
      const rows = await this.db
        .selectFrom('team_members')
        .select(['team_id', 'user_id'])
        .where('team_id', 'in', ids)
        .orderBy('user_id')
        .execute();
      for (const r of rows) out.get(r.team_id)?.push(r.user_id);
    }
    if (teams.some((t) => t.builtin === 1)) {
      const all = (await this.db.selectFrom('users').select('id').orderBy('id').execute()).map((r) => r.id);
      for (const t of teams) if (t.builtin === 1) out.set(t.id, all);
    }
    return out;
  }

  /** The ids of the teams a user is in, the built-in ones included, in id order. */
  async teamsOf(userId: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('teams')
      .select('id')
      .where((eb) =>
        eb.or([
          eb('builtin', '=', 1),
          eb('id', 'in', eb.selectFrom('team_members').select('team_id').where('user_id', '=', userId)),
        ]),
      )
      .orderBy('id')
      .execute();
    return rows.map((r) => r.id);
  }

  /** The ids of the teams each of these users is in, the built-in ones included, in id order. */
  async teamsOfUsers(userIds: readonly number[]): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    if (!userIds.length) return out;
    const [builtin, rows] = await Promise.all([
      this.db.selectFrom('teams').select('id').where('builtin', '=', 1).orderBy('id').execute(),
      this.db
        .selectFrom('team_members')
        .select(['team_id', 'user_id'])
        .where('user_id', 'in', [...userIds])
        .orderBy('team_id')
        .execute(),
    ]);
    for (const id of userIds)
      out.set(
        id,
        builtin.map((t) => t.id),
      );
    for (const r of rows) out.get(r.user_id)?.push(r.team_id);
    for (const list of out.values()) list.sort((a, b) => a - b);
    return out;
  }

  /** Which of these user ids exist. */
  async existingUsers(ids: readonly number[]): Promise<Set<number>> {
    if (!ids.length) return new Set();
    const rows = await this.db
      .selectFrom('users')
      .select('id')
      .where('id', 'in', [...ids])
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  /** Creates a team with its members, in one transaction. */
  insert(
    row: Omit<TeamsTable, 'id' | 'provider_synced'> & { builtin: 0; provider_synced: number },
    members: readonly number[],
  ): Promise<TeamRow> {
    return this.db.transaction().execute(async (tx) => {
      const team = await tx.insertInto('teams').values(row).returningAll().executeTakeFirstOrThrow();
      if (members.length)
        await tx
          .insertInto('team_members')
          .values(members.map((user_id) => ({ team_id: team.id, user_id })))
          .execute();
      return team;
    });
  }

  /**
   * Renames a team, marks it synced from the provider or not, and/or replaces its members,
   * in one transaction; undefined when it is gone.
   */
  update(
    id: number,
    changes: { name?: string; provider_synced?: number },
    members: readonly number[] | undefined,
  ) {
    return this.db.transaction().execute(async (tx) => {
      const team = await (Object.keys(changes).length === 0
        ? tx.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst()
        : tx.updateTable('teams').set(changes).where('id', '=', id).returningAll().executeTakeFirst());
      if (!team || members === undefined) return team;
      await tx.deleteFrom('team_members').where('team_id', '=', id).execute();
      if (members.length)
        await tx
          .insertInto('team_members')
          .values(members.map((user_id) => ({ team_id: id, user_id })))
          .execute();
      return team;
    });
  }

  async delete(id: number): Promise<boolean> {
    const res = await this.db.deleteFrom('teams').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}
