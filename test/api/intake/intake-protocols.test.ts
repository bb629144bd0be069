import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { counter } from '../../../src/core/metrics.js';
import { COMPONENTS } from '../../../src/features/index.js';
import {
  INTAKE_PROTOCOLS,
  type IntakeContext,
  type IntakeProtocol,
  intake,
  intakeComponent,
} from '../../../src/features/intake/index.js';
import { intakeProtocols } from '../../../src/features/intake/protocols/intake-protocol.js';
import { caller } from '../../../src/http/plugins/auth.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { storedEvents } from '../../helpers/events.js';

/**
 * A protocol is one module and a line in the list (issue 74): a throw-away one, built as
 * the production ones are, joins the list through the same factory as INTAKE_PROTOCOLS,
 * and the app serves it like the others: its route in the OpenAPI document, its events
 * stored with its intake (`echo:<user>`), its listener started with the server, its
 * figures in /metrics, and its listener closed when the server stops.
 */
function echoProtocol() {
  const seen = { lines: 0, started: 0, closed: 0 };
  const protocol: IntakeProtocol = {
    name: 'echo',
    async routes(fastify, opts: IntakeContext) {
      const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
      app.post(
        '/api/ingest/echo',
        {
          config: { auth: 'ingest' },
          schema: {
            tags: ['ingest'],
            summary: 'Echo lines (a test protocol)',
            body: Type.Object({ lines: Type.Array(Type.String(), { maxItems: 10 }) }),
            response: { 202: Type.Null({ description: 'Stored.' }) },
          },
        },
        async (request, reply) => {
          const entries = request.body.lines.map((line, index) => ({ index, value: { message: line } }));
          await opts.ingest.ingest(entries, opts.intakeOf(caller(request).username));
          seen.lines += entries.length;
          return reply.status(202).send(null);
        },
      );
    },
    async listen() {
      seen.started++;
      return {
        metrics: () => [
          counter('logscope_echo_lines_total', 'Lines the echo protocol stored.', () => seen.lines),
        ],
        close: async () => void seen.closed++,
      };
    },
  };
  return { protocol, seen };
}

describe('an intake protocol added to the list', () => {
  const echo = echoProtocol();
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    const components = COMPONENTS.map((c) =>
      c === intake ? intakeComponent([...INTAKE_PROTOCOLS, echo.protocol]) : c,
    );
    t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' }, { components });
    token = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'echo shipper' })).secret_key;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is served beside the others: its route in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/schema' })).json();
    expect(doc.paths['/api/ingest/echo'].post).toMatchObject({
      tags: ['ingest'],
      summary: 'Echo lines (a test protocol)',
    });
    // The production protocols are all still there.
    for (const path of ['/api/ingest', '/api/ingest/gelf', '/loki/api/v1/push', '/v1/logs', '/upload'])
      expect(doc.paths).toHaveProperty([path]);
  });

  it('stores what is posted to it, with its own intake (echo:<user>), under the intake token rules', async () => {
    const refused = await t.as(null, {
      method: 'POST',
      url: '/api/ingest/echo',
      payload: { lines: ['no token'] },
    });
    expect(refused.statusCode).toBe(401);
    const res = await t.as(token, {
      method: 'POST',
      url: '/api/ingest/echo',
      payload: { lines: ['echo one', 'echo two'] },
    });
    expect(res.statusCode, res.body).toBe(202);
    const stored = await storedEvents(t, (e) => e.intake?.startsWith('echo:') ?? false);
    expect(stored.map((e) => [e.message, e.intake])).toEqual([
      ['echo one', 'echo:admin'],
      ['echo two', 'echo:admin'],
    ]);
  });

  it('starts its listener with the server and shows its figures in /metrics', async () => {
    expect(echo.seen.started).toBe(1);
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^logscope_echo_lines_total 2$/m);
  });

  it('closes its listener when the server stops', async () => {
    const other = echoProtocol();
    const components = COMPONENTS.map((c) =>
      c === intake ? intakeComponent([...INTAKE_PROTOCOLS, other.protocol]) : c,
    );
    const second = await createTestApp({}, { components });
    expect([other.seen.started, other.seen.closed]).toEqual([1, 0]);
    await second.close();
    expect(other.seen.closed).toBe(1);
  });

  it('refuses two protocols of one name (their events could not be told apart)', () => {
    expect(() =>
      intakeProtocols([...INTAKE_PROTOCOLS, { name: 'gelf' }], {} as Omit<IntakeContext, 'intakeOf'>),
    ).toThrow('intake protocol gelf is listed twice');
  });
});
