import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDbEventStore } from '../../../src/event-store/duckdb/duckdb-event-store.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { event } from '../../helpers/seed.js';

/**
 * docs/intake/http.md: names a sender uses are kept, extra fields keep their JSON type, `raw` is
 * the record as sent, and where the event came in is the column `intake`.
 */
describe(`records kept as sent on ${BACKEND}`, () => {
  let t: TestApp;
  let shipper: string;
  const now = Math.floor(Date.now() / 1000);
  const iso = new Date((now - 60) * 1000).toISOString();
  const record = {
    '@timestamp': iso,
    message: 'fidelity check',
    source: 'billing-service',
    ev_id: 'sender-id-1',
    received_at: 17,
    host: { name: 'web-1', ip: ['10.0.0.1'] },
    http: { duration_ms: 1979, method: 'GET', ok: true, retry: null, extra: {} },
    'dotted.key': 'flat',
    tags: ['a', 'b'],
  };

  const search = async (query: string, sort = ['-ts']) => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: {
        type: 'Search',
        params: { query, sort, time_range: { ts_from: now - 3600, ts_to: now + 60 } },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results.events as Array<Record<string, unknown>>;
  };

  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
    shipper = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'shipper' })).secret_key;
    const res = await t.as(shipper, { method: 'POST', url: '/api/ingest', payload: record });
    expect(res.json()).toMatchObject({ accepted: 1, rejected: 0 });
  });
  afterAll(() => t.close());

  it("keeps the sender's source and moves where it came in to intake", async () => {
    const [shown] = await search('fidelity');
    expect(shown).toMatchObject({ source: 'billing-service', intake: 'http:admin', host: 'web-1' });
    expect(shown?.ev_id).not.toBe('sender-id-1');
    expect(shown).toMatchObject({ 'orig.ev_id': 'sender-id-1', 'orig.received_at': 17 });
    const byIntake = await search('intake:"http:admin" AND source:"billing-service"');
    expect(byIntake).toHaveLength(1);
  });

  it('keeps the JSON type of extra fields in the representation', async () => {
    const [shown] = await search('fidelity');
    expect(shown).toMatchObject({
      'http.duration_ms': 1979,
      'http.ok': true,
      'http.method': 'GET',
      'host.ip': ['10.0.0.1'],
      tags: ['a', 'b'],
    });
  });

  it('gives back raw as sent: key names, nesting, types, nulls and empty objects', async () => {
    const [found] = await search('fidelity');
    const res = await t.as(t.adminToken, { method: 'GET', url: `/api/events/${found?.ev_id}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().raw).toEqual(record);
  });
});

describe('an events table from before intake and shape', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'logscope-upgrade-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gains the columns, moves the old source to intake, and takes new events', async () => {
    const instance = await DuckDBInstance.create(path.join(dir, 'events.duckdb'));
    const c = await instance.connect();
    await c.run(`CREATE TABLE events (ev_id VARCHAR NOT NULL, ts TIMESTAMP NOT NULL,
      received_at TIMESTAMP NOT NULL, stored_at TIMESTAMP NOT NULL, host VARCHAR, app VARCHAR,
      severity VARCHAR, facility VARCHAR, message VARCHAR, src_ip VARCHAR, src_port INTEGER,
      dst_ip VARCHAR, dst_port INTEGER, "user" VARCHAR, action VARCHAR, status INTEGER,
      bytes BIGINT, source VARCHAR, fields MAP(VARCHAR, VARCHAR))`);
    await c.run(`INSERT INTO events VALUES ('01JAAAAAAAAAAAAAAAAAAAAAAA', now()::TIMESTAMP, now()::TIMESTAMP,
      now()::TIMESTAMP, 'h', NULL, NULL, NULL, 'old', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
      'http:admin', MAP {'n': '5'})`);
    c.closeSync();
    instance.closeSync();

    const store = await DuckDbEventStore.open({
      dataDir: dir,
      memoryLimit: '256MB',
      checkpointThreshold: '16MB',
    });
    try {
      const [old] = await store.runSql(`SELECT source, intake, shape FROM events WHERE message = 'old'`);
      expect(old).toEqual({ source: null, intake: 'http:admin', shape: null });
      await store.append([
        event({
          ev_id: '01JBBBBBBBBBBBBBBBBBBBBBBB',
          ts: Date.now(),
          message: 'new',
          source: 's',
          intake: 'es:admin',
          fields: { n: '5' },
          shape: '{"t":{"n":"n"}}',
        }),
      ]);
      const rows = await store.runSql(`SELECT message, source, intake, shape FROM events ORDER BY message`);
      expect(rows).toEqual([
        { message: 'new', source: 's', intake: 'es:admin', shape: '{"t":{"n":"n"}}' },
        { message: 'old', source: null, intake: 'http:admin', shape: null },
      ]);
    } finally {
      await store.close();
    }
  });
});
