import type { Kysely } from 'kysely';
import type { PageRequest } from '../../core/list.js';
import { paginate } from '../../metadata/paginate.js';
import type { Database } from '../../metadata/schema.js';
import type { NewTokenRow, TokenRow } from './identity-table.js';

export interface TokenFilter {
  /** Restrict to these owners; undefined = everyone's. */
  ownerId?: number;
  tokenTypes?: Array<'USER' | 'INGEST'>;
  /** Tokens not expired at this ISO time. */
  activeAt: string;
}

export class TokensRepository {
  constructor(private readonly db: Kysely<Database>) {}

  byKeyId(keyId: string): Promise<TokenRow | undefined> {
    return this.db.selectFrom('auth_tokens').selectAll().where('key_id', '=', keyId).executeTakeFirst();
  }

  list(filter: TokenFilter, page: PageRequest) {
    let q = this.db
      .selectFrom('auth_tokens')
      .selectAll()
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', filter.activeAt)]));
    if (filter.ownerId !== undefined) q = q.where('owner_id', '=', filter.ownerId);
    if (filter.tokenTypes?.length) q = q.where('token_type', 'in', filter.tokenTypes);
    return paginate(q, page);
  }

  insert(row: NewTokenRow): Promise<TokenRow> {
    return this.db.insertInto('auth_tokens').values(row).returningAll().executeTakeFirstOrThrow();
  }

  async touch(keyId: string, at: string): Promise<void> {
    await this.db.updateTable('auth_tokens').set({ last_used_at: at }).where('key_id', '=', keyId).execute();
  }

  async deleteByOwner(ownerId: number): Promise<void> {
    await this.db.deleteFrom('auth_tokens').where('owner_id', '=', ownerId).execute();
  }

  async delete(keyId: string): Promise<boolean> {
    const res = await this.db.deleteFrom('auth_tokens').where('key_id', '=', keyId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}
