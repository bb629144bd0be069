import type { DuckDBConnection, DuckDBPreparedStatement, DuckDBResult, DuckDBValue } from '@duckdb/node-api';
import type { SqlValue } from '../sql/sql-params.js';
import { DuckDBResultReader } from './duckdb-api.js';
import type { Compiled } from './duckdb-plans.js';
import { duckDbValue } from './duckdb-schema.js';

/** A bound value: the query layer's, or (tests, benchmarks) one of DuckDB's own. */
export type Bound = SqlValue | DuckDBValue;

/** SQL and values, or (word index) a function building them when the statement is planned. */
export type Statement = string | (() => Compiled);
const lazy = (build: () => Compiled) => {
  const q = build();
  return { sql: q.sql, values: q.params.values };
};

/**
 * The order of statements and writes on one DuckDB database: every statement on `events`
 * is prepared and started through `start`, every write through `write`.
 */
export class StatementGate {
  /**
   * Statements between prepare and start, and the write waiting for them (see `start`).
   * DuckDB 1.5.5 (node-api 1.5.5-r.5) reads corrupt values from a statement prepared
   * before a write to `events` committed and started after it (measured: a quarter of the
   * rows of an ORDER BY over a young table, e.g. "tcp newline hello" as
   * "tcp newline hel\u0011\u0000"; bench/read-integrity-gap.ts). Started, a statement keeps
   * its snapshot and later commits are harmless; so no write commits while one is planned.
   */
  private planning = 0;
  private planned: (() => void) | null = null;
  /** Set while a write waits or runs: new statements wait for it (writes are not starved). */
  private writing: Promise<void> | null = null;
  private writeChain: Promise<unknown> = Promise.resolve();
  /**
   * The statement last started on each connection: a connection runs one at a time (a
   * connection's pending statement is closed when it prepares the next one).
   */
  private readonly lastOn = new WeakMap<DuckDBConnection, Promise<unknown>>();

  /**
   * Runs a write to the table (append, delete, checkpoint) once no statement is being
   * planned, one write at a time; statements wait to be planned until it is done.
   */
  write<T>(fn: () => T | Promise<T>): Promise<T> {
    const run = this.writeChain.then(async () => {
      let done!: () => void;
      this.writing = new Promise<void>((r) => {
        done = r;
      });
      try {
        while (this.planning > 0)
          await new Promise<void>((r) => {
            this.planned = r;
          });
        return await fn();
      } finally {
        this.writing = null;
        done();
      }
    });
    this.writeChain = run.catch(() => undefined);
    return run;
  }

  /**
   * Prepares, binds and starts a statement with no write committing in between (see
   * `planning`), then runs it: a materialized result, or with `streaming` one read chunk
   * by chunk. Every statement on `events` goes through here.
   */
  start(
    conn: DuckDBConnection,
    sql: Statement,
    values: readonly Bound[],
    streaming = false,
  ): Promise<DuckDBResult> {
    const run = (this.lastOn.get(conn) ?? Promise.resolve()).then(() =>
      this.startNow(conn, sql, values, streaming),
    );
    this.lastOn.set(
      conn,
      run.catch(() => undefined),
    );
    return run;
  }

  private async startNow(
    conn: DuckDBConnection,
    statement: Statement,
    given: readonly Bound[],
    streaming: boolean,
  ): Promise<DuckDBResult> {
    while (this.writing) await this.writing;
    this.planning++;
    let prepared: DuckDBPreparedStatement | undefined;
    let pending: ReturnType<DuckDBPreparedStatement['start']>;
    try {
      // A statement built here (word index ranges) sees exactly the writes its snapshot sees.
      const { sql, values } =
        typeof statement === 'string' ? { sql: statement, values: given } : lazy(statement);
      prepared = await conn.prepare(sql);
      if (values.length) prepared.bind(values.map(duckDbValue));
      pending = streaming ? prepared.startStream() : prepared.start();
    } catch (err) {
      prepared?.destroySync();
      throw err;
    } finally {
      this.planning--;
      if (this.planning === 0 && this.planned) {
        const wake = this.planned;
        this.planned = null;
        wake();
      }
    }
    try {
      return await pending.getResult();
    } finally {
      prepared.destroySync();
    }
  }

  /** `start`, every row read: what `runAndReadAll` does, without its gap between prepare and start. */
  async readAll(conn: DuckDBConnection, sql: Statement, values: readonly Bound[] = []) {
    const reader = new DuckDBResultReader(await this.start(conn, sql, values));
    await reader.readAll();
    return reader;
  }
}
