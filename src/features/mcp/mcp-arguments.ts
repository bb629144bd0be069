/**
 * A tool's arguments: declared once (kind, limits, description), giving the tool's
 * `inputSchema` (JSON Schema 2020-12) and the check a call's arguments pass. A number
 * above its maximum is taken as the maximum; anything else wrong is an ArgumentError whose
 * text names the argument and says what is accepted (docs/mcp.md).
 */
import { parseIsoMs } from '../../core/time.js';
import { MAX_TS_SECONDS, MIN_TS_SECONDS, type TimeRangeParam } from '../../query/time-range.js';
import { TIME_PRESETS } from '../../shared/time-presets.js';

/** An argument a call got wrong: its text is the tool result's (`isError: true`). */
export class ArgumentError extends Error {
  override name = 'ArgumentError';
}

export type ArgSpec = { description: string } & (
  | { kind: 'string'; maxLength: number }
  | { kind: 'integer'; minimum: number; maximum: number; default: number }
  | { kind: 'number'; minimum: number; default: number }
  | { kind: 'names'; maxItems: number }
  | { kind: 'time_range' }
  | { kind: 'baseline' }
);

export interface ArgsSpec {
  properties: Record<string, ArgSpec>;
  required: readonly string[];
}

/** A field name, as the query language and the REST API take one. */
const FIELD_NAME = /^[A-Za-z0-9_.@-]{1,256}$/;
const FIELD_NAME_PATTERN = '^[A-Za-z0-9_.@-]{1,256}$';

const PRESETS_TEXT = `${TIME_PRESETS.map((p) => p.value).join(', ')} or last_<n>_<minutes|hours|days>`;

const TIME_SCHEMA = { anyOf: [{ type: 'string' }, { type: 'number' }] };

const timeRangeSchema = (description: string, extraNames: readonly string[] = []) => ({
  description,
  anyOf: [
    {
      type: 'string',
      description: `A preset: ${PRESETS_TEXT}${extraNames.length ? `, or ${extraNames.join(' or ')}` : ''}.`,
    },
    {
      type: 'object',
      properties: { preset: { type: 'string', description: 'A preset name.' } },
      required: ['preset'],
      additionalProperties: false,
    },
    {
      type: 'object',
      properties: {
        from: { ...TIME_SCHEMA, description: 'ISO 8601 (no zone: UTC) or Unix seconds; inclusive.' },
        to: {
          ...TIME_SCHEMA,
          description: 'ISO 8601 (no zone: UTC) or Unix seconds; exclusive; default now.',
        },
      },
      required: ['from'],
      additionalProperties: false,
    },
  ],
});

function propertySchema(spec: ArgSpec): Record<string, unknown> {
  const { description } = spec;
  switch (spec.kind) {
    case 'string':
      return { type: 'string', maxLength: spec.maxLength, description };
    case 'integer':
      return {
        type: 'integer',
        minimum: spec.minimum,
        maximum: spec.maximum,
        default: spec.default,
        description,
      };
    case 'number':
      return { type: 'number', minimum: spec.minimum, default: spec.default, description };
    case 'names':
      return {
        type: 'array',
        items: { type: 'string', pattern: FIELD_NAME_PATTERN },
        maxItems: spec.maxItems,
        description,
      };
    case 'time_range':
      return timeRangeSchema(description);
    case 'baseline':
      return timeRangeSchema(description, ['"previous"', '"same_time_last_week"']);
    default:
      return spec satisfies never;
  }
}

/** The tool's `inputSchema`. */
export function inputSchema(spec: ArgsSpec): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(Object.entries(spec.properties).map(([k, v]) => [k, propertySchema(v)])),
    ...(spec.required.length ? { required: [...spec.required] } : {}),
    additionalProperties: false,
  };
}

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`);

/** One time of a range: ISO 8601 (no zone: UTC) or Unix seconds → Unix ms. */
function timeOf(name: string, value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) {
    if (value < MIN_TS_SECONDS || value > MAX_TS_SECONDS)
      throw new ArgumentError(`${name}: Unix seconds must be between year 0 and year 10000.`);
    return value * 1000;
  }
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if (/^-?\d+(\.\d+)?$/.test(trimmed)) return timeOf(name, Number(trimmed));
    const ms = parseIsoMs(trimmed);
    if (ms !== null && ms >= MIN_TS_SECONDS * 1000 && ms <= MAX_TS_SECONDS * 1000) return ms;
  }
  throw new ArgumentError(
    `${name}: "${String(value).slice(0, 100)}" is not a time; give ISO 8601 ("2026-11-27T05:00:00Z"; no zone: UTC) or Unix seconds.`,
  );
}

/**
 * A time range argument as the query API takes it (`{preset}` or whole Unix seconds
 * `{ts_from, ts_to}`: `from` rounded down, `to` up). `names`: the extra preset words it
 * takes (a baseline's).
 */
export function timeRangeArg(name: string, value: unknown, names: readonly string[] = []): TimeRangeParam {
  const presetOf = (p: string): TimeRangeParam => ({ preset: p });
  if (typeof value === 'string') return presetOf(value);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ArgumentError(
      `${name}: must be a preset name (${PRESETS_TEXT}${names.length ? `, ${names.join(', ')}` : ''}), {"preset": name} or {"from": time, "to": time}; got ${typeOf(value)}.`,
    );
  const keys = Object.keys(value);
  const v = value as Record<string, unknown>;
  if ('preset' in v) {
    if (keys.length !== 1 || typeof v.preset !== 'string')
      throw new ArgumentError(`${name}: {"preset": name} takes one string and nothing else.`);
    return presetOf(v.preset);
  }
  const unknown = keys.find((k) => k !== 'from' && k !== 'to');
  if (unknown !== undefined)
    throw new ArgumentError(
      `${name}: "${unknown.slice(0, 100)}" is not accepted; give "from" and "to" (or "preset").`,
    );
  if (!('from' in v)) throw new ArgumentError(`${name}: "from" is missing; give {"from": time, "to": time}.`);
  const from = timeOf(`${name}.from`, v.from);
  const to = v.to === undefined ? Date.now() : timeOf(`${name}.to`, v.to);
  if (from >= to) throw new ArgumentError(`${name}: from must be before to.`);
  return { ts_from: Math.floor(from / 1000), ts_to: Math.ceil(to / 1000) };
}

/** A call's arguments checked against the tool's: the values, numbers clamped, defaults filled. */
export function checkArgs(spec: ArgsSpec, args: unknown): Record<string, unknown> {
  if (args === undefined || args === null) args = {};
  if (typeof args !== 'object' || Array.isArray(args))
    throw new ArgumentError(`arguments: must be an object; got ${typeOf(args)}.`);
  const given = args as Record<string, unknown>;
  const names = Object.keys(spec.properties);
  for (const key of Object.keys(given))
    if (!Object.hasOwn(spec.properties, key))
      throw new ArgumentError(
        `${key.slice(0, 100)}: not an argument of this tool; it takes ${names.length ? names.join(', ') : 'none'}.`,
      );
  for (const key of spec.required)
    if (given[key] === undefined) throw new ArgumentError(`${key}: missing; it is required.`);
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(spec.properties)) {
    const value = given[key];
    if (value === undefined) {
      if (s.kind === 'integer' || s.kind === 'number') out[key] = s.default;
      continue;
    }
    out[key] = checkOne(key, s, value);
  }
  return out;
}

function checkOne(key: string, s: ArgSpec, value: unknown): unknown {
  switch (s.kind) {
    case 'string':
      if (typeof value !== 'string')
        throw new ArgumentError(`${key}: must be a string; got ${typeOf(value)}.`);
      if (value.length > s.maxLength)
        throw new ArgumentError(`${key}: must be at most ${s.maxLength} characters long.`);
      return value;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value))
        throw new ArgumentError(
          `${key}: must be an integer from ${s.minimum} to ${s.maximum}; got ${shown(value)}.`,
        );
      if (value < s.minimum)
        throw new ArgumentError(
          `${key}: must be at least ${s.minimum} (at most ${s.maximum}); got ${value}.`,
        );
      return Math.min(value, s.maximum);
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value))
        throw new ArgumentError(`${key}: must be a number ≥ ${s.minimum}; got ${shown(value)}.`);
      if (value < s.minimum) throw new ArgumentError(`${key}: must be at least ${s.minimum}; got ${value}.`);
      return value;
    case 'names': {
      if (!Array.isArray(value))
        throw new ArgumentError(`${key}: must be an array of field names; got ${typeOf(value)}.`);
      if (value.length > s.maxItems) throw new ArgumentError(`${key}: at most ${s.maxItems} field names.`);
      for (const name of value)
        if (typeof name !== 'string' || !FIELD_NAME.test(name))
          throw new ArgumentError(
            `${key}: ${shown(name)} is not a field name (letters, digits, _ . @ -, up to 256 characters).`,
          );
      return value;
    }
    case 'time_range':
      return timeRangeArg(key, value);
    case 'baseline':
      return timeRangeArg(key, value, ['previous', 'same_time_last_week']);
    default:
      return s satisfies never;
  }
}

const shown = (v: unknown) => {
  const text = typeof v === 'string' ? `"${v}"` : (JSON.stringify(v) ?? String(v));
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
};
