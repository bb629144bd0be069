/**
 * Pipelines: ordered steps that pull fields out of events at intake, before they are
 * stored and before triggers see them. A pipeline applies to the events its `when`
 * (query language; empty: all) selects; each step may have an `if` of its own.
 *
 * Step kinds: `grok` (first pattern that matches wins), `regex` (RE2 named groups),
 * `kv`, `json`, `rename`, `set` (`{{field}}` in the value is replaced by that field's
 * value), `remove`, `timestamp` (first format that reads the value sets `ts`), `drop`.
 * A step that does not match (no pattern matches, the field is missing, no format reads
 * the time, the text is not JSON) leaves the event unchanged and the next step runs. A
 * step that fails (the event would exceed the field limit, `set` of a time that is not
 * one) undoes the whole pipeline for that event, which is counted and goes on to the
 * next pipeline unchanged.
 */
import { COLUMN_KINDS, type NormalisedEvent } from '../../core/event.js';
import type { JsonType } from '../../core/record-shape.js';
import type { FieldErrors } from '../../errors/errors.js';
import type { FilterNode } from '../../filter/ast.js';
import { compilePredicate, type Predicate } from '../../filter/evaluate.js';
import { parseQuery } from '../../syntax/parse-query.js';
import { EventDoc, finishShape, RESERVED_NAMES, StepFailure } from './event-doc.js';
import {
  compileTrustedPattern,
  compileUserPattern,
  type Extractor,
  FIELD_NAME,
  PatternError,
} from './grok.js';
import { compileTimeFormat, parseOffset, TimeFormatError, type TimeParser } from './time-format.js';

/** A pipeline as stored and as the API shows its definition. */
export interface PipelineDefinition {
  name: string;
  when: string;
  steps: unknown[];
}

export interface PipelineStats {
  /** Events the pipeline's `when` selected. */
  matched: number;
  /** Events on which a step failed (the pipeline was undone for them). */
  failed: number;
  /** Events a `drop` step removed. */
  dropped: number;
}

interface Step {
  readonly test: Predicate | null;
  readonly run: (doc: EventDoc) => void;
}

export interface CompiledPipeline {
  readonly id: number;
  readonly name: string;
  readonly when: Predicate | null;
  readonly steps: readonly Step[];
  readonly stats: PipelineStats;
}

/** Thrown with every problem of a definition, keyed by where it is (`steps[1].grok.patterns[0]`). */
export class PipelineDefinitionError extends Error {
  constructor(readonly errors: FieldErrors) {
    super(`Invalid pipeline: ${Object.keys(errors).join(', ')}`);
  }
}

const STEP_KINDS = ['grok', 'regex', 'kv', 'json', 'rename', 'set', 'remove', 'timestamp', 'drop'] as const;
type StepKind = (typeof STEP_KINDS)[number];

/**
 * Compiles a definition. `trusted` (the built-ins) runs grok and regex patterns as
 * JavaScript regular expressions instead of RE2 (see grok.ts).
 */
export function compilePipeline(id: number, def: PipelineDefinition, trusted = false): CompiledPipeline {
  const errors: FieldErrors = {};
  const fail = (path: string, message: string) => {
    errors[path] ??= [];
    errors[path].push(message);
  };
  const when = compileCondition(def.when, 'when', fail);
  if (!Array.isArray(def.steps)) fail('steps', 'Must be a list of steps.');
  const steps: Step[] = [];
  (Array.isArray(def.steps) ? def.steps : []).forEach((raw, i) => {
    const step = compileStep(raw, `steps[${i}]`, trusted, fail);
    if (step) steps.push(step);
  });
  if (Object.keys(errors).length > 0) throw new PipelineDefinitionError(errors);
  return { id, name: def.name, when, steps, stats: { matched: 0, failed: 0, dropped: 0 } };
}

type Fail = (path: string, message: string) => void;

function compileCondition(query: unknown, path: string, fail: Fail): Predicate | null {
  if (query === undefined || query === null || query === '') return null;
  if (typeof query !== 'string') {
    fail(path, 'Must be a query (text).');
    return null;
  }
  try {
    const filter = parseQuery(query, { path });
    return filter.kind === 'true' ? null : (fieldPredicate(filter) ?? compilePredicate(filter));
  } catch (err) {
    fail(path, (err as Error).message);
    return null;
  }
}

/**
 * The conditions steps use most (`_event:"Failed"`, `_exists_:fw.in`, and ANDs and NOTs of
 * them) on fields that are not columns, as direct lookups: the same answers as the
 * evaluator (string equality is exact there too) at a tenth of the cost, which matters
 * for steps that every event of an app reaches. Null for anything else.
 */
function fieldPredicate(node: FilterNode): Predicate | null {
  switch (node.kind) {
    case 'cond': {
      if (Object.hasOwn(COLUMN_KINDS, node.field)) return null;
      const field = node.field;
      if (node.op === 'exists') return (e) => e.fields !== undefined && Object.hasOwn(e.fields, field);
      if (node.op === 'eq' && typeof node.value === 'string') {
        const value = node.value;
        return (e) => e.fields !== undefined && Object.hasOwn(e.fields, field) && e.fields[field] === value;
      }
      return null;
    }
    case 'not': {
      const item = fieldPredicate(node.item);
      return item && ((e) => !item(e));
    }
    case 'and': {
      const items = node.items.map(fieldPredicate);
      if (items.some((p) => p === null)) return null;
      const [a, b, ...rest] = items as Predicate[];
      if (rest.length === 0 && a && b) return (e) => a(e) && b(e);
      return (e) => (items as Predicate[]).every((p) => p(e));
    }
    default:
      return null;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function compileStep(raw: unknown, path: string, trusted: boolean, fail: Fail): Step | null {
  if (!isObject(raw)) {
    fail(path, 'A step is an object such as {"grok": {...}}.');
    return null;
  }
  const kinds = Object.keys(raw).filter((k) => k !== 'if');
  const kind = kinds[0] as StepKind | undefined;
  if (kinds.length !== 1 || !STEP_KINDS.includes(kind as StepKind)) {
    fail(path, `A step has exactly one of ${STEP_KINDS.join(', ')} (and optionally "if").`);
    return null;
  }
  const test = compileCondition(raw.if, `${path}.if`, fail);
  const opts = raw[kind as StepKind];
  const at = `${path}.${kind}`;
  if (!isObject(opts)) {
    fail(at, 'Must be an object.');
    return null;
  }
  const known = STEP_OPTIONS[kind as StepKind];
  for (const key of Object.keys(opts)) if (!known.includes(key)) fail(`${at}.${key}`, 'Unknown option.');
  const run = STEP_COMPILERS[kind as StepKind](opts, at, trusted, fail);
  return run ? { test, run } : null;
}

const STEP_OPTIONS: Record<StepKind, readonly string[]> = {
  grok: ['field', 'patterns'],
  regex: ['field', 'pattern'],
  kv: ['field', 'separator', 'assign', 'prefix'],
  json: ['field', 'target'],
  rename: ['from', 'to'],
  set: ['field', 'value'],
  remove: ['field'],
  timestamp: ['field', 'formats', 'timezone'],
  drop: [],
};

type StepCompiler = (
  opts: Record<string, unknown>,
  at: string,
  trusted: boolean,
  fail: Fail,
) => ((doc: EventDoc) => void) | null;

/** A field name option: readable (`readonly`) or written/removed too. */
function fieldOption(
  opts: Record<string, unknown>,
  key: string,
  at: string,
  fail: Fail,
  write: boolean,
  fallback?: string,
): string | null {
  const value = opts[key] ?? fallback;
  if (typeof value !== 'string' || !FIELD_NAME.test(value)) {
    fail(`${at}.${key}`, 'Must be a field name (letters, digits, _ . @ -).');
    return null;
  }
  if (write && RESERVED_NAMES.has(value)) {
    fail(`${at}.${key}`, `"${value}" is filled by Logscope and cannot be changed by a pipeline.`);
    return null;
  }
  return value;
}

function stringOption(opts: Record<string, unknown>, key: string, at: string, fail: Fail, fallback: string) {
  const value = opts[key] ?? fallback;
  if (typeof value !== 'string' || value === '') {
    fail(`${at}.${key}`, 'Must be a non-empty string.');
    return null;
  }
  return value;
}

/** Writes captured fields; names Logscope fills itself are skipped. */
function writeAll(doc: EventDoc, pairs: Array<[string, string]>): void {
  for (const [name, value] of pairs) if (!RESERVED_NAMES.has(name)) doc.write(name, value, false);
}

function compilePatterns(patterns: unknown, at: string, trusted: boolean, grok: boolean, fail: Fail) {
  const list = Array.isArray(patterns) ? patterns : [patterns];
  if (list.length === 0 || list.some((p) => typeof p !== 'string' || p === '')) {
    fail(at, grok ? 'Must be a non-empty list of patterns.' : 'Must be a pattern.');
    return null;
  }
  const out: Extractor[] = [];
  list.forEach((pattern: string, i) => {
    const where = grok ? `${at}[${i}]` : at;
    try {
      out.push(trusted ? compileTrustedPattern(pattern) : compileUserPattern(pattern, grok));
    } catch (err) {
      if (err instanceof PatternError) fail(where, `${err.message} (at position ${err.offset})`);
      else fail(where, (err as Error).message);
    }
  });
  return out.length === list.length ? out : null;
}

const STEP_COMPILERS: Record<StepKind, StepCompiler> = {
  grok(opts, at, trusted, fail) {
    const field = fieldOption(opts, 'field', at, fail, false, 'message');
    const extractors = compilePatterns(opts.patterns, `${at}.patterns`, trusted, true, fail);
    if (field === null || extractors === null) return null;
    return (doc) => {
      const text = doc.get(field);
      if (text === undefined) return;
      for (const extract of extractors) {
        const pairs = extract(text);
        if (pairs) {
          writeAll(doc, pairs);
          return;
        }
      }
    };
  },
  regex(opts, at, trusted, fail) {
    const field = fieldOption(opts, 'field', at, fail, false, 'message');
    const extractors = compilePatterns(opts.pattern, `${at}.pattern`, trusted, false, fail);
    if (field === null || extractors === null) return null;
    const extract = extractors[0] as Extractor;
    return (doc) => {
      const text = doc.get(field);
      const pairs = text === undefined ? null : extract(text);
      if (pairs) writeAll(doc, pairs);
    };
  },
  kv(opts, at, _trusted, fail) {
    const field = fieldOption(opts, 'field', at, fail, false, 'message');
    const separator = stringOption(opts, 'separator', at, fail, ' ');
    const assign = stringOption(opts, 'assign', at, fail, '=');
    const prefix = opts.prefix === undefined ? '' : stringOption(opts, 'prefix', at, fail, '');
    if (field === null || separator === null || assign === null || prefix === null) return null;
    return (doc) => {
      const text = doc.get(field);
      if (text === undefined) return;
      const pairs: Array<[string, string]> = [];
      for (const part of text.split(separator)) {
        const eq = part.indexOf(assign);
        if (eq <= 0) continue;
        const key = prefix + part.slice(0, eq).trim();
        const value = unquote(part.slice(eq + assign.length).trim());
        if (value !== '' && FIELD_NAME.test(key)) pairs.push([key, value]);
      }
      writeAll(doc, pairs);
    };
  },
  json(opts, at, _trusted, fail) {
    const field = fieldOption(opts, 'field', at, fail, false, 'message');
    const target = opts.target === undefined ? '' : fieldOption(opts, 'target', at, fail, true);
    if (field === null || target === null) return null;
    return (doc) => {
      const text = doc.get(field);
      if (text === undefined || !text.trimStart().startsWith('{')) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return;
      }
      if (!isObject(parsed)) return;
      const values: Array<[string, string, JsonType | undefined]> = [];
      flattenJson(parsed, target, values, 0);
      // Each value keeps its JSON type, as extra fields do at intake: `7` stays a number.
      for (const [name, text, type] of values)
        if (FIELD_NAME.test(name) && !RESERVED_NAMES.has(name)) doc.write(name, text, false, type);
    };
  },
  rename(opts, at, _trusted, fail) {
    const from = fieldOption(opts, 'from', at, fail, true);
    const to = fieldOption(opts, 'to', at, fail, true);
    if (from === null || to === null) return null;
    if (from === 'ts' || to === 'ts') {
      fail(at, 'ts cannot be renamed; use a timestamp step to set it.');
      return null;
    }
    return (doc) => {
      const value = doc.get(from);
      if (value === undefined) return;
      doc.remove(from);
      doc.write(to, value, true);
    };
  },
  set(opts, at, _trusted, fail) {
    const field = fieldOption(opts, 'field', at, fail, true);
    if (typeof opts.value !== 'string' && typeof opts.value !== 'number' && typeof opts.value !== 'boolean') {
      fail(`${at}.value`, 'Must be a string, number or boolean.');
      return null;
    }
    if (field === null) return null;
    const render = template(String(opts.value));
    return (doc) => {
      const value = render(doc);
      if (value !== '') doc.write(field, value, true);
    };
  },
  remove(opts, at, _trusted, fail) {
    const field = fieldOption(opts, 'field', at, fail, true);
    if (field === null) return null;
    if (field === 'ts') {
      fail(`${at}.field`, 'Every event has a time: ts cannot be removed.');
      return null;
    }
    return (doc) => doc.remove(field);
  },
  timestamp(opts, at, _trusted, fail) {
    const field = fieldOption(opts, 'field', at, fail, false);
    const offset = opts.timezone === undefined ? 0 : parseZone(opts.timezone);
    if (offset === null) fail(`${at}.timezone`, 'Must be UTC or an offset such as +02:00.');
    const formats = opts.formats;
    if (!Array.isArray(formats) || formats.length === 0) {
      fail(`${at}.formats`, 'Must be a non-empty list of formats.');
      return null;
    }
    const parsers: TimeParser[] = [];
    formats.forEach((format: unknown, i) => {
      if (typeof format !== 'string' || format === '') {
        fail(`${at}.formats[${i}]`, 'Must be a format.');
        return;
      }
      try {
        parsers.push(compileTimeFormat(format, offset ?? 0));
      } catch (err) {
        if (err instanceof TimeFormatError)
          fail(`${at}.formats[${i}]`, `${err.message} (at position ${err.offset})`);
        else throw err;
      }
    });
    if (field === null || offset === null || parsers.length !== formats.length) return null;
    return (doc) => {
      const text = doc.get(field);
      if (text === undefined) return;
      for (const parse of parsers) {
        const ms = parse(text, doc.event.received_at);
        if (ms !== null) {
          doc.setTime(ms);
          return;
        }
      }
    };
  },
  drop() {
    return (doc) => {
      doc.dropped = true;
    };
  },
};

function parseZone(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  if (/^(?:utc|gmt|z)$/i.test(value)) return 0;
  return parseOffset(value);
}

function unquote(text: string): string {
  const q = text[0];
  return (q === '"' || q === "'") && text.length >= 2 && text.endsWith(q) ? text.slice(1, -1) : text;
}

function flattenJson(
  obj: Record<string, unknown>,
  prefix: string,
  out: Array<[string, string, JsonType | undefined]>,
  depth: number,
) {
  for (const [key, value] of Object.entries(obj)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (value === null || value === undefined) continue;
    if (isObject(value) && depth < 16) flattenJson(value, name, out, depth + 1);
    else if (typeof value === 'string') out.push([name, value, undefined]);
    else
      out.push([
        name,
        JSON.stringify(value),
        typeof value === 'number' ? 'n' : typeof value === 'boolean' ? 'b' : 'j',
      ]);
  }
}

/** `{{field}}` replaced by the field's value (empty when missing). */
function template(text: string): (doc: EventDoc) => string {
  const parts = text.split(/\{\{\s*([A-Za-z_@][A-Za-z0-9_.@-]*)\s*\}\}/);
  if (parts.length === 1) return () => text;
  return (doc) => parts.map((p, i) => (i % 2 === 1 ? (doc.get(p) ?? '') : p)).join('');
}

/** What happened to one event, for `simulate`. */
export interface PipelineTrace {
  applied: string[];
  failures: Array<{ pipeline: string; error: string }>;
}

/**
 * The enabled pipelines, in order. `process` runs them over a piece of events at intake;
 * `run` over one event (simulate).
 */
export class PipelineSet {
  /** Time spent in pipelines since start (s), for /metrics. */
  seconds = 0;

  constructor(readonly pipelines: readonly CompiledPipeline[]) {}

  /** The events to store: pipelines applied, dropped ones left out. */
  process(events: readonly NormalisedEvent[]): NormalisedEvent[] {
    if (this.pipelines.length === 0) return events as NormalisedEvent[];
    const started = performance.now();
    const out: NormalisedEvent[] = [];
    for (const event of events) {
      const result = this.run(event);
      if (result !== null) out.push(result);
    }
    this.seconds += (performance.now() - started) / 1000;
    return out;
  }

  /** One event through every pipeline; null when one dropped it. */
  run(event: NormalisedEvent, trace?: PipelineTrace): NormalisedEvent | null {
    const doc = new EventDoc(event);
    for (const p of this.pipelines) {
      if (p.when !== null && !p.when(doc.event)) continue;
      p.stats.matched++;
      const point = doc.checkpoint();
      try {
        for (const step of p.steps) {
          if (step.test !== null && !step.test(doc.event)) continue;
          step.run(doc);
          if (doc.dropped) break;
        }
      } catch (err) {
        // Any error, not only a StepFailure: one event must never fail a whole request.
        doc.restore(point);
        p.stats.failed++;
        trace?.failures.push({
          pipeline: p.name,
          error: err instanceof StepFailure ? err.message : `step failed: ${String(err)}`,
        });
        continue;
      }
      trace?.applied.push(p.name);
      if (doc.dropped) {
        p.stats.dropped++;
        return null;
      }
    }
    if (doc.event === event) return event;
    finishShape(event, doc.event, doc.edited, doc.types);
    return doc.event;
  }
}
