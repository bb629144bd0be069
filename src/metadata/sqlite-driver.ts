import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { SQLITE_ERROR_CODES } from './sqlite-error-codes.js';

/**
 * The SQLite library under the metadata store.
 *
 * - `node:sqlite` (Node's built-in `DatabaseSync`) on Node 24 and later. better-sqlite3 12
 *   aborts the process there when one of its statements is garbage-collected (an addon
 *   built against Node 24.19+'s headers gets an `ObjectWrap` whose destructor needs a
 *   current environment, which the GC does not have), so Node 24 never loads it.
 * - `better-sqlite3` on Node 20 (no `node:sqlite`) and Node 22 (where `node:sqlite` is
 *   still experimental and prints an ExperimentalWarning). If better-sqlite3 cannot be
 *   loaded there (no native build for this Node), `node:sqlite` stands in when usable.
 *
 * Both behave the same to Kysely and to us: the node:sqlite adapter below gives what
 * better-sqlite3 gives (plain row objects, Buffers for blobs, `undefined` bound as NULL,
 * booleans and objects refused, one statement per `prepare`, errors' `code` the SQLite
 * code name such as SQLITE_CONSTRAINT_UNIQUE).
 */
export type SqliteDriverName = 'node:sqlite' | 'better-sqlite3';

export interface OpenedSqlite {
  /** What Kysely's SqliteDialect takes; its `close()` may be called more than once. */
  readonly database: SqliteDatabase;
  readonly driver: SqliteDriverName;
  /** Runs SQL text (any number of statements), returning nothing. */
  exec(sql: string): void;
}

export interface OpenSqliteOptions {
  /** This library and no other (tests); by default the one this Node wants. */
  driver?: SqliteDriverName;
}

/** The settings every connection gets, on both libraries (as before node:sqlite). */
const PRAGMAS = [
  'PRAGMA journal_mode = WAL',
  'PRAGMA synchronous = NORMAL',
  'PRAGMA foreign_keys = ON',
  'PRAGMA busy_timeout = 5000',
];

/** Opens (creating it if missing) a SQLite database file with the library this Node wants. */
export async function openSqliteDatabase(
  file: string,
  options: OpenSqliteOptions = {},
): Promise<OpenedSqlite> {
  const opened = await openWith(file, options.driver);
  try {
    for (const pragma of PRAGMAS) opened.exec(pragma);
  } catch (err) {
    opened.database.close();
    throw err;
  }
  return opened;
}

/** The library `openSqliteDatabase` uses on this Node unless told otherwise. */
export function preferredSqliteDriver(): SqliteDriverName {
  return nodeMajor() >= 24 && nodeSqlite() ? 'node:sqlite' : 'better-sqlite3';
}

/** Whether this Node has a `node:sqlite` the adapter can use (Node 22.16+, 23.11+, 24). */
export function nodeSqliteAvailable(): boolean {
  return nodeSqlite() !== undefined;
}

async function openWith(file: string, forced: SqliteDriverName | undefined): Promise<OpenedSqlite> {
  const driver = forced ?? preferredSqliteDriver();
  if (driver === 'node:sqlite') {
    const sqlite = nodeSqlite();
    if (!sqlite) throw new Error(`node:sqlite is not usable on Node ${process.version}`);
    return openNodeSqlite(sqlite, file);
  }
  let Database: typeof import('better-sqlite3');
  try {
    Database = (await import('better-sqlite3')).default;
    // The native addon loads with the first database: one in memory tells whether it can.
    new Database(':memory:').close();
  } catch (err) {
    // No native build for this Node (node_modules installed with another one): the
    // built-in library, where there is one.
    const sqlite = forced ? undefined : nodeSqlite();
    if (!sqlite) throw err;
    return openNodeSqlite(sqlite, file);
  }
  const db = new Database(file);
  return { database: db, driver: 'better-sqlite3', exec: (sql) => void db.exec(sql) };
}

function openNodeSqlite(sqlite: NodeSqliteModule, file: string): OpenedSqlite {
  const database = new NodeSqliteDatabase(translated(() => new sqlite.DatabaseSync(file)));
  // better-sqlite3 is built with SQLITE_DEFAULT_CACHE_SIZE=-16000 (16 MB); SQLite's own default is 2 MB.
  database.exec('PRAGMA cache_size = -16000');
  return { database, driver: 'node:sqlite', exec: (sql) => database.exec(sql) };
}

const nodeMajor = () => Number(process.versions.node.split('.')[0]);

// ---- node:sqlite, as much of it as the adapter uses --------------------------------------

type Row = Record<string, unknown>;

interface NodeStatementSync {
  readonly sourceSQL: string;
  columns(): unknown[];
  all(...parameters: unknown[]): Row[];
  run(...parameters: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(...parameters: unknown[]): Iterator<Row, unknown, undefined>;
}

interface NodeDatabaseSync {
  prepare(sql: string): NodeStatementSync;
  exec(sql: string): void;
  close(): void;
}

interface NodeSqliteModule {
  DatabaseSync: new (path: string) => NodeDatabaseSync;
  StatementSync: { prototype: Partial<NodeStatementSync> };
}

let nodeSqliteLookup: { module: NodeSqliteModule | undefined } | undefined;

/**
 * Node's `node:sqlite`, if it has one the adapter can use (with `columns()`, which tells
 * readers from writers: Node 22.16+), loaded without the ExperimentalWarning that some
 * Node versions print on its first load (22.x, and 24.x before the module left experimental):
 * a library inside the server is none of the user's business.
 */
function nodeSqlite(): NodeSqliteModule | undefined {
  if (!nodeSqliteLookup) {
    const candidate = withoutSqliteWarning(() => process.getBuiltinModule?.('node:sqlite')) as
      | Partial<NodeSqliteModule>
      | undefined;
    const usable =
      typeof candidate?.DatabaseSync === 'function' &&
      typeof candidate.StatementSync?.prototype?.columns === 'function' &&
      typeof candidate.StatementSync.prototype.iterate === 'function';
    nodeSqliteLookup = { module: usable ? (candidate as NodeSqliteModule) : undefined };
  }
  return nodeSqliteLookup.module;
}

/** Runs `load` with Node's "SQLite is an experimental feature" warning, and no other, dropped. */
function withoutSqliteWarning<T>(load: () => T): T {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    if (isSqliteExperimentalWarning(warning, rest[0])) return;
    return Reflect.apply(emitWarning, this, [warning, ...rest]);
  } as typeof process.emitWarning;
  try {
    return load();
  } finally {
    process.emitWarning = emitWarning;
  }
}

function isSqliteExperimentalWarning(warning: string | Error, typeOrOptions: unknown): boolean {
  const type =
    typeof typeOrOptions === 'string'
      ? typeOrOptions
      : ((typeOrOptions as { type?: unknown } | undefined)?.type ??
        (warning instanceof Error ? warning.name : undefined));
  const message = typeof warning === 'string' ? warning : warning?.message;
  return (
    type === 'ExperimentalWarning' &&
    typeof message === 'string' &&
    message.startsWith('SQLite is an experimental feature')
  );
}

/** better-sqlite3's `Database`, as far as Kysely and we use it, over node:sqlite. */
class NodeSqliteDatabase implements SqliteDatabase {
  #db: NodeDatabaseSync;
  #open = true;

  constructor(db: NodeDatabaseSync) {
    this.#db = db;
  }

  prepare(sql: string): SqliteStatement {
    const statement = translated(() => this.#db.prepare(sql));
    // node:sqlite compiles the first statement and drops the rest; better-sqlite3 refuses.
    if (!onlyCommentsAndSpace(sql.slice(statement.sourceSQL.length)))
      throw new RangeError('The supplied SQL string contains more than one statement');
    return new NodeSqliteStatement(statement);
  }

  exec(sql: string): void {
    translated(() => this.#db.exec(sql));
  }

  close(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#db.close();
  }
}

class NodeSqliteStatement implements SqliteStatement {
  readonly reader: boolean;
  #statement: NodeStatementSync;

  constructor(statement: NodeStatementSync) {
    this.#statement = statement;
    this.reader = statement.columns().length > 0;
  }

  all(parameters: ReadonlyArray<unknown>): unknown[] {
    this.#mustRead();
    const values = bindable(parameters);
    return translated(() => this.#statement.all(...values)).map(plainRow);
  }

  run(parameters: ReadonlyArray<unknown>): { changes: number | bigint; lastInsertRowid: number | bigint } {
    const values = bindable(parameters);
    const { changes, lastInsertRowid } = translated(() => this.#statement.run(...values));
    return { changes, lastInsertRowid };
  }

  iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    this.#mustRead();
    const values = bindable(parameters);
    const rows = translated(() => this.#statement.iterate(...values));
    const iterator: IterableIterator<unknown> = {
      next: () => {
        const step = translated(() => rows.next());
        return step.done ? { done: true, value: undefined } : { done: false, value: plainRow(step.value) };
      },
      // Leaving a loop early resets the statement, as better-sqlite3 does.
      return: (value?: unknown) => {
        rows.return?.();
        return { done: true, value };
      },
      [Symbol.iterator]: () => iterator,
    };
    return iterator;
  }

  #mustRead(): void {
    if (!this.reader) throw new TypeError('This statement does not return data. Use run() instead');
  }
}

const BIND_ERROR = 'SQLite3 can only bind numbers, strings, bigints, buffers, and null';

/**
 * The parameters as better-sqlite3 binds them: `undefined` as NULL; a boolean, a Date or
 * any other object refused (node:sqlite would bind a boolean as 0/1, or read an object
 * as named parameters).
 */
function bindable(parameters: ReadonlyArray<unknown>): unknown[] {
  const values = new Array<unknown>(parameters.length);
  for (let i = 0; i < parameters.length; i++) {
    const value = parameters[i];
    const type = typeof value;
    if (type === 'number' || type === 'string' || type === 'bigint' || value === null) values[i] = value;
    else if (value === undefined) values[i] = null;
    else if (value instanceof Uint8Array) values[i] = value;
    else if (ArrayBuffer.isView(value))
      values[i] = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    else throw new TypeError(BIND_ERROR);
  }
  return values;
}

/** A row as better-sqlite3 gives it: an ordinary object (node:sqlite's have no prototype), blobs as Buffers. */
function plainRow(row: Row): Row {
  const out: Row = {};
  for (const key in row) {
    let value = row[key];
    if (value instanceof Uint8Array && !Buffer.isBuffer(value))
      value = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    if (key === '__proto__')
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  }
  return out;
}

/** Whether SQL text is only white space, `;`, and comments (what better-sqlite3 allows after a statement). */
function onlyCommentsAndSpace(text: string): boolean {
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x3b /* ; */ || (c >= 0x09 && c <= 0x0d)) i++;
    else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (text.startsWith('--', i)) {
      const end = text.indexOf('\n', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else return false;
  }
  return true;
}

/** Runs `fn`; a SQLite error it throws gets better-sqlite3's `code` (SQLITE_BUSY, SQLITE_CONSTRAINT_UNIQUE, …). */
function translated<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    const e = err as { code?: unknown; errcode?: unknown } | null;
    if (e && e.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number')
      e.code = SQLITE_ERROR_CODES.get(e.errcode) ?? `UNKNOWN_SQLITE_ERROR_${e.errcode}`;
    throw err;
  }
}
