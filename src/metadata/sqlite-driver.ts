import { pathToFileURL } from 'node:url';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { SQLITE_ERROR_CODES } from './sqlite-error-codes.js';

/**
 * The SQLite library under the metadata store; neither compiles anything at install.
 *
 * - `node:sqlite` (Node's built-in `DatabaseSync`) on Node 24 and later.
 * - `libsql` (Turso's SQLite with better-sqlite3's API; prebuilt binaries from the npm
 *   registry) on Node 20 (no `node:sqlite`) and Node 22 (where `node:sqlite` is still
 *   experimental). If libsql cannot be loaded (no binary for this platform),
 *   `node:sqlite` stands in when usable. (better-sqlite3, used before, compiled SQLite
 *   at every `npm ci` where its prebuilt binary could not be downloaded, and its
 *   statements abort the process on Node 24.19+ when garbage-collected.)
 *
 * One adapter gives Kysely and us the same from both: plain row objects, Buffers for
 * blobs, `undefined` bound as NULL, booleans and objects refused (libsql aborts the
 * process on a boolean: they never reach it), errors' `code` the SQLite code name such as
 * SQLITE_CONSTRAINT_UNIQUE. node:sqlite also refuses a second statement in one `prepare`
 * (it says where the first ended; libsql does not, and runs the first, as SQLite does).
 */
export type SqliteDriverName = 'node:sqlite' | 'libsql';

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
  /**
   * Opened read-only, changing nothing of the file or its folder (no journal mode set, no
   * `-wal` or `-shm` made: a backup's copy, checked against its hash, stays as it was), for
   * a file no process writes. The file must exist.
   */
  readOnly?: boolean;
}

/** The settings every connection gets, on both libraries. */
const PRAGMAS = [
  // First: setting the journal mode takes a lock, and without a busy timeout a lock another
  // process holds that moment (a CLI command closing, which checkpoints) fails it at once.
  'PRAGMA busy_timeout = 5000',
  'PRAGMA journal_mode = WAL',
  'PRAGMA synchronous = NORMAL',
  'PRAGMA foreign_keys = ON',
  // SQLite's own default page cache is 2 MB; the metadata store has had 16 MB.
  'PRAGMA cache_size = -16000',
];

/** Opens (creating it if missing) a SQLite database file with the library this Node wants. */
export async function openSqliteDatabase(
  file: string,
  options: OpenSqliteOptions = {},
): Promise<OpenedSqlite> {
  const opened = await openWith(file, options.driver, options.readOnly === true);
  try {
    for (const pragma of options.readOnly ? PRAGMAS.slice(0, 1) : PRAGMAS) opened.exec(pragma);
  } catch (err) {
    opened.database.close();
    throw err;
  }
  return opened;
}

/** The library `openSqliteDatabase` uses on this Node unless told otherwise. */
export function preferredSqliteDriver(): SqliteDriverName {
  return nodeMajor() >= 24 && nodeSqlite() ? 'node:sqlite' : 'libsql';
}

/** Whether this Node has a `node:sqlite` the adapter can use (Node 22.16+, 23.11+, 24). */
export function nodeSqliteAvailable(): boolean {
  return nodeSqlite() !== undefined;
}

async function openWith(
  file: string,
  forced: SqliteDriverName | undefined,
  readOnly: boolean,
): Promise<OpenedSqlite> {
  const driver = forced ?? preferredSqliteDriver();
  if (driver === 'node:sqlite') {
    const sqlite = nodeSqlite();
    if (!sqlite) throw new Error(`node:sqlite is not usable on Node ${process.version}`);
    return openNodeSqlite(sqlite, file, readOnly);
  }
  let Database: typeof import('libsql');
  try {
    Database = (await import('libsql')).default;
  } catch (err) {
    // No libsql binary for this platform: the built-in library, where there is one.
    const sqlite = forced ? undefined : nodeSqlite();
    if (!sqlite) throw err;
    return openNodeSqlite(sqlite, file, readOnly);
  }
  const database = new AdaptedDatabase(
    // libsql ignores its `readonly` option; SQLite's own URI parameters hold.
    translated(() => new Database(readOnly ? `${pathToFileURL(file).href}?mode=ro&immutable=1` : file)),
  );
  return { database, driver: 'libsql', exec: (sql) => database.exec(sql) };
}

function openNodeSqlite(sqlite: NodeSqliteModule, file: string, readOnly: boolean): OpenedSqlite {
  const database = new AdaptedDatabase(
    translated(() =>
      readOnly ? new sqlite.DatabaseSync(file, { readOnly: true }) : new sqlite.DatabaseSync(file),
    ),
  );
  return { database, driver: 'node:sqlite', exec: (sql) => database.exec(sql) };
}

const nodeMajor = () => Number(process.versions.node.split('.')[0]);

// ---- the libraries, as much of them as the adapter uses ----------------------------------

type Row = Record<string, unknown>;

/** A statement of either library (`sourceSQL`: node:sqlite's, the text it compiled). */
interface LibraryStatement {
  readonly sourceSQL?: string;
  columns(): unknown[];
  all(...parameters: unknown[]): unknown[];
  run(...parameters: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(...parameters: unknown[]): Iterator<unknown, unknown, undefined>;
}

interface LibraryDatabase {
  prepare(sql: string): LibraryStatement;
  exec(sql: string): unknown;
  close(): unknown;
}

interface NodeSqliteModule {
  DatabaseSync: new (path: string, options?: { readOnly?: boolean }) => LibraryDatabase;
  StatementSync: { prototype: Partial<LibraryStatement> };
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

/**
 * Compiled statements kept for their SQL text, at most this many (the least recently used
 * goes): Kysely prepares every query anew, and compiling was ~0.14 ms of the ~2 ms of main
 * thread a Search costs. The store's queries are a few hundred texts.
 */
const KEPT_STATEMENTS = 256;

/** What Kysely's SqliteDialect expects of a database (better-sqlite3's API), over either library. */
class AdaptedDatabase implements SqliteDatabase {
  #db: LibraryDatabase;
  #open = true;
  readonly #kept = new Map<string, AdaptedStatement>();

  constructor(db: LibraryDatabase) {
    this.#db = db;
  }

  prepare(sql: string): SqliteStatement {
    const kept = this.#kept.get(sql);
    if (kept && !kept.iterating) {
      this.#kept.delete(sql);
      this.#kept.set(sql, kept);
      return kept;
    }
    const statement = translated(() => this.#db.prepare(sql));
    // node:sqlite compiles the first statement and drops the rest: refused instead.
    const source = statement.sourceSQL;
    if (source !== undefined && !onlyCommentsAndSpace(sql.slice(source.length)))
      throw new RangeError('The supplied SQL string contains more than one statement');
    const adapted = new AdaptedStatement(statement);
    // A kept statement still being read (a stream) is not shared: this one is used once.
    if (!kept) {
      if (this.#kept.size >= KEPT_STATEMENTS) this.#kept.delete(this.#kept.keys().next().value as string);
      this.#kept.set(sql, adapted);
    }
    return adapted;
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

class AdaptedStatement implements SqliteStatement {
  readonly reader: boolean;
  /** Between an `iterate` and its end: the statement cannot run anything else meanwhile. */
  iterating = false;
  #statement: LibraryStatement;

  constructor(statement: LibraryStatement) {
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
    this.iterating = true;
    const iterator: IterableIterator<unknown> = {
      next: () => {
        let step: IteratorResult<unknown>;
        try {
          step = translated(() => rows.next());
        } catch (err) {
          this.iterating = false;
          throw err;
        }
        if (step.done) this.iterating = false;
        return step.done ? { done: true, value: undefined } : { done: false, value: plainRow(step.value) };
      },
      // Leaving a loop early resets the statement.
      return: (value?: unknown) => {
        rows.return?.();
        this.iterating = false;
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
 * The parameters as the metadata store binds them: `undefined` as NULL; a boolean, a Date
 * or any other object refused (node:sqlite would bind a boolean as 0/1, or read an object
 * as named parameters; libsql aborts the process on a boolean).
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

/**
 * A row as the repositories read it: an ordinary object (node:sqlite's have no
 * prototype), blobs as Buffers (node:sqlite gives Uint8Arrays, libsql ArrayBuffers).
 */
function plainRow(raw: unknown): Row {
  const row = raw as Row;
  const out: Row = {};
  for (const key in row) {
    let value = row[key];
    if (value instanceof Uint8Array && !Buffer.isBuffer(value))
      value = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    else if (value instanceof ArrayBuffer) value = Buffer.from(value);
    if (key === '__proto__')
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  }
  return out;
}

/** Whether SQL text is only white space, `;`, and comments (allowed after a statement). */
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

/** Runs `fn`; a SQLite error node:sqlite throws gets the code's name as `code` (SQLITE_BUSY, SQLITE_CONSTRAINT_UNIQUE, …), as libsql's have. */
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
