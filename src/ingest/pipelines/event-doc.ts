/**
 * An event as pipeline steps see it: fields read and written by name, where the names
 * of columns (`src_ip`, `status`, `message`, ...) address the columns and every other
 * name a field. A value written to a column is read as a record's value for it would be
 * (`columnValue`): a port must be a port, an IP an IP; a value the column cannot take
 * stays a field of that name, as at intake.
 *
 * Copy on write: the event handed in is never changed. A pipeline's first write copies
 * it, so a pipeline whose step fails is undone by going back to the event it started
 * from (`checkpoint`/`restore`), and an event no pipeline wrote to stays the same object.
 *
 * What `raw` gives back afterwards (`finishShape`): the record as received. Values a
 * pipeline added (fields, columns the record did not fill) are left out of it; a sent
 * value that an extracting step (grok, regex, kv, json, timestamp) replaced is kept in the
 * event's shape, so `raw` still shows what was sent. `set`, `rename` and `remove` are
 * edits: what they change is changed in `raw` too, so a pipeline can scrub a secret.
 */
import type { NormalisedEvent } from '../../core/event.js';
import { decodeShape, encodeShape, type JsonType, type RecordShape } from '../../core/record-shape.js';
import { columnValue, parseTimestamp, WRITABLE_COLUMNS, type WritableColumn } from '../column-values.js';
import { MAX_FIELDS } from '../normalise.js';

/** A step that could not do its work on this event (the event is left as it was). */
export class StepFailure extends Error {}

const WRITABLE = new Set<string>(WRITABLE_COLUMNS);
/** Names no step may write or remove: Logscope fills them itself. */
export const RESERVED_NAMES = new Set([
  'ev_id',
  'received_at',
  'stored_at',
  'intake',
  'fields',
  'shape',
  'pattern_id',
]);

export class EventDoc {
  /** The event as the steps so far left it. */
  event: NormalisedEvent;
  dropped = false;
  /** Columns changed by an edit (set, rename, remove) rather than an extraction. */
  readonly edited: string[] = [];
  /** Fields written with a JSON type other than string (a `json` step's numbers, ...). */
  types = new Map<string, JsonType>();
  private owned = false;

  constructor(readonly original: NormalisedEvent) {
    this.event = original;
  }

  get(name: string): string | undefined {
    const e = this.event;
    if (name === 'ts') return new Date(e.ts).toISOString();
    if (WRITABLE.has(name)) {
      const v = e[name as WritableColumn];
      return v === null ? undefined : String(v);
    }
    return Object.hasOwn(e.fields, name) ? e.fields[name] : undefined;
  }

  /**
   * Writes a value; `edit` marks a set or rename (see the module comment). `type` is the
   * JSON type of a field's value when it is not text (`7` stays a number).
   */
  write(name: string, text: string, edit: boolean, type?: JsonType): void {
    const e = this.own();
    if (edit) this.edited.push(name);
    if (name === 'ts') {
      const ms = parseTimestamp(text);
      if (ms === null) throw new StepFailure(`"${clip(text)}" is not a time`);
      e.ts = ms;
      return;
    }
    if (WRITABLE.has(name)) {
      const value = columnValue(name as WritableColumn, text);
      if (value !== null) {
        (e as unknown as Record<string, unknown>)[name] = value;
        return;
      }
    }
    if (!Object.hasOwn(e.fields, name) && Object.keys(e.fields).length >= MAX_FIELDS)
      throw new StepFailure(`the event would have more than ${MAX_FIELDS} fields`);
    setField(e.fields, name, text);
    if (type) this.types.set(name, type);
    else this.types.delete(name);
  }

  setTime(ms: number): void {
    this.own().ts = ms;
  }

  remove(name: string): void {
    if (this.get(name) === undefined && !Object.hasOwn(this.event.fields, name)) return;
    const e = this.own();
    this.edited.push(name);
    if (WRITABLE.has(name)) (e as unknown as Record<string, unknown>)[name] = null;
    if (Object.hasOwn(e.fields, name)) delete e.fields[name];
  }

  /** Where a pipeline starts: what `restore` goes back to when one of its steps fails. */
  checkpoint(): { event: NormalisedEvent; edited: number; types: Map<string, JsonType> } {
    this.owned = false;
    return { event: this.event, edited: this.edited.length, types: new Map(this.types) };
  }

  restore(point: { event: NormalisedEvent; edited: number; types: Map<string, JsonType> }): void {
    this.event = point.event;
    this.edited.length = point.edited;
    this.types = point.types;
    this.owned = false;
    this.dropped = false;
  }

  private own(): NormalisedEvent {
    if (!this.owned) {
      this.event = { ...this.event, fields: { ...this.event.fields } };
      this.owned = true;
    }
    return this.event;
  }
}

function setField(fields: Record<string, string>, name: string, value: string): void {
  if (name === '__proto__')
    Object.defineProperty(fields, name, { value, enumerable: true, writable: true, configurable: true });
  else fields[name] = value;
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** Shapes made from a parent shape plus added names: events of one kind repeat them. */
const shapeCache = new Map<string, string | null>();

/**
 * The final event's shape, so that `raw` keeps giving back the record as received
 * (see the module comment). `original` is the event before any pipeline.
 */
export function finishShape(
  original: NormalisedEvent,
  final: NormalisedEvent,
  edited: readonly string[],
  types: ReadonlyMap<string, JsonType> = new Map(),
): void {
  const parent = decodeShape(original.shape);
  const omitted = new Set([...(parent.o ?? []), ...(parent.d ?? [])]);
  const derived: string[] = [];
  /** Sent values an extraction replaced (kept), and edited ones (forgotten). */
  const kept: Array<[string, unknown]> = [];
  const forgotten: string[] = [];
  if (final.ts !== original.ts && !parent.nt) {
    if (edited.includes('ts')) forgotten.push('ts');
    else if (!parent.v || !Object.hasOwn(parent.v, 'ts')) {
      kept.push([
        'ts',
        parent.tu === 's'
          ? original.ts / 1000
          : parent.tu === 'ms'
            ? original.ts
            : new Date(original.ts).toISOString(),
      ]);
    }
  }
  for (const column of WRITABLE_COLUMNS) {
    const before = original[column];
    const after = final[column];
    if (before === after) continue;
    if (before === null || omitted.has(column)) {
      if (after !== null && !parent.d?.includes(column)) derived.push(column);
    } else if (edited.includes(column)) forgotten.push(column);
    else if (!parent.v || !Object.hasOwn(parent.v, column)) {
      kept.push([column, column === 'message' && parent.ls ? ` ${before}` : before]);
    }
  }
  const added: string[] = [];
  for (const key of Object.keys(final.fields)) {
    if (!Object.hasOwn(original.fields, key) && !parent.o?.includes(key)) added.push(key);
  }
  const typed = [...types].filter(([key]) => Object.hasOwn(final.fields, key));
  if (kept.length === 0 && forgotten.length === 0) {
    const key = `${original.shape ?? ''}\u0000${derived.join(',')}\u0000${added.join('\u0001')}\u0000${typed.join('\u0001')}`;
    let shape = shapeCache.get(key);
    if (shape === undefined) {
      shape = buildShape(original.shape, derived, added, kept, forgotten, typed);
      if (shapeCache.size >= 1024) shapeCache.clear();
      shapeCache.set(key, shape);
    }
    final.shape = shape;
    return;
  }
  final.shape = buildShape(original.shape, derived, added, kept, forgotten, typed);
}

function buildShape(
  parentText: string | null,
  derived: string[],
  added: string[],
  kept: Array<[string, unknown]>,
  forgotten: string[],
  typed: ReadonlyArray<[string, JsonType]>,
): string | null {
  // A private copy: decodeShape's objects are shared.
  const shape: RecordShape = parentText ? (JSON.parse(parentText) as RecordShape) : {};
  if (typed.length) shape.t = { ...shape.t, ...Object.fromEntries(typed) };
  if (derived.length) shape.d = [...(shape.d ?? []), ...derived];
  if (added.length) shape.o = [...(shape.o ?? []), ...added];
  if (kept.length || forgotten.length) {
    const v = shape.v ?? {};
    for (const [column, value] of kept) v[column] = value;
    for (const column of forgotten) {
      delete v[column];
      if (column === 'message') delete shape.ls;
    }
    if (kept.some(([c]) => c === 'ts') || forgotten.includes('ts')) delete shape.tu;
    if (Object.keys(v).length) shape.v = v;
    else delete shape.v;
  }
  return encodeShape(shape);
}
