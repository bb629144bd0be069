import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Database } from '../../metadata/schema.js';
import type { StreamsTable } from './streams-table.js';

export type StreamRow = Selectable<StreamsTable>;

export interface Readers {
  teams: number[];
  users: number[];
}

type NewStream = Omit<StreamsTable, 'id'>;
type StreamChange = Partial<Omit<NewStream, 'builtin' | 'created_at' | 'owner'>>;

/** Streams and their readers. */
export class StreamsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Every stream, in id order: few enough to hold (they are rules, not data). */
  all(): Promise<StreamRow[]> {
    return this.db.selectFrom('streams').selectAll().orderBy('id').execute();
  }

  byId(id: number): Promise<StreamRow | undefined> {
    return this.db.selectFrom('streams').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** A stream whose title equals `title` ignoring case. */
  byTitle(title: string): Promise<StreamRow | undefined> {
    return this.db
      .selectFrom('streams')
      .selectAll()
      .where(sql<string>`lower(title)`, '=', title.toLowerCase())
      .executeTakeFirst();
  }

  /** The readers of every stream, by stream id, ids ascending. */
  async readers(): Promise<Map<number, Readers>> {
    const rows = await this.db
      .selectFrom('stream_readers')
      .select(['stream_id', 'team_id', 'user_id'])
      .orderBy('stream_id')
      .execute();
    const out = new Map<number, Readers>();
    for (const r of rows) {
      let readers = out.get(r.stream_id);
      if (!readers) {
        readers = { teams: [], users: [] };
        out.set(r.stream_id, readers);
      }
      if (r.team_id !== null) readers.teams.push(r.team_id);
      if (r.user_id !== null) readers.users.push(r.user_id);
    }
    for (const r of out.values()) {
      r.teams.sort((a, b) => a - b);
      r.users.sort((a, b) => a - b);
    }
    return out;
  }

  /** Which of these team ids and user ids exist. */
  async existing(readers: Readers): Promise<{ teams: Set<number>; users: Set<number> }> {
    const [teams, users] = await Promise.all([
      readers.teams.length
        ? this.db.selectFrom('teams').select('id').where('id', 'in', readers.teams).execute()
        : [],
      readers.users.length
        ? this.db.selectFrom('users').select('id').where('id', 'in', readers.users).execute()
        : [],
    ]);
    return { teams: new Set(teams.map((t) => t.id)), users: new Set(users.map((u) => u.id)) };
  }

  insert(row: NewStream, readers: Readers): Promise<StreamRow> {
    return this.db.transaction().execute(async (tx) => {
      const stream = await tx.insertInto('streams').values(row).returningAll().executeTakeFirstOrThrow();
      await setReaders(tx, stream.id, readers);
      return stream;
    });
  }

  /** Changes a stream and, when given, replaces its readers, in one transaction. */
  update(id: number, change: StreamChange, readers: Readers | undefined): Promise<StreamRow | undefined> {
    return this.db.transaction().execute(async (tx) => {
      const stream = await tx
        .updateTable('streams')
        .set(change)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      if (stream && readers) await setReaders(tx, id, readers);
      return stream;
    });
  }

  async delete(id: number): Promise<boolean> {
    const res = await this.db.deleteFrom('streams').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}

async function setReaders(tx: Transaction<Database>, streamId: number, readers: Readers): Promise<void> {
  await tx.deleteFrom('stream_readers').where('stream_id', '=', streamId).execute();
  const rows = [
    ...readers.teams.map((team_id) => ({ stream_id: streamId, team_id, user_id: null })),
    ...readers.users.map((user_id) => ({ stream_id: streamId, team_id: null, user_id })),
  ];
  if (rows.length) await tx.insertInto('stream_readers').values(rows).execute();
}
