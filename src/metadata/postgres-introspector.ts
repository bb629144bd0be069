import {
  type ColumnMetadata,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  type Kysely,
  PostgresDialect,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely';

/**
 * Kysely's PostgreSQL dialect with an introspector that reads only the connection's own
 * schema (`current_schema()`, the metadata store's search_path).
 *
 * Kysely's own introspector reads every schema's catalog and calls functions on each
 * schema's and table's name (`has_schema_privilege`, `pg_get_serial_sequence`): a schema
 * another application or test drops during that read fails it with 3F000, and the migrator
 * (the one reader of introspection here) failed with it however often it read again while
 * schemas came and went. Ours joins the catalog by oid and names no schema but ours.
 */
export class OwnSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new OwnSchemaIntrospector(db);
  }
}

interface ColumnRow {
  table: string;
  table_type: string;
  schema: string;
  column: string;
  type: string;
  type_schema: string;
  not_null: boolean;
  has_default: boolean;
  auto_incrementing: boolean;
  column_description: string | null;
}

class OwnSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ nspname: string }>`select nspname from pg_catalog.pg_namespace`.execute(
      this.db,
    );
    return rows.map((r) => ({ name: r.nspname }));
  }

  async getTables(
    options: DatabaseMetadataOptions = { withInternalKyselyTables: false },
  ): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select c.relname as "table", c.relkind as table_type, ns.nspname as "schema",
             a.attname as "column", typ.typname as "type", dtns.nspname as type_schema,
             a.attnotnull as not_null, a.atthasdef as has_default,
             (a.attidentity <> '' or coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid) like 'nextval(%', false))
               as auto_incrementing,
             dsc.description as column_description
        from pg_catalog.pg_class c
        join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
        join pg_catalog.pg_attribute a on a.attrelid = c.oid
        join pg_catalog.pg_type typ on typ.oid = a.atttypid
        join pg_catalog.pg_namespace dtns on dtns.oid = typ.typnamespace
        left join pg_catalog.pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
        left join pg_catalog.pg_description dsc
          on dsc.objoid = c.oid and dsc.objsubid = a.attnum
         and dsc.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass
       where ns.nspname = current_schema()
         and c.relkind in ('r', 'v', 'p')
         and a.attnum > 0 and not a.attisdropped
       order by c.relname, a.attnum`.execute(this.db);
    const internal = new Set([DEFAULT_MIGRATION_TABLE, DEFAULT_MIGRATION_LOCK_TABLE]);
    const tables = new Map<string, { table: TableMetadata; columns: ColumnMetadata[] }>();
    for (const r of rows) {
      if (!options.withInternalKyselyTables && internal.has(r.table)) continue;
      let entry = tables.get(r.table);
      if (!entry) {
        const columns: ColumnMetadata[] = [];
        entry = {
          table: { name: r.table, isView: r.table_type === 'v', schema: r.schema, columns },
          columns,
        };
        tables.set(r.table, entry);
      }
      entry.columns.push({
        name: r.column,
        dataType: r.type,
        dataTypeSchema: r.type_schema,
        isNullable: !r.not_null,
        hasDefaultValue: r.has_default,
        isAutoIncrementing: r.auto_incrementing,
        ...(r.column_description === null ? {} : { comment: r.column_description }),
      });
    }
    return [...tables.values()].map((e) => e.table);
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
