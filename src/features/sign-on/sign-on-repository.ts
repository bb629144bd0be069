import { type Kysely, sql } from 'kysely';
import type { Database } from '../../metadata/schema.js';
import type { NewUserRow, UserRow, UserUpdate } from '../identity/index.js';
import { EVERYONE } from '../teams/index.js';
import type { SignInRow } from './sign-ins-table.js';

/** Sign-ins under way, and the users and team memberships single sign-on keeps. */
export class SignOnRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Keeps a sign-in under way, and forgets the expired ones and, beyond `max` rows, the
   * oldest: anonymous starts cannot grow the table without bound.
   */
  async begin(row: SignInRow, max: number): Promise<void> {
    await this.db.deleteFrom('oidc_sign_ins').where('expires_at', '<', new Date().toISOString()).execute();
    await this.db.insertInto('oidc_sign_ins').values(row).execute();
    const count = await this.db
      .selectFrom('oidc_sign_ins')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    const over = Number(count?.n ?? 0) - max;
    if (over > 0)
      await this.db
        .deleteFrom('oidc_sign_ins')
        .where('id', 'in', (eb) =>
          eb.selectFrom('oidc_sign_ins').select('id').orderBy('expires_at').orderBy('id').limit(over),
        )
        .execute();
  }

  /** Takes a sign-in under way: the first call gets it, every later one nothing. */
  async take(id: string): Promise<SignInRow | undefined> {
    const row = await this.db
      .deleteFrom('oidc_sign_ins')
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row && row.expires_at >= new Date().toISOString() ? row : undefined;
  }

  byIdentity(issuer: string, subject: string): Promise<UserRow | undefined> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .where('oidc_issuer', '=', issuer)
      .where('oidc_subject', '=', subject)
      .executeTakeFirst();
  }

  /** The user whose name equals `username` ignoring case (a look-alike counts as taken). */
  byUsername(username: string): Promise<UserRow | undefined> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .where(sql<string>`lower(username)`, '=', username.toLowerCase())
      .executeTakeFirst();
  }

  insertUser(row: NewUserRow): Promise<UserRow> {
    return this.db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow();
  }

  updateUser(id: number, patch: UserUpdate): Promise<UserRow | undefined> {
    return this.db.updateTable('users').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
  }

  /**
   * Makes the user a member of exactly those teams marked `provider_synced` whose names
   * equal these (ignoring case), creating (synced) the names no team has, in one
   * transaction. A team of such a name that is not synced is left alone (neither joined
   * nor created again), and so are the user's memberships of unsynced teams. `everyone`
   * is every user's already and is never a row. Answers whether the memberships changed.
   */
  setSyncedTeams(userId: number, names: readonly string[]): Promise<boolean> {
    const byLower = new Map<string, string>();
    for (const raw of names) {
      const name = raw.trim();
      if (name && name.length <= MAX_TEAM_NAME && name.toLowerCase() !== EVERYONE)
        if (!byLower.has(name.toLowerCase())) byLower.set(name.toLowerCase(), name);
    }
    const lowered = [...byLower.keys()];
    return this.db.transaction().execute(async (tx) => {
      const existing = lowered.length
        ? await tx
            .selectFrom('teams')
            .select(['id', 'name', 'provider_synced'])
            .where(sql<string>`lower(name)`, 'in', lowered)
            .execute()
        : [];
      const ids = existing.filter((t) => t.provider_synced === 1).map((t) => t.id);
      const taken = new Set(existing.map((t) => t.name.toLowerCase()));
      const now = new Date().toISOString();
      for (const [lower, name] of byLower) {
        if (taken.has(lower)) continue;
        const team = await tx
          .insertInto('teams')
          .values({ name, builtin: 0, created_at: now, provider_synced: 1 })
          .returning('id')
          .executeTakeFirstOrThrow();
        ids.push(team.id);
      }
      const before = await tx
        .selectFrom('team_members')
        .innerJoin('teams', 'teams.id', 'team_members.team_id')
        .select('team_members.team_id')
        .where('team_members.user_id', '=', userId)
        .where('teams.provider_synced', '=', 1)
        .execute();
      const had = new Set(before.map((r) => r.team_id));
      const leave = [...had].filter((id) => !ids.includes(id));
      const join = ids.filter((id) => !had.has(id));
      if (leave.length)
        await tx
          .deleteFrom('team_members')
          .where('user_id', '=', userId)
          .where('team_id', 'in', leave)
          .execute();
      if (join.length)
        await tx
          .insertInto('team_members')
          .values(join.map((team_id) => ({ team_id, user_id: userId })))
          .execute();
      return leave.length > 0 || join.length > 0;
    });
  }
}

/** The longest team name (as `/api/teams` takes it): a longer group makes no team. */
const MAX_TEAM_NAME = 100;
