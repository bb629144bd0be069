import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rebuildRecord } from '../../../../src/core/record-shape.js';
import { normaliseRecord } from '../../../../src/ingest/normalise.js';
import {
  buildEsBulkResponse,
  buildEsErrorBody,
  DEFAULT_ES_INDEX,
  EsBulkRequestError,
  esBulkCreated,
  esBulkFailed,
  esBulkItemEntry,
  parseEsBulk,
} from '../../../../src/ingest/parsers/es-bulk.js';

const lines = (...parts: unknown[]) =>
  `${parts.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join('\n')}\n`;

describe('parseEsBulk', () => {
  it('reads index and create actions with their documents, in order', () => {
    const body = lines(
      { index: { _index: 'filebeat-8.13.0', _id: 'a1' } },
      { '@timestamp': '2024-01-02T03:04:05Z', message: 'one' },
      { create: { _index: 'logs-app-default' } },
      { message: 'two' },
      { index: {} },
      { message: 'three' },
    );
    expect(parseEsBulk(body)).toEqual([
      {
        action: 'index',
        line: 1,
        index: 'filebeat-8.13.0',
        id: 'a1',
        doc: { '@timestamp': '2024-01-02T03:04:05Z', message: 'one' },
      },
      { action: 'create', line: 3, index: 'logs-app-default', doc: { message: 'two' } },
      { action: 'index', line: 5, doc: { message: 'three' } },
    ]);
  });

  it('uses the index from the URL when an action names none', () => {
    const items = parseEsBulk(lines({ index: {} }, { a: 1 }, { index: { _index: 'own' } }, { a: 2 }), {
      defaultIndex: 'from-url',
    });
    expect(items.map((i) => i.index)).toEqual(['from-url', 'own']);
  });

  it('accepts numeric _id, ignores other metadata (_type, pipeline, routing)', () => {
    const [item] = parseEsBulk(
      lines({ index: { _id: 7, _type: '_doc', pipeline: 'p', routing: 'r' } }, { a: 1 }),
    );
    expect(item).toEqual({ action: 'index', line: 1, id: '7', doc: { a: 1 } });
  });

  it('refuses update (consuming its document line) and delete (which has none) per item', () => {
    const items = parseEsBulk(
      lines(
        { update: { _index: 'i', _id: '1' } },
        { doc: { a: 1 } },
        { delete: { _index: 'i', _id: '2' } },
        { index: { _index: 'i' } },
        { message: 'kept' },
      ),
    );
    expect(items).toEqual([
      {
        action: 'update',
        line: 1,
        index: 'i',
        id: '1',
        error: 'update is not supported: events are append-only',
        errorType: 'illegal_argument_exception',
      },
      {
        action: 'delete',
        line: 3,
        index: 'i',
        id: '2',
        error: 'delete is not supported: events are append-only',
        errorType: 'illegal_argument_exception',
      },
      { action: 'index', line: 4, index: 'i', doc: { message: 'kept' } },
    ]);
  });

  it('refuses a document that is not JSON, alone', () => {
    const items = parseEsBulk(lines({ index: {} }, '{"message": ', { index: {} }, { message: 'ok' }));
    expect(items).toHaveLength(2);
    expect(items[0]!.errorType).toBe('mapper_parsing_exception');
    expect(items[0]!.error).toMatch(/^failed to parse document on line 2: /);
    expect(items[0]!.doc).toBeUndefined();
    expect(items[1]!.doc).toEqual({ message: 'ok' });
  });

  it('passes a document that is JSON but not an object through (normalisation rejects it)', () => {
    const [item] = parseEsBulk(lines({ index: {} }, '[1,2]'));
    expect(item!.doc).toEqual([1, 2]);
    expect(item!.error).toBeUndefined();
  });

  it('refuses an action whose document line is missing at the end', () => {
    for (const body of ['{"index":{}}', '{"index":{}}\n']) {
      const [item] = parseEsBulk(body);
      expect(item!.errorType).toBe('action_request_validation_exception');
      expect(item!.error).toBe('document missing after index action on line 1');
    }
  });

  it('accepts CRLF, blank lines between actions and a missing final newline', () => {
    const items = parseEsBulk('\r\n{"index":{}}\r\n{"a":1}\r\n\r\n\r\n{"create":{}}\r\n{"b":2}');
    expect(items).toEqual([
      { action: 'index', line: 2, doc: { a: 1 } },
      { action: 'create', line: 6, doc: { b: 2 } },
    ]);
  });

  it('ignores keys after the action, as Elasticsearch does (winston-elasticsearch sends "attempts")', () => {
    const body = lines(
      { index: { _index: 'logs-2026.11.21' }, attempts: 0 },
      { message: 'one' },
      { create: { _id: 'c1' }, index: { _index: 'ignored' }, extra: { deep: [1] } },
      { message: 'two' },
    );
    expect(parseEsBulk(body)).toEqual([
      { action: 'index', line: 1, index: 'logs-2026.11.21', doc: { message: 'one' } },
      { action: 'create', line: 3, id: 'c1', doc: { message: 'two' } },
    ]);
  });

  it('gives nothing for an empty body', () => {
    expect(parseEsBulk('')).toEqual([]);
    expect(parseEsBulk('\n\n')).toEqual([]);
  });

  it.each([
    ['not JSON', 'index me\n{}\n', /^Malformed action\/metadata line \[1\]: /],
    ['not an object', '"index"\n{}\n', /^Malformed action\/metadata line \[1\], expected START_OBJECT$/],
    [
      'an unknown action',
      '{"upsert":{}}\n{}\n',
      /^Malformed action\/metadata line \[1\], expected field \[create\], \[delete\], \[index\] or \[update\] but found \[upsert\]$/,
    ],
    ['an extra key before the action', '{"attempts":0,"index":{}}\n{}\n', /but found \[attempts\]$/],
    ['an empty object', '{}\n', /but found \[\]$/],
    ['metadata that is not an object', '{"index":"i"}\n{}\n', /expected START_OBJECT after \[index\]$/],
    ['a document where an action belongs', '{"index":{}}\n{"a":1}\n{"b":2}\n', /line \[3\].*found \[b\]$/],
  ])('fails the whole request for an action line that is %s', (_label, body, reason) => {
    let caught: unknown;
    try {
      parseEsBulk(body);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EsBulkRequestError);
    const error = caught as EsBulkRequestError;
    expect(error.status).toBe(400);
    expect(error.type).toBe('illegal_argument_exception');
    expect(error.message).toMatch(reason);
  });
});

describe('esBulkItemEntry', () => {
  const normalise = (entry: ReturnType<typeof esBulkItemEntry>) =>
    normaliseRecord(entry.value, {
      receivedAt: 0,
      intake: 'es',
      newId: () => 'ev1',
      ...(entry.meta ? { meta: entry.meta } : {}),
    });

  it('carries _index and _id as intake metadata beside the document as sent', () => {
    const [item] = parseEsBulk(lines({ index: { _index: 'logs', _id: 'x' } }, { message: 'm' }));
    expect(esBulkItemEntry(item!, 0)).toEqual({
      index: 0,
      value: { message: 'm' },
      meta: { es_index: 'logs', es_id: 'x' },
    });
  });

  it('adds nothing when there is no index or id, and passes a non-object document through', () => {
    const [plain] = parseEsBulk(lines({ index: {} }, { message: 'm' }));
    expect(esBulkItemEntry(plain!, 0)).toEqual({ index: 0, value: { message: 'm' } });
    const [text] = parseEsBulk(lines({ index: { _index: 'i' } }, '"text"'));
    expect(esBulkItemEntry(text!, 0).value).toBe('text');
  });

  it('stores es_index as a field, and raw is the document as sent with es_index added', () => {
    const [item] = parseEsBulk(
      lines(
        { create: { _index: 'filebeat', _id: 'a1' } },
        { '@timestamp': '2024-01-02T03:04:05Z', host: { name: 'h' } },
      ),
    );
    const result = normalise(esBulkItemEntry(item!, 0));
    expect(result.ok && result.event).toMatchObject({
      host: 'h',
      fields: { es_index: 'filebeat', es_id: 'a1' },
    });
    if (!result.ok) throw new Error(result.detail);
    expect(rebuildRecord(result.event)).toEqual({
      '@timestamp': '2024-01-02T03:04:05Z',
      host: { name: 'h' },
    });
  });

  it("keeps a document's own es_index (as sent, in raw too)", () => {
    const [item] = parseEsBulk(lines({ index: { _index: 'logs' } }, { message: 'm', es_index: 'doc' }));
    const result = normalise(esBulkItemEntry(item!, 0));
    if (!result.ok) throw new Error(result.detail);
    expect(result.event.fields.es_index).toBe('doc');
    expect(rebuildRecord(result.event)).toEqual({ message: 'm', es_index: 'doc' });
  });
});

describe('buildEsBulkResponse', () => {
  it('reports each item under its action, in order, with errors=false when all were stored', () => {
    const items = parseEsBulk(lines({ index: { _index: 'a' } }, { m: 1 }, { create: {} }, { m: 2 }));
    const response = buildEsBulkResponse(
      [esBulkCreated(items[0]!, 'ev-1'), esBulkCreated(items[1]!, 'ev-2')],
      12.4,
    );
    expect(response).toEqual({
      took: 12,
      errors: false,
      items: [
        { index: { _index: 'a', _id: 'ev-1', _version: 1, result: 'created', status: 201 } },
        { create: { _index: DEFAULT_ES_INDEX, _id: 'ev-2', _version: 1, result: 'created', status: 201 } },
      ],
    });
  });

  it('reports refused items with an ES error and sets errors=true', () => {
    const items = parseEsBulk(
      lines(
        { update: { _index: 'a', _id: 'u1' } },
        { doc: {} },
        { delete: {} },
        { index: { _index: 'b' } },
        '[1]',
        { index: {} },
        '{bad',
      ),
    );
    const outcomes = [
      esBulkFailed(items[0]!),
      esBulkFailed(items[1]!),
      esBulkFailed(items[2]!, 'record must be a JSON object, got an array'),
      esBulkFailed(items[3]!),
    ];
    const response = buildEsBulkResponse(outcomes, 0, 'url-index');
    expect(response.errors).toBe(true);
    expect(response.items).toEqual([
      {
        update: {
          _index: 'a',
          _id: 'u1',
          status: 400,
          error: {
            type: 'illegal_argument_exception',
            reason: 'update is not supported: events are append-only',
          },
        },
      },
      {
        delete: {
          _index: 'url-index',
          _id: null,
          status: 400,
          error: {
            type: 'illegal_argument_exception',
            reason: 'delete is not supported: events are append-only',
          },
        },
      },
      {
        index: {
          _index: 'b',
          _id: null,
          status: 400,
          error: { type: 'mapper_parsing_exception', reason: 'record must be a JSON object, got an array' },
        },
      },
      {
        index: {
          _index: 'url-index',
          _id: null,
          status: 400,
          error: {
            type: 'mapper_parsing_exception',
            reason: expect.stringMatching(/^failed to parse document/),
          },
        },
      },
    ]);
  });

  it('passes a retryable status (429) through, so shippers retry just that item', () => {
    const [item] = parseEsBulk(lines({ index: {} }, { m: 1 }));
    const outcome = esBulkFailed(item!, 'queue full', 'es_rejected_execution_exception', 429);
    const response = buildEsBulkResponse([outcome], -3);
    expect(response.took).toBe(0);
    expect(response.items[0]).toEqual({
      index: {
        _index: DEFAULT_ES_INDEX,
        _id: null,
        status: 429,
        error: { type: 'es_rejected_execution_exception', reason: 'queue full' },
      },
    });
  });

  it('treats a non-2xx outcome without an error as an error too', () => {
    const response = buildEsBulkResponse([{ action: 'index', status: 500 }], 1);
    expect(response.errors).toBe(true);
    expect(response.items[0]!.index!.error).toEqual({ type: 'exception', reason: 'status 500' });
  });

  it('is empty for an empty request', () => {
    expect(buildEsBulkResponse([], 0)).toEqual({ took: 0, errors: false, items: [] });
  });
});

describe('buildEsErrorBody', () => {
  it('has the ES whole-request error shape', () => {
    const error = new EsBulkRequestError('illegal_argument_exception', 'Malformed action/metadata line [1]');
    expect(buildEsErrorBody(error.type, error.message, error.status)).toEqual({
      error: {
        root_cause: [{ type: 'illegal_argument_exception', reason: 'Malformed action/metadata line [1]' }],
        type: 'illegal_argument_exception',
        reason: 'Malformed action/metadata line [1]',
      },
      status: 400,
    });
  });
});

describe('parseEsBulk: any input', () => {
  const line = fc.oneof(
    fc.constantFrom(
      '{"index":{}}',
      '{"create":{"_index":"i"}}',
      '{"delete":{}}',
      '{"update":{}}',
      '',
      '{"a":1}',
    ),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 20 }),
  );

  it('either throws EsBulkRequestError or returns items that each have a doc or an error', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 10 }), (lines) => {
        let items: ReturnType<typeof parseEsBulk>;
        try {
          items = parseEsBulk(lines.join('\n'));
        } catch (error) {
          expect(error).toBeInstanceOf(EsBulkRequestError);
          return;
        }
        for (const item of items) {
          expect(item.error === undefined).toBe(Object.hasOwn(item, 'doc'));
        }
        expect(
          buildEsBulkResponse(
            items.map((item) => esBulkFailed(item)),
            0,
          ).items,
        ).toHaveLength(items.length);
      }),
      { numRuns: 500 },
    );
  });
});
