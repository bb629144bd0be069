import type { CreateTableBuilder } from 'kysely';
import type { MetadataDialect } from '../database.js';

/** An auto-increment integer primary key `id`, spelled as each dialect wants it. */
export function idColumn<T extends string>(table: CreateTableBuilder<T, never>, dialect: MetadataDialect) {
  return dialect === 'postgres'
    ? table.addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}
