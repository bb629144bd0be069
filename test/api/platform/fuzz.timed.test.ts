import { gzipSync } from 'node:zlib';
import type { ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import protobuf from 'protobufjs';
import { compressSync } from 'snappy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeStatus } from '../../../src/ingest/protocols/otlp.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

/**
 * Every operation of the generated OpenAPI document, with bad values in its path, query
 * and body, in each body encoding: no answer is a 5xx, none hangs, none carries engine
 * text, every error has the API's shape, and every answer the document describes is
 * valid against it. A fixed seed keeps CI repeatable; LOGSCOPE_FUZZ_SEED and
 * LOGSCOPE_FUZZ_RUNS explore further.
 */
const SEED = Number(process.env.LOGSCOPE_FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.LOGSCOPE_FUZZ_RUNS ?? 2500);

/** Text engines and drivers put in their errors: none may reach a client. */
const ENGINE_TEXT =
  /Binder Error|Parser Error|Catalog Error|Conversion Error|INTERNAL Error|Invalid Input Error|Out of Memory Error|duckdb|SQLITE_|sqlite3|syntax error at or near|relation "|violates|kysely|at [\w.<>]+ \(\/|node_modules/i;

/**
 * Whether an answer holds an engine's text. /api/health names each store's kind
 * (docs/api/service-endpoints.md) and the cold tier's refusal on ClickHouse names the store
 * it needs (docs/api/cold.md): neither is an engine's error text.
 */
const hasEngineText = (body: string) =>
  ENGINE_TEXT.test(
    body
      .replace(/"kind":"(sqlite|postgres|duckdb|clickhouse)"/g, '')
      .replace(/the embedded \(DuckDB\) event store/g, ''),
  );

type Json = Record<string, unknown>;

interface Operation {
  method: string;
  path: string;
  params: Array<{ name: string; in: string; schema?: Json }>;
  bodyTypes: string[];
  bodyProps: string[];
  responses: Record<string, Json | undefined>;
}

/** Values that break things: out of range, wrong type, odd text. */
const badScalar = fc.oneof(
  fc.constantFrom(
    '',
    '0',
    '-1',
    '1',
    '3',
    '99999',
    '1e20',
    'Infinity',
    'NaN',
    '9007199254740993',
    'true',
    'yes',
    'null',
    '[]',
    '{}',
    '%00',
    '%ff%fe',
    '..%2F..%2Fetc',
    // Path tokens the OpenAPI fuzzer sent to the journal upload (issue 54).
    '%2e%2e',
    '2147483648',
    "' OR 1=1 --",
    '"; DROP TABLE events; --',
    '(?<n>a)',
    // Keys a plain object answers from its prototype (`?preset=__proto__` was a 500).
    '__proto__',
    'constructor',
    'toString',
    '\u0000',
    '\ud800',
    'x'.repeat(5000),
  ),
  fc.string({ maxLength: 20 }),
  fc.integer().map(String),
  fc.double().map(String),
);

const badJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(1e20, -1, 0, Number.MAX_SAFE_INTEGER + 2, '', null, true, [], {}),
);

function deepJson(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe(`fuzzing every operation of the OpenAPI document on ${BACKEND}`, () => {
  let t: TestApp;
  let token: string;
  let fuzzerId: number;
  const ops: Operation[] = [];
  const validators = new Map<string, ValidateFunction | null>();
  let components: Json = {};
  const ajv = new Ajv2020.default({ strict: false, allErrors: false, validateFormats: false });

  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
    // A separate admin, so that fuzzed deletes of small ids do not lock the test out.
    const fuzzer = await t.user('fuzzer', { admin: true });
    token = fuzzer.token;
    fuzzerId = fuzzer.id;
    await t.as(token, { method: 'POST', url: '/api/ingest', payload: { message: 'seed event', host: 'h' } });
    await t.as(token, { method: 'POST', url: '/api/tasks', payload: { title: 'seed task' } });
    await t.as(token, { method: 'POST', url: '/api/dashboards', payload: { title: 'seed dashboard' } });
    const doc = (await t.app.inject({ method: 'GET', url: '/api/schema' })).json() as Json;
    components = (doc.components ?? {}) as Json;
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      if (path.startsWith('/api/docs')) continue;
      for (const [method, op] of Object.entries(methods)) {
        const content = ((op.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
        const schema = (Object.values(content)[0]?.schema ?? {}) as Json;
        const responses: Record<string, Json | undefined> = {};
        for (const [status, r] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
          const c = (r.content ?? {}) as Record<string, Json>;
          responses[status] = (c['application/json']?.schema as Json | undefined) ?? undefined;
        }
        ops.push({
          method: method.toUpperCase(),
          path,
          params: ((op.parameters ?? []) as Operation['params']).filter((p) => p.in !== 'header'),
          bodyTypes: Object.keys(content),
          bodyProps: Object.keys((schema.properties ?? {}) as Json),
          responses,
        });
      }
    }
  });
  afterAll(() => t.close());

  function validatorFor(op: Operation, status: number): ValidateFunction | null {
    const key = `${op.method} ${op.path} ${status}`;
    if (!validators.has(key)) {
      const schema = op.responses[String(status)];
      validators.set(key, schema ? ajv.compile({ ...schema, components }) : null);
    }
    return validators.get(key) ?? null;
  }

  it('answers every fuzzed request with a described, non-5xx answer free of engine text', async () => {
    expect(ops.length).toBeGreaterThan(50);
    const request = fc.record({
      op: fc.nat({ max: ops.length - 1 }),
      pathValues: fc.array(badScalar, { minLength: 4, maxLength: 4 }),
      query: fc.dictionary(fc.string({ maxLength: 3 }), badScalar, { maxKeys: 2 }),
      queryValues: fc.array(fc.option(badScalar, { nil: undefined }), { minLength: 12, maxLength: 12 }),
      body: fc.oneof(
        { weight: 4, arbitrary: fc.constant('props') },
        { weight: 2, arbitrary: fc.constant('json') },
        { weight: 1, arbitrary: fc.constant('deep') },
        { weight: 1, arbitrary: fc.constant('huge') },
        { weight: 1, arbitrary: fc.constant('proto') },
        { weight: 1, arbitrary: fc.constant('garbage') },
        // No body at all (no Content-Type, no Content-Length): intakes read it as bytes (issue 54).
        { weight: 1, arbitrary: fc.constant('none') },
      ),
      bodyValues: fc.array(badJson, { minLength: 12, maxLength: 12 }),
      encoding: fc.constantFrom('json', 'form', 'multipart', 'multipart-broken', 'text'),
    });
    // A timer that should fire every 10 ms: how late it fires while a request is under way
    // is how long that request held the event loop.
    const STALL_MS = 250;
    let inFlight = false;
    let stalledMs = 0;
    let tick = performance.now();
    const watch = setInterval(() => {
      const now = performance.now();
      if (inFlight) stalledMs = Math.max(stalledMs, now - tick - 10);
      tick = now;
    }, 10);
    // How long a request just sent held the loop. A stall is the request's when it comes
    // back each time the same request is sent again; once alone is also a garbage
    // collection of the fuzzer's own heap (CI saw 591 ms on a 400 that takes 7 ms).
    const stallOf = async (send: () => Promise<unknown>) => {
      let held = stalledMs;
      for (let again = 0; again < 2 && held > STALL_MS; again++) {
        stalledMs = 0;
        inFlight = true;
        await send();
        inFlight = false;
        held = Math.min(held, stalledMs);
      }
      stalledMs = 0;
      return held;
    };
    const seen = new Set<string>();
    // Every distinct failure (operation, encoding, status, reason), not just the first.
    const failures = new Map<string, string>();
    const fail = (key: string, where: string) => {
      if (!failures.has(key)) failures.set(key, where);
    };
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const op = ops[r.op]!;
        let i = 0;
        const url = op.path.replace(/\{[^}]+\}/g, () => {
          const v = r.pathValues[i++ % 4]!;
          // Never the fuzzer's own user id: it would delete or demote itself.
          if (v === String(fuzzerId)) return '99999';
          // A dot segment (`..`, `%2e%2e`) is resolved by the client's URL parser (inject's,
          // a browser's) before it is sent: the request is for another route, whose answer
          // this operation's schema does not describe.
          if (/^(\.|%2e){1,2}$/i.test(v)) return '99999';
          // Percent sequences go as they are (`%00`, invalid UTF-8), the rest encoded.
          return v.startsWith('%') ? v : encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '\ufffd'));
        });
        const qs = new URLSearchParams();
        op.params
          .filter((p) => p.in === 'query')
          .forEach((p, k) => {
            const v = r.queryValues[k % 12];
            if (v !== undefined) qs.set(p.name, v);
          });
        for (const [k, v] of Object.entries(r.query)) qs.set(k, v);
        let payload: string | undefined;
        let contentType: string | undefined;
        if (!['GET', 'HEAD', 'DELETE'].includes(op.method) && r.body !== 'none') {
          let body: unknown;
          if (r.body === 'props') {
            body = Object.fromEntries(op.bodyProps.map((p, k) => [p, r.bodyValues[k % 12]]));
          } else if (r.body === 'json') body = r.bodyValues[0];
          else if (r.body === 'deep') body = { [op.bodyProps[0] ?? 'a']: deepJson(200) };
          // 20,000 items in every property: a 20,000-element `permissions` took 10 s to validate.
          else if (r.body === 'huge')
            body = Object.fromEntries(
              op.bodyProps.map((p, k) => [p, Array.from({ length: 20_000 }, () => k % 2)]),
            );
          else if (r.body === 'proto') {
            const o = JSON.parse(
              '{"__proto__": {"is_admin": true, "preset": "__proto__"}, "constructor": {"prototype": {}}}',
            ) as Json;
            for (const prop of op.bodyProps) o[prop] = '__proto__';
            body = o;
          } else body = undefined;
          switch (r.encoding) {
            case 'json':
              contentType = 'application/json';
              payload = body === undefined ? '{"a": [1, 2' : JSON.stringify(body);
              break;
            case 'form': {
              contentType = 'application/x-www-form-urlencoded';
              const form = new URLSearchParams();
              if (body && typeof body === 'object' && !Array.isArray(body)) {
                for (const [k, v] of Object.entries(body))
                  form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
              }
              payload = form.toString();
              break;
            }
            case 'multipart': {
              const boundary = 'fuzzboundary';
              contentType = `multipart/form-data; boundary=${boundary}`;
              const parts = Object.entries(
                body && typeof body === 'object' ? (body as Json) : { a: body },
              ).map(
                ([k, v]) =>
                  `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${typeof v === 'string' ? v : JSON.stringify(v)}\r\n`,
              );
              payload = `${parts.join('')}--${boundary}--\r\n`;
              break;
            }
            case 'multipart-broken':
              contentType =
                r.bodyValues[1] === null ? 'multipart/form-data' : 'multipart/form-data; boundary=x';
              payload = '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated';
              break;
            default:
              contentType = 'text/plain';
              payload = 'plain text';
          }
        }
        const target = qs.size > 0 ? `${url}?${qs}` : url;
        const send = () =>
          t.as(token, {
            method: op.method as 'GET',
            url: target,
            ...(payload !== undefined ? { payload } : {}),
            ...(contentType ? { headers: { 'content-type': contentType } } : {}),
          });
        const started = performance.now();
        inFlight = true;
        const res = await send();
        inFlight = false;
        const took = performance.now() - started;
        const where = `${op.method} ${target.slice(0, 200)} (${contentType ?? 'no body'}) → ${res.statusCode} ${res.body.slice(0, 300)}`;
        // The event loop watched: no request may hold it (so /api/health) past 250 ms.
        const held = await stallOf(send);
        if (held > STALL_MS) {
          fail(
            `${op.method} ${op.path} ${r.body} stalled`,
            `${where}\n  held the event loop ${held.toFixed(0)} ms, each of three times`,
          );
        }
        if (took > 5000) fail(`${op.method} ${op.path} slow`, `${where}\n  took over 5 s`);
        const key = `${op.method} ${op.path} ${contentType?.split(';')[0] ?? ''} ${res.statusCode}`;
        seen.add(`${op.method} ${op.path}`);
        if (res.statusCode >= 500) return fail(`${key} 5xx`, where);
        if (hasEngineText(res.body)) return fail(`${key} engine text`, where);
        const type = String(res.headers['content-type'] ?? '');
        if (!type.startsWith('application/json') || op.method === 'HEAD' || res.body === '') return;
        let body: Json;
        try {
          body = res.json() as Json;
        } catch {
          return fail(`${key} not JSON`, where);
        }
        // Protocol intakes answer errors in their protocol's shape (Elasticsearch's; OTLP's
        // google.rpc.Status, checked against the document below).
        const protocolShape = op.path.startsWith('/api/ingest/es') || op.path.endsWith('/v1/logs');
        if (res.statusCode >= 400 && !protocolShape) {
          if (typeof body.detail !== 'string' || typeof body.code !== 'string') {
            return fail(`${key} error shape`, where);
          }
        }
        // An empty or dot path value routes elsewhere (`/api/tasks/` is the list): not this operation's answer.
        const routedElsewhere = r.pathValues.slice(0, i).some((v) => v === '' || v === '.' || v === '..');
        const validate = routedElsewhere ? null : validatorFor(op, res.statusCode);
        if (validate && !validate(body)) {
          fail(
            `${key} schema`,
            `${where}\n  not valid against the document: ${ajv.errorsText(validate.errors)}`,
          );
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
    // Every operation with a path parameter, each parameter an odd value, with no body at
    // all and with a body of the wrong type: the journal upload's `{token}` answered 500
    // (issue 54), as did every intake sent no body.
    const checkAnswer = (op: Operation, target: string, what: string, res: LightMyRequestResponse) => {
      const where = `${op.method} ${target.slice(0, 200)} (${what}) → ${res.statusCode} ${res.body.slice(0, 300)}`;
      const key = `${op.method} ${op.path} ${what} ${res.statusCode}`;
      seen.add(`${op.method} ${op.path}`);
      if (res.statusCode >= 500) return fail(`${key} 5xx`, where);
      if (hasEngineText(res.body)) {
        return fail(`${key} engine text`, where);
      }
      const protocolShape = op.path.startsWith('/api/ingest/es') || op.path.endsWith('/v1/logs');
      if (
        res.statusCode >= 400 &&
        !protocolShape &&
        String(res.headers['content-type']).startsWith('application/json')
      ) {
        const body = res.json() as Json;
        if (typeof body.detail !== 'string' || typeof body.code !== 'string')
          fail(`${key} error shape`, where);
      }
    };
    const ODD_PATH_VALUES = [
      '%2e%2e',
      '%2e',
      '2147483648',
      '-2147483649',
      '1e3',
      '0x10',
      '%00',
      '%20',
      'a%2Fb',
      '__proto__',
      'x'.repeat(257),
    ];
    for (const op of ops.filter((o) => o.path.includes('{'))) {
      for (const value of ODD_PATH_VALUES) {
        const target = op.path.replace(/\{[^}]+\}/g, value);
        const bodies: Array<[string, Pick<InjectOptions, 'payload' | 'headers'>]> = [['no body', {}]];
        if (!['GET', 'HEAD', 'DELETE'].includes(op.method)) {
          bodies.push(['text body', { payload: 'plain text', headers: { 'content-type': 'text/plain' } }]);
        }
        for (const [what, body] of bodies) {
          const res = await t.as(token, { method: op.method as 'GET', url: target, ...body });
          checkAnswer(op, target, what, res);
        }
      }
    }
    // Bytes that are not an ExportLogsServiceRequest, in either encoding, plain or gzip'd,
    // to both OTLP paths: a 4xx google.rpc.Status in the request's encoding (or a 200 where
    // the bytes happen to be a request), never a 500 (issue 54).
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 96 }),
          fc.constantFrom(
            Buffer.from('hello, not protobuf'),
            Buffer.alloc(32, 0xff),
            Buffer.from('{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":1}}]}]}]}'),
            Buffer.from([0x0b, 0x0c]),
            Buffer.from([0x0e, 0x0f, 0x0f]),
          ),
        ),
        fc.constantFrom('application/x-protobuf', 'application/json'),
        fc.constantFrom('identity', 'gzip', 'gzip-claimed'),
        fc.constantFrom('/v1/logs', '/api/ingest/otlp/v1/logs'),
        async (bytes, type, coding, url) => {
          const payload = coding === 'gzip' ? gzipSync(bytes) : Buffer.from(bytes);
          const headers: Record<string, string> = { 'content-type': type };
          if (coding !== 'identity') headers['content-encoding'] = 'gzip';
          const res = await t.as(token, { method: 'POST', url, headers, payload });
          const where = `POST ${url} (${type}, ${coding}) ${Buffer.from(bytes).toString('hex').slice(0, 80)} → ${res.statusCode} ${res.body.slice(0, 200)}`;
          if (res.statusCode >= 500) return fail(`${url} ${type} ${coding} 5xx`, where);
          if (res.statusCode >= 400) {
            // In the request's encoding: the Status as JSON, or as protobuf bytes.
            let status: Json;
            try {
              status =
                type === 'application/json'
                  ? (res.json() as Json)
                  : decodeStatus(new Uint8Array(res.rawPayload));
            } catch {
              return fail(`${url} ${type} ${coding} not a Status`, where);
            }
            if (typeof status.code !== 'number' || typeof status.message !== 'string') {
              fail(`${url} ${type} ${coding} status shape`, where);
            }
          }
        },
      ),
      { numRuns: 300, seed: SEED },
    );
    // Bodies no generator above makes: compressed ones that inflate far and are corrupt
    // after, and protobufs of millions of empty records, on every intake that takes them.
    const bomb = Buffer.concat([
      gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x20)).subarray(0, -8),
      Buffer.alloc(64, 0xff),
    ]);
    const field = (id: number, body: Uint8Array) =>
      protobuf.Writer.create()
        .uint32((id << 3) | 2)
        .bytes(body)
        .finish();
    const empties = Buffer.alloc(2 * 2_000_000).fill(Buffer.from([0x12, 0]));
    const otlp = gzipSync(field(1, field(2, empties)));
    const loki = compressSync(
      Buffer.from(field(1, Buffer.concat([field(1, Buffer.from('{a="b"}')), empties]))),
    );
    const hostile: Array<[string, string, Record<string, string>, Buffer]> = [
      ...['/api/ingest', '/api/ingest/es/_bulk', '/api/ingest/gelf', '/loki/api/v1/push', '/v1/logs'].map(
        (url) =>
          [url, 'corrupt gzip', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, bomb] as [
            string,
            string,
            Record<string, string>,
            Buffer,
          ],
      ),
      [
        '/v1/logs',
        'huge protobuf',
        { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
        otlp,
      ],
      ['/loki/api/v1/push', 'huge protobuf', { 'content-type': 'application/x-protobuf' }, loki],
    ];
    for (const [url, what, headers, payload] of hostile) {
      const send = () => t.as(token, { method: 'POST', url, headers, payload });
      inFlight = true;
      const res = await send();
      inFlight = false;
      const where = `POST ${url} (${what}) → ${res.statusCode} ${res.body.slice(0, 200)}`;
      if (res.statusCode >= 500 || res.statusCode < 400) fail(`${url} ${what} status`, where);
      const held = await stallOf(send);
      if (held > STALL_MS)
        fail(`${url} ${what} stalled`, `${where}\n  held the event loop ${held.toFixed(0)} ms`);
    }
    clearInterval(watch);
    expect([...failures.values()]).toEqual([]);
    // The runs reached (nearly) every operation.
    expect(seen.size).toBeGreaterThan(ops.length * 0.9);
  }, 180_000);
});
