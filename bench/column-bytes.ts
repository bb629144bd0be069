import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

/** DuckDB's block size: a persistent segment lives at an offset inside one (or spans more). */
const BLOCK_BYTES = 262_144;

/**
 * Bytes each column of `table` takes in a closed DuckDB file, from its segments'
 * places (`pragma_storage_info`): a segment runs from its offset to the next segment's
 * in the same block (or the block's end), plus whole blocks it continues into. An
 * estimate to the block's free tail, exact enough to say where a store's bytes go.
 * Validity (NULL) masks are counted with their column.
 */
export async function columnBytes(
  file: string,
  tables: readonly string[],
): Promise<Array<{ table: string; column: string; bytes: number; compression: string }>> {
  const instance = await DuckDBInstance.create(path.resolve(file), { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  try {
    // Extra fields in columns of their own (field-columns.ts) are named by their field.
    const fieldOf = new Map<string, string>();
    const own = await conn
      .runAndReadAll('SELECT key, col FROM field_columns')
      .then((r) => r.getRows())
      .catch(() => []);
    for (const [key, col] of own) fieldOf.set(String(col), `${String(col)} (${String(key)})`);
    const out: Array<{ table: string; column: string; bytes: number; compression: string }> = [];
    for (const table of tables) {
      const reader = await conn.runAndReadAll(
        `SELECT column_name, segment_type, compression, block_id, block_offset,
                len(coalesce(additional_block_ids, [])) AS extra
         FROM pragma_storage_info('${table}') WHERE persistent AND block_id >= 0`,
      );
      const byBlock = new Map<string, Array<{ column: string; offset: number }>>();
      const bytes = new Map<string, number>();
      const compression = new Map<string, Set<string>>();
      for (const r of reader.getRowObjectsJS() as Array<Record<string, unknown>>) {
        const column = String(r.column_name);
        const block = String(r.block_id);
        byBlock.set(block, [...(byBlock.get(block) ?? []), { column, offset: Number(r.block_offset) }]);
        bytes.set(column, (bytes.get(column) ?? 0) + Number(r.extra) * BLOCK_BYTES);
        if (r.segment_type !== 'VALIDITY')
          compression.set(column, (compression.get(column) ?? new Set()).add(String(r.compression)));
      }
      for (const segments of byBlock.values()) {
        segments.sort((a, b) => a.offset - b.offset);
        segments.forEach((s, i) => {
          const end = segments[i + 1]?.offset ?? BLOCK_BYTES;
          bytes.set(s.column, (bytes.get(s.column) ?? 0) + end - s.offset);
        });
      }
      for (const [column, b] of bytes)
        out.push({
          table,
          column: (table === 'events' && fieldOf.get(column)) || column,
          bytes: b,
          compression: [...(compression.get(column) ?? [])].join(', '),
        });
    }
    return out.sort((a, b) => b.bytes - a.bytes);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}
