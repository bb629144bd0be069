import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { MAX_JSON_DEPTH, tooDeep } from '../core/json-depth.js';
import { AppError, fieldError, validationError } from '../errors/errors.js';
import { and, type FilterNode } from '../filter/ast.js';
import type { Program } from '../pipes/program.js';
import { timechartBuckets } from '../pipes/timechart.js';
import { parseFilter } from '../syntax/parse-filter.js';
import { parseQuery, parseTableQuery } from '../syntax/parse-query.js';
import { resolveTimeRange, validateTimeRange } from './time-range.js';
import { checkExplain, type ExplainParams } from './types/explain.js';
import { QUERY_TYPE_DEFS } from './types/index.js';
import type { PatternsParams } from './types/patterns.js';
import { type CommonParamValues, QUERY_TYPES, type QueryTypeName } from './types/query-type.js';
import type { SearchParams } from './types/search.js';
import type { SummaryParams } from './types/summary.js';
import { chooseInterval, type TimelineParams } from './types/timeline.js';

const ajv = new Ajv.default({
  useDefaults: true,
  coerceTypes: false,
  removeAdditional: false,
  allErrors: true,
  strict: false,
});
addFormats.default(ajv);
/** Each type's validator, compiled on its first query: compiling all at import cost start-up ~0.3 s. */
const validators = new Map<QueryTypeName, ValidateFunction>();
const validatorOf = (type: QueryTypeName): ValidateFunction => {
  const known = validators.get(type);
  if (known) return known;
  const validate = ajv.compile(QUERY_TYPE_DEFS[type].params);
  validators.set(type, validate);
  return validate;
};

export interface ValidQuery {
  type: QueryTypeName;
  params: CommonParamValues;
  filter: FilterNode;
}

const isQueryType = (t: unknown): t is QueryTypeName => QUERY_TYPES.includes(t as QueryTypeName);

/**
 * Checks a query body `{type, params}`: the type, the params against the type's schema
 * (filling defaults), the filter conditions, the query string and the time range. Throws
 * a 400 whose `errors` name each problem (`params.filter[1].op`, `params.query`, ...).
 */
export function validateQuery(body: { type: unknown; params: unknown }): ValidQuery {
  if (!isQueryType(body.type)) {
    throw validationError({ type: [`Unknown query type; use one of ${QUERY_TYPES.join(', ')}.`] });
  }
  const type = body.type;
  const deep = tooDeep(body.params, MAX_JSON_DEPTH);
  if (deep !== undefined) {
    const path = `params${deep}`;
    throw validationError(
      { [path]: [`JSON is nested more than ${MAX_JSON_DEPTH} levels deep.`] },
      `Invalid params: ${path} is nested more than ${MAX_JSON_DEPTH} levels deep.`,
    );
  }
  const params = structuredClone(body.params ?? {}) as Record<string, unknown>;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw validationError({ params: ['Must be an object.'] });
  }
  const validate = validatorOf(type);
  if (!validate(params)) {
    const errors: Record<string, string[]> = {};
    for (const e of validate.errors ?? []) {
      const base = `params${e.instancePath.replace(/\//g, '.')}`;
      const key =
        e.keyword === 'additionalProperties'
          ? `${base}.${String(e.params.additionalProperty)}`
          : e.keyword === 'required'
            ? `${base}.${String(e.params.missingProperty)}`
            : base;
      const msg =
        e.keyword === 'additionalProperties' ? 'Unknown parameter.' : (e.message ?? 'Invalid value.');
      if (!errors[key]?.includes(msg)) errors[key] = [...(errors[key] ?? []), msg];
    }
    // A union (time_range) reports each branch: keep the field-level message readable.
    if (errors['params.time_range']) errors['params.time_range'] = ['Must be {ts_from, ts_to} or {preset}.'];
    collapse(
      errors,
      'params.baseline',
      'Must be {ts_from, ts_to} or {preset: previous | same_time_last_week}.',
    );
    collapse(errors, 'params.fields', `Must be a list of at most 20 field names.`);
    throw validationError(errors, `Invalid params: ${Object.keys(errors).join(', ')}`);
  }
  const p = params as unknown as CommonParamValues;
  validateTimeRange(p.time_range);
  const query =
    type === 'Table'
      ? parseTableQuery(p.query, { path: 'params.query' })
      : { filter: parseQuery(p.query, { path: 'params.query' }), program: undefined };
  const filter = and(parseFilter(p.filter, { path: 'params.filter' }), query.filter);
  if (query.program) checkTimecharts(query.program, resolveTimeRange(p.time_range, Date.now()));
  checkSpecific(type, p);
  return { type, params: p, filter };
}

/** Errors inside a parameter (`params.baseline.preset`) as one error of it, with one message. */
function collapse(errors: Record<string, string[]>, key: string, message: string): void {
  const inside = Object.keys(errors).filter((k) => k === key || k.startsWith(`${key}.`));
  if (!inside.length) return;
  for (const k of inside) delete errors[k];
  errors[key] = [message];
}

function checkSpecific(type: QueryTypeName, p: CommonParamValues): void {
  switch (type) {
    case 'Timeline':
      chooseInterval((p as TimelineParams).interval, resolveTimeRange(p.time_range, Date.now()));
      return;
    case 'Summary': {
      const bad = (p as SummaryParams).metrics.findIndex((m) => m.op !== 'count' && !m.field);
      if (bad >= 0)
        throw new AppError(400, 'invalid', 'A metric other than count needs a field.', {
          [`params.metrics.${bad}.field`]: ['Required for this op.'],
        });
      return;
    }
    case 'Search': {
      const { page, page_size } = p as SearchParams;
      // The last position of the page stays a safe integer, so the engine can take it.
      if (!Number.isSafeInteger(page * page_size)) {
        throw fieldError(
          'params.page',
          `Too large: page × page_size must stay below 2^53 (here at most ${Math.floor(Number.MAX_SAFE_INTEGER / page_size)}).`,
        );
      }
      return;
    }
    case 'TopN':
    case 'LastN':
    case 'Table':
      return;
    case 'Explain':
      checkExplain(p as ExplainParams, Date.now());
      return;
    case 'Metric':
      // The metric's own query decides what is counted; the rest is checked against the
      // metric when the query begins (MetricAnswers.check).
      if (p.query.trim() !== '')
        throw fieldError(
          'params.query',
          'A Metric query takes no query: its log metric’s query decides what is counted.',
        );
      if (p.filter.length > 0)
        throw fieldError(
          'params.filter',
          'A Metric query takes no filter: its log metric’s query decides what is counted.',
        );
      return;
    case 'Patterns': {
      const { compare_to } = p as PatternsParams;
      if (compare_to === undefined) return;
      try {
        resolveTimeRange(compare_to, Date.now());
      } catch (err) {
        throw fieldError('params.compare_to', (err as Error).message);
      }
      return;
    }
    default:
      throw new Error(`Unhandled query type ${type satisfies never}`);
  }
}

/** A timechart's span over the query's range makes at most its bucket cap (else a 400). */
function checkTimecharts(program: Program, range: { fromMs: number; toMs: number }): void {
  for (const st of program.stages) if (st.s === 'timechart') timechartBuckets(range, st.spanMs);
}
