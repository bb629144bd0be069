import { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import winston from 'winston';
import { ElasticsearchTransport, type ElasticsearchTransportOptions } from 'winston-elasticsearch';
import { BACKEND } from '../../helpers/app.js';
import {
  awaitEvents,
  compareArrivals,
  type Line,
  type Logscope,
  makeLines,
  perfect,
  startLogscope,
} from '../../helpers/shippers.js';

// Node clients that write to Elasticsearch, pointed at /api/ingest/es with an INGEST token.

/** winston's npm level for a line's severity. */
const WINSTON_LEVEL = { error: 'error', warning: 'warn', info: 'info' } as const;

/** An hour ago with millisecond precision, one ms apart per line: `ts` must come from the document. */
function stamp(lines: Line[]): Array<Line & { ts: number }> {
  const base = Math.floor(Date.now() / 1000) - 3600;
  return lines.map((l, i) => ({ ...l, ts: base + i / 1000 }));
}

describe(`Elasticsearch clients → Logscope on ${BACKEND}`, () => {
  let ls: Logscope;
  let es: Client;
  beforeAll(async () => {
    ls = await startLogscope();
    es = new Client({ node: `${ls.url}/api/ingest/es`, auth: { apiKey: ls.ingestToken } });
  });
  afterAll(async () => {
    await es?.close();
    await ls?.close();
  });

  async function winstonShip(
    name: string,
    n: number,
    opts: { useTransformer: boolean; format: winston.Logform.Format },
  ) {
    const marker = `winston-${name}-${Date.now().toString(36)}`;
    const lines = stamp(makeLines(marker, n, `winston-${name}`));
    const errors: unknown[] = [];
    const options: ElasticsearchTransportOptions & { internalLogger: (...args: unknown[]) => void } = {
      level: 'info',
      index: `winston-${name}`,
      clientOpts: { node: `${ls.url}/api/ingest/es`, auth: { apiKey: ls.ingestToken } },
      flushInterval: 100,
      retryLimit: 1,
      useTransformer: opts.useTransformer,
      internalLogger: (...args: unknown[]) => errors.push(args),
    };
    const transport = new ElasticsearchTransport(options);
    transport.on('error', (err) => errors.push(err));
    const logger = winston.createLogger({
      format: opts.format,
      defaultMeta: { service: `winston-${name}`, host: 'winston-host', user: 'winston-user' },
      transports: [transport],
    });
    for (const l of lines) {
      logger.log({
        level: WINSTON_LEVEL[l.severity],
        message: l.message,
        timestamp: new Date(l.ts * 1000).toISOString(),
      });
    }
    const finished = new Promise<void>((resolve) => transport.once('finish', () => resolve()));
    logger.end();
    await Promise.race([finished, new Promise((r) => setTimeout(r, 15_000))]);
    const events = await awaitEvents(ls, marker, n);
    return { lines, events, errors };
  }

  it.each([
    // The transformer puts winston's meta (defaultMeta included) under `fields`.
    ['default transformer (@timestamp, message, severity, fields.*)', 'default', true],
    ['without the transformer (winston info objects as sent)', 'raw', false],
  ] as const)(
    'winston + winston-elasticsearch, %s',
    async (_label, index, useTransformer) => {
      const { lines, events, errors } = await winstonShip(index, 300, {
        useTransformer,
        format: winston.format.json(),
      });
      expect(errors).toEqual([]);
      const report = compareArrivals(lines, events, { from: 0, host: 'winston-host' });
      expect(report).toEqual(perfect(300));
      // The transformer's `fields.user` is the user column too, searchable as `user`.
      expect(new Set(events.map((e) => e.user))).toEqual(new Set(['winston-user']));
      for (const e of events.slice(0, 20)) {
        const line = lines.find((l) => l.message === e.message);
        expect(e.ts).toBeCloseTo(line?.ts ?? 0, 3);
      }
    },
    60_000,
  );

  /** An ECS document, as Elastic's own libraries write them. */
  const ecs = (l: Line & { ts: number }) => ({
    '@timestamp': new Date(l.ts * 1000).toISOString(),
    message: l.message,
    host: { name: 'es-client-host' },
    service: { name: l.app },
    log: { level: WINSTON_LEVEL[l.severity] },
  });

  it('the official client index(): one document per request, answered 201 with an ev_id', async () => {
    const marker = `es-index-${Date.now().toString(36)}`;
    const lines = stamp(makeLines(marker, 60, 'es-index-app'));
    const ids: string[] = [];
    for (const l of lines) {
      const res = await es.index({ index: 'app-logs', document: ecs(l) });
      expect(res.result).toBe('created');
      ids.push(res._id);
    }
    const events = await awaitEvents(ls, marker, lines.length);
    expect(compareArrivals(lines, events, { from: 0, host: 'es-client-host' })).toEqual(perfect(60));
    expect(new Set(ids).size).toBe(60);
    const byId = await ls.t.as(ls.t.adminToken, { method: 'GET', url: `/api/events/${ids[0]}` });
    expect(byId.statusCode).toBe(200);
    expect(byId.json().message).toBe(lines[0]?.message);
    for (const e of events.slice(0, 20)) {
      expect(e.ts).toBeCloseTo(lines.find((l) => l.message === e.message)?.ts ?? 0, 3);
    }
  }, 60_000);

  it('the official client create() with an id: one document per request, answered 201', async () => {
    const marker = `es-create-${Date.now().toString(36)}`;
    const lines = stamp(makeLines(marker, 60, 'es-create-app'));
    for (const [i, l] of lines.entries()) {
      const res = await es.create({ index: 'app-logs', id: `${marker}-${i}`, document: ecs(l) });
      expect(res.result).toBe('created');
      expect(typeof res._id).toBe('string');
    }
    const events = await awaitEvents(ls, marker, lines.length);
    expect(compareArrivals(lines, events, { from: 0, host: 'es-client-host' })).toEqual(perfect(60));
  }, 60_000);

  it('errors on the ES paths have the Elasticsearch shape the client reads', async () => {
    const err = await es
      .index({ index: '_bad', document: { message: 'x' } })
      .then(() => undefined)
      .catch((e: { meta?: { statusCode?: number; body?: unknown } }) => e);
    expect(err?.meta?.statusCode).toBeGreaterThanOrEqual(400);
    expect(err?.meta?.body).toMatchObject({
      error: { type: expect.any(String), reason: expect.any(String) },
    });
  });
});
