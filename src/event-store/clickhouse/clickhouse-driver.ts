import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { ExecOptions, SearchPlan } from '../query-plan.js';
import type { ResultRow, StatementRows } from '../result-shaper.js';
import type { StoreDriver, StreamCursor } from '../store-dialect.js';
import { clickHouseError } from './clickhouse-errors.js';
import { clickHouseLiteral } from './clickhouse-literal.js';
import { type Compiled, searchRowsSql } from './clickhouse-plans.js';

/** ClickHouse's default longest query text (bytes; `max_query_size`). */
const MAX_QUERY_SIZE = 262_144;

/** A statement's query id: its work's tag (`ExecOptions.tag`) and a random part. */
const tagged = (tag: string | undefined) => (tag === undefined ? randomUUID() : `${tag}:${randomUUID()}`);

/**
 * ClickHouse's driver, over the official HTTP client: one client per listed server,
 * statements (and the store's inserts, `client`) spread over them in turn. A statement
 * stopped through its signal ends its request and is killed on the server (`KILL
 * QUERY`, which stops its work on every shard): ClickHouse does not end an HTTP query
 * whose client went away.
 */
export class ClickHouseDriver implements StoreDriver<Compiled> {
  private next = 0;

  constructor(
    readonly clients: readonly ClickHouseClient[],
    /** The table queries read (the Distributed one on a cluster), quoted. */
    private readonly table: string,
  ) {}

  /** The next server in turn. */
  client(): ClickHouseClient {
    const c = this.clients[this.next % this.clients.length] as ClickHouseClient;
    this.next = (this.next + 1) % this.clients.length;
    return c;
  }

  readonly error = clickHouseError;

  /**
   * Runs a statement on the next server; aborting `signal` ends the request and kills the
   * query on the server.
   */
  async run(q: Compiled, opts: ExecOptions): Promise<StatementRows> {
    const client = this.client();
    const queryId = tagged(opts.tag);
    const controller = new AbortController();
    const onAbort = () => {
      controller.abort();
      this.kill(client, queryId);
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const poll = opts.onProgress ? this.pollProgress(client, queryId, opts.onProgress) : undefined;
    try {
      const bytes = Buffer.byteLength(q.sql);
      const params = {
        query: q.sql,
        query_id: queryId,
        abort_signal: controller.signal,
        // Values are written into the text (18.16 binds none): a long list (a `patterns`
        // pipe's groups of ids) may pass the 256 KiB a query is by default.
        ...(bytes > MAX_QUERY_SIZE ? { clickhouse_settings: { max_query_size: String(bytes + 1024) } } : {}),
      };
      if (q.totals) {
        const json = await (await client.query({ ...params, format: 'JSON' })).json<
          Record<string, unknown>
        >();
        return {
          rows: json.data,
          ...(json.totals ? { totals: json.totals as Record<string, unknown> } : {}),
        };
      }
      return {
        rows: await (await client.query({ ...params, format: 'JSONEachRow' })).json<
          Record<string, unknown>
        >(),
      };
    } finally {
      clearInterval(poll);
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * A search's rows as one statement on the next server; its signal ends the request, and
   * a reader that stops early (or a failure) kills the server's work too.
   */
  stream(plan: SearchPlan, opts: ExecOptions): StreamCursor {
    const client = this.client();
    const queryId = tagged(opts.tag);
    const controller = new AbortController();
    const query = searchRowsSql(this.table, { ...plan, offset: 0 }).sql;
    async function* batches(): AsyncGenerator<Iterable<ResultRow>> {
      const result = await client.query({
        query,
        format: 'JSONEachRow',
        query_id: queryId,
        abort_signal: controller.signal,
      });
      for await (const rows of result.stream<Record<string, unknown>>()) yield parsed(rows);
    }
    return {
      batches: batches(),
      interrupt: () => controller.abort(),
      close: (finished) => {
        if (finished) return;
        // The reader stopped early (or failed): end the request and the server's work.
        controller.abort();
        this.kill(client, queryId);
      },
    };
  }

  /**
   * The statement's progress while it runs, as DuckDB's is read: rows read over the
   * rows it expects to read, from the server's process list (which a Distributed query's
   * shards report to), every 200 ms.
   */
  private pollProgress(client: ClickHouseClient, queryId: string, onProgress: (f: number) => void) {
    let asking = false;
    return setInterval(() => {
      if (asking) return;
      asking = true;
      client
        .query({
          query: `SELECT read_rows AS r, total_rows_approx AS t FROM system.processes WHERE query_id = ${clickHouseLiteral(queryId)}`,
          format: 'JSONEachRow',
        })
        .then((res) => res.json<{ r: number; t: number }>())
        .then(([p]) => {
          if (p && Number(p.t) > 0) onProgress(Math.min(1, Number(p.r) / Number(p.t)));
        })
        .catch(() => undefined)
        .finally(() => {
          asking = false;
        });
    }, 200);
  }

  /**
   * Kills on every server the statements whose query id starts with `tagPrefix` (see
   * `tagged`): KILL QUERY sees the processes of the server it runs on, and a statement
   * runs where it was sent. ClickHouse does not end an HTTP query whose client went
   * away, so a dead node's statements would otherwise run on to their end.
   */
  async abandon(tagPrefix: string): Promise<void> {
    const pattern = `${tagPrefix.replace(/[\\%_]/g, '\\$&')}%`;
    await Promise.all(
      this.clients.map((c) =>
        c
          .command({ query: `KILL QUERY WHERE query_id LIKE ${clickHouseLiteral(pattern)} ASYNC` })
          .catch(() => undefined),
      ),
    );
  }

  private kill(client: ClickHouseClient, queryId: string): void {
    client
      .command({ query: `KILL QUERY WHERE query_id = ${clickHouseLiteral(queryId)} ASYNC` })
      .catch(() => undefined);
  }
}

/** A stream's rows as they are read: each parsed when its turn comes. */
function* parsed(rows: ReadonlyArray<{ json<T>(): T }>): Generator<ResultRow> {
  for (const row of rows) yield row.json<ResultRow>();
}
