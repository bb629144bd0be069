import type { Kysely } from 'kysely';
import type { Database, NewUserRow, UserRow, UserUpdate } from '../../metadata/schema.js';
import { EVERYONE } from '../teams/teams-table.js';
import type { SignInRow } from './sign-ins-table.js';

/** Sign-ins under way, and the users and team memberships single sign-on keeps. */
export class SignOnRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Keeps a sign-in under way, and forgets the expired ones. */
  async begin(row: SignInRow): Promise<void> {
    await this.db.deleteFrom('oidc_sign_ins').where('expires_at', '<', new Date().toISOString()).execute();
    await this.db.insertInto('oidc_sign_ins').values(row).execute();
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

  byUsername(username: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
  }

  insertUser(row: NewUserRow): Promise<UserRow> {
    return this.db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow();
  }

  updateUser(id: number, patch: UserUpdate): Promise<UserRow | undefined> {
    return this.db.updateTable('users').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
  }

  /**
   * Makes the user a member of exactly the teams with these names, creating the missing
   * ones, in one transaction. `everyone` is every user's already and is never a row.
   * Answers whether the memberships changed.
   */
  setTeamsByName(userId: number, names: readonly string[]): Promise<boolean> {
    const wanted = [...new Set(names.map((n) => n.trim()).filter((n) => n && n !== EVERYONE))];
    return this.db.transaction().execute(async (tx) => {
      const existing = wanted.length
        ? await tx.selectFrom('teams').select(['id', 'name']).where('name', 'in', wanted).execute()
        : [];
      const ids = existing.map((t) => t.id);
      const now = new Date().toISOString();
      for (const name of wanted.filter((n) => !existing.some((t) => t.name === n))) {
        const team = await tx
          .insertInto('teams')
          .values({ name, builtin: 0, created_at: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        ids.push(team.id);
      }
      const before = await tx
        .selectFrom('team_members')
        .select('team_id')
        .where('user_id', '=', userId)
        .execute();
      const had = new Set(before.map((r) => r.team_id));
      if (had.size === ids.length && ids.every((id) => had.has(id))) return false;
      await tx.deleteFrom('team_members').where('user_id', '=', userId).execute();
      if (ids.length)
        await tx
          .insertInto('team_members')
          .values(ids.map((team_id) => ({ team_id, user_id: userId })))
          .execute();
      return true;
    });
  }
}
