import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { COMPONENTS } from '../../src/features/index.js';
import { migrationsOf } from '../../src/features/root.js';
import { openMetadataDb } from '../../src/metadata/database.js';
import {
  nodeSqliteAvailable,
  type OpenedSqlite,
  openSqliteDatabase,
  preferredSqliteDriver,
  type SqliteDriverName,
} from '../../src/metadata/sqlite-driver.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const major = Number(process.versions.node.split('.')[0]);
const dir = mkdtempSync(path.join(tmpdir(), 'logscope-sqlite-driver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = () => path.join(dir, `db-${++files}.sqlite`);

describe('choice of SQLite library', () => {
  it('is libsql before Node 24 and node:sqlite from Node 24 on', () => {
    if (major < 22) expect(nodeSqliteAvailable()).toBe(false);
    if (major >= 24) expect(nodeSqliteAvailable()).toBe(true);
    expect(preferredSqliteDriver()).toBe(major >= 24 ? 'node:sqlite' : 'libsql');
  });

  it('is what the metadata store opens with', async () => {
    const meta = await openMetadataDb({
      databaseUrl: '',
      dataDir: path.join(dir, 'meta'),
      migrations: migrationsOf(COMPONENTS),
    });
    try {
      expect(meta.sqliteDriver).toBe(preferredSqliteDriver());
      expect(await meta.db.selectFrom('users').select('id').execute()).toEqual([]);
    } finally {
      await meta.close();
    }
  });

  it('prints no warning when it loads (node:sqlite is experimental, and says so, on some Nodes)', () => {
    const script = `
      const m = await import(${JSON.stringify(path.join(root, 'src/metadata/sqlite-driver.ts'))});
      const s = await m.openSqliteDatabase(${JSON.stringify(freshFile())});
      s.database.prepare('select 1 as one').all([]);
      s.database.close();
      console.log(s.driver);`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, NODE_NO_WARNINGS: '', NODE_OPTIONS: '' },
    });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe(preferredSqliteDriver());
  });
});

/**
 * What Kysely and the repositories get from either library: the same answers, through
 * one adapter. libsql runs on every Node (prebuilt binaries); node:sqlite from 22.16.
 */
const drivers: Array<{ driver: SqliteDriverName; skip: string | false }> = [
  { driver: 'libsql', skip: false },
  {
    driver: 'node:sqlite',
    skip:
      !nodeSqliteAvailable() &&
      `Node ${process.version} has no usable node:sqlite (needs 22.16+); CI's Node 24 run covers the adapter`,
  },
];

describe.each(drivers)('$driver, as Kysely uses it', ({ driver, skip }) => {
  const open = async (): Promise<OpenedSqlite> => {
    const sqlite = await openSqliteDatabase(freshFile(), { driver });
    sqlite.exec('create table t (id integer primary key autoincrement, n integer, s text unique, x)');
    return sqlite;
  };
  const rows = (sqlite: OpenedSqlite, sql: string, params: unknown[] = []) =>
    sqlite.database.prepare(sql).all(params);

  it('opens with the PRAGMAs of the metadata store', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const sqlite = await open();
    try {
      expect(sqlite.driver).toBe(driver);
      expect(rows(sqlite, 'pragma journal_mode')).toEqual([{ journal_mode: 'wal' }]);
      expect(rows(sqlite, 'pragma synchronous')).toEqual([{ synchronous: 1 }]);
      expect(rows(sqlite, 'pragma foreign_keys')).toEqual([{ foreign_keys: 1 }]);
      expect(rows(sqlite, 'pragma busy_timeout')).toEqual([{ timeout: 5000 }]);
    } finally {
      sqlite.database.close();
    }
  });

  it('opens a file read-only, changing nothing of it (a backup checked against its hash)', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const file = freshFile();
    const made = await openSqliteDatabase(file, { driver });
    made.exec('create table t (n integer); insert into t values (1); pragma journal_mode = delete');
    made.database.close();
    const before = readFileSync(file);
    const sqlite = await openSqliteDatabase(file, { driver, readOnly: true });
    try {
      expect(rows(sqlite, 'select n from t')).toEqual([{ n: 1 }]);
      expect(rows(sqlite, 'pragma journal_mode')).toEqual([{ journal_mode: 'delete' }]);
      expect(() => sqlite.exec('insert into t values (2)')).toThrow();
    } finally {
      sqlite.database.close();
    }
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readdirSync(dir).filter((f) => f.startsWith(path.basename(file)))).toEqual([path.basename(file)]);
  });

  it('tells readers from writers, runs, reads rows as plain objects and iterates', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const sqlite = await open();
    const db = sqlite.database;
    try {
      const insert = db.prepare('insert into t (n, s) values (?, ?)');
      expect(insert.reader).toBe(false);
      expect(insert.run([1, 'a'])).toEqual({ changes: 1, lastInsertRowid: 1 });
      expect(insert.run([2, 'b'])).toEqual({ changes: 1, lastInsertRowid: 2 });
      const returning = db.prepare('insert into t (n, s) values (?, ?) returning id, n, s');
      expect(returning.reader).toBe(true);
      expect(returning.all([3, 'c'])).toEqual([{ id: 3, n: 3, s: 'c' }]);
      expect(db.prepare('update t set n = n + ? where id > ?').run([10, 1])).toEqual({
        changes: 2,
        lastInsertRowid: 3,
      });

      const select = db.prepare('select id, n, s, x from t where id >= ? order by id');
      expect(select.reader).toBe(true);
      const all = select.all([2]) as Array<Record<string, unknown>>;
      expect(all).toStrictEqual([
        { id: 2, n: 12, s: 'b', x: null },
        { id: 3, n: 13, s: 'c', x: null },
      ]);
      expect(Object.getPrototypeOf(all[0])).toBe(Object.prototype);
      expect(typeof all[0]?.id).toBe('number');
      expect([...db.prepare('select id from t order by id').iterate([])]).toStrictEqual([
        { id: 1 },
        { id: 2 },
        { id: 3 },
      ]);
      // Leaving an iteration early leaves the statement usable.
      const ids = db.prepare('select id from t order by id');
      for (const row of ids.iterate([])) {
        expect(row).toEqual({ id: 1 });
        break;
      }
      expect(ids.all([])).toHaveLength(3);
      expect(() => insert.all([4, 'd'])).toThrow(TypeError);
    } finally {
      db.close();
    }
  });

  it('keeps a compiled statement for its text, but not one an iteration still reads', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const sqlite = await open();
    const db = sqlite.database;
    try {
      const insert = db.prepare('insert into t (n, s) values (?, ?)');
      for (let i = 1; i <= 3; i++) insert.run([i, `s${i}`]);
      const text = 'select id from t where id >= ? order by id';
      const kept = db.prepare(text);
      expect(db.prepare(text)).toBe(kept);
      // An iteration in progress (a stream): the same text meanwhile gets a statement of its own.
      const reading = kept.iterate([1]);
      expect(reading.next().value).toEqual({ id: 1 });
      const meanwhile = db.prepare(text);
      expect(meanwhile).not.toBe(kept);
      expect(meanwhile.all([2])).toEqual([{ id: 2 }, { id: 3 }]);
      expect([...reading]).toEqual([{ id: 2 }, { id: 3 }]);
      expect(db.prepare(text)).toBe(kept);
      // A statement kept from before the table changed reads the table as it is now.
      const star = 'select * from t where id = ?';
      expect(db.prepare(star).all([2])).toEqual([{ id: 2, n: 2, s: 's2', x: null }]);
      sqlite.exec('alter table t add column y integer default 7');
      expect(db.prepare(star).all([2])).toEqual([{ id: 2, n: 2, s: 's2', x: null, y: 7 }]);
    } finally {
      db.close();
    }
  });

  it('binds numbers, strings, bigints, blobs and null; refuses booleans and objects', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const sqlite = await open();
    const db = sqlite.database;
    try {
      const insert = db.prepare('insert into t (n, s, x) values (?, ?, ?)');
      insert.run([undefined, 'undefined is null', 2n ** 40n]);
      insert.run([1.5, 'blob', Buffer.from([1, 2])]);
      insert.run([7, 'typed array', new Uint8Array([3])]);
      expect(rows(sqlite, 'select n, s, x, typeof(x) as tx from t order by id')).toStrictEqual([
        { n: null, s: 'undefined is null', x: 2 ** 40, tx: 'integer' },
        { n: 1.5, s: 'blob', x: Buffer.from([1, 2]), tx: 'blob' },
        { n: 7, s: 'typed array', x: Buffer.from([3]), tx: 'blob' },
      ]);
      const blob = (rows(sqlite, "select x'0a0b' as b")[0] as { b: unknown }).b;
      expect(Buffer.isBuffer(blob)).toBe(true);
      // Booleans, dates and other objects are refused (our tables keep booleans as 0/1).
      for (const value of [true, false, new Date(0), { a: 1 }, [1]])
        expect(() => insert.run([value, 'refused', null])).toThrow(
          'SQLite3 can only bind numbers, strings, bigints, buffers, and null',
        );
      expect(rows(sqlite, "select count(*) as c from t where s = 'refused'")).toEqual([{ c: 0 }]);
    } finally {
      db.close();
    }
  });

  it('refuses more than one statement per prepare, and fails with SQLite error codes', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const sqlite = await open();
    const db = sqlite.database;
    try {
      // node:sqlite says where the first statement ended; libsql runs it alone, as SQLite does.
      if (driver === 'node:sqlite')
        expect(() => db.prepare('select 1; select 2')).toThrow(/more than one statement/);
      else expect(db.prepare('select 1 as a; select 2').all([])).toEqual([{ a: 1 }]);
      expect(db.prepare('select 1 as a; -- done\n /* really */ ;').all([])).toEqual([{ a: 1 }]);
      db.prepare('insert into t (s) values (?)').run(['same']);
      expect(() => db.prepare('insert into t (s) values (?)').run(['same'])).toThrow(
        expect.objectContaining({
          code: 'SQLITE_CONSTRAINT_UNIQUE',
          message: 'UNIQUE constraint failed: t.s',
        }),
      );
      expect(() => db.prepare('select nope from t')).toThrow(
        expect.objectContaining({ code: 'SQLITE_ERROR', message: 'no such column: nope' }),
      );
      sqlite.exec(
        'create table parent (id integer primary key); create table child (p references parent(id))',
      );
      expect(() => db.prepare('insert into child (p) values (?)').run([42])).toThrow(
        expect.objectContaining({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' }),
      );
    } finally {
      db.close();
      db.close();
    }
  });
});
