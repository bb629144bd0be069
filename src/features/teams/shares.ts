/**
 * Sharing with teams or everyone, as saved searches and log metrics are shared: a thing is
 * seen by its owner, by admins, by every user when shared with everyone and by the members
 * of the teams it is shared with. One rule in one place, in SQL for lists and in code for
 * one thing.
 */
import { type Expression, type Kysely, type SqlBool, sql, type Transaction } from 'kysely';
import type { Identity } from '../../core/identity.js';
import type { Database } from '../../metadata/schema.js';

/** Where a kind of shared thing keeps its rows and their teams. */
export interface ShareTables {
  /** The things: `id`, `owner`, `share_everyone` (1: shared with everyone). */
  readonly things: 'saved_searches' | 'log_metrics';
  /** The teams each is shared with: `<key>`, `team_id`. */
  readonly teams: 'saved_search_teams' | 'log_metric_teams';
  readonly key: 'saved_search_id' | 'log_metric_id';
}

/** Who lists: the things they may see are theirs, shared with them, or (`all`) every one. */
export interface ShareReader {
  userId: number;
  /** The teams the reader belongs to. */
  teams: readonly number[];
  /** An admin asking for every thing. */
  all: boolean;
}

/** SQL: the row of `t.things` is shared with the reader (with everyone, or a team of theirs). */
export function sharedWithReader(t: ShareTables, reader: ShareReader): Expression<SqlBool> {
  const everyone = sql<SqlBool>`${sql.ref(`${t.things}.share_everyone`)} = 1`;
  if (!reader.teams.length) return everyone;
  return sql<SqlBool>`(${everyone} or exists (select 1 from ${sql.table(t.teams)} as s where ${sql.ref(`s.${t.key}`)} = ${sql.ref(`${t.things}.id`)} and s.team_id in (${sql.join([...reader.teams])})))`;
}

/** SQL: the reader may see the row of `t.things` (theirs, shared with them, or every one). */
export function seenBy(t: ShareTables, reader: ShareReader): Expression<SqlBool> {
  if (reader.all) return sql<SqlBool>`1 = 1`;
  return sql<SqlBool>`(${sql.ref(`${t.things}.owner`)} = ${reader.userId} or ${sharedWithReader(t, reader)})`;
}

/** The team ids each of these things is shared with (ascending; none: absent). */
export async function teamsOf(
  db: Kysely<Database>,
  t: ShareTables,
  ids: readonly number[],
): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  if (!ids.length) return out;
  const { rows } = await sql<{
    id: number;
    team_id: number;
  }>`select ${sql.ref(t.key)} as id, team_id from ${sql.table(t.teams)} where ${sql.ref(t.key)} in (${sql.join([...ids])}) order by team_id`.execute(
    db,
  );
  for (const r of rows) {
    const id = Number(r.id);
    const list = out.get(id) ?? [];
    list.push(Number(r.team_id));
    out.set(id, list);
  }
  return out;
}

/** Shares thing `id` with exactly `teams` (in the caller's transaction). */
export async function setTeams(
  trx: Transaction<Database>,
  t: ShareTables,
  id: number,
  teams: readonly number[],
) {
  await sql`delete from ${sql.table(t.teams)} where ${sql.ref(t.key)} = ${id}`.execute(trx);
  if (teams.length)
    await sql`insert into ${sql.table(t.teams)} (${sql.ref(t.key)}, team_id) values ${sql.join(
      teams.map((team) => sql`(${id}, ${team})`),
    )}`.execute(trx);
}

/** Which of the given team ids exist. */
export async function existingTeams(db: Kysely<Database>, ids: readonly number[]): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const rows = await db
    .selectFrom('teams')
    .select('id')
    .where('id', 'in', [...ids])
    .execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * Whether `who` may see a thing owned by `row.owner`, shared with everyone or not and with
 * `teams`; `teamsOfUser` is asked only when that is what decides.
 */
export async function maySee(
  who: Pick<Identity, 'userId' | 'isAdmin'>,
  row: { owner: number; share_everyone: number },
  teams: readonly number[],
  teamsOfUser: (userId: number) => Promise<number[]>,
): Promise<boolean> {
  if (row.owner === who.userId || who.isAdmin || row.share_everyone === 1) return true;
  if (!teams.length) return false;
  const mine = new Set(await teamsOfUser(who.userId));
  return teams.some((t) => mine.has(t));
}
