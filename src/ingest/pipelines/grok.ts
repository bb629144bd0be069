/**
 * Grok: `%{NAME}`, `%{NAME:field}` and `%{NAME:field:type}` references to the pattern
 * library (grok-library.ts) inside a regular expression, as Logstash and Elasticsearch
 * write them. A grok pattern compiles to one RE2 expression whose named groups are
 * numbered (`g0`, `g1`, ...) and mapped back to field names, so field names may hold dots
 * (`http.method`) that group names cannot. Named groups written inline (`(?P<user>...)`)
 * capture too. `:int` and `:float` are accepted and change nothing: every field is stored
 * as text, and the columns (`status`, `bytes`, ports) convert on their own.
 *
 * User patterns run on RE2 (linear time: no pattern can stall ingest). The built-in
 * pipelines' patterns, written and reviewed here, run as JavaScript regular expressions,
 * which capture about fifteen times faster than the RE2 binding; a test holds every one
 * of them to compile under RE2 as well and to match the same.
 */
import { compileRegex } from '../../query/filter/regex.js';
import { GROK_LIBRARY } from './grok-library.js';

/** A grok or regex pattern that cannot be compiled; `offset` is where, in the pattern as written. */
export class PatternError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

export interface Capture {
  group: string;
  field: string;
}

/** A compiled pattern: the fields it captured, or null when it did not match. */
export type Extractor = (text: string) => Array<[string, string]> | null;

export interface CompiledPattern {
  /** The expanded expression, in RE2 syntax. */
  source: string;
  captures: Capture[];
}

const REFERENCE = /%\{(\w+)(?::([^:}]+))?(?::(\w+))?\}/g;
const TYPES = new Set(['int', 'float', 'long', 'double', 'string']);
/** Field names a pattern may write: letters, digits, `_`, `.`, `@`, `-`. */
export const FIELD_NAME = /^[A-Za-z_@][A-Za-z0-9_.@-]{0,255}$/;
const INLINE_GROUP = /\(\?P?<([A-Za-z_@][A-Za-z0-9_.@-]*)>/g;

/** Expands `pattern` (its references and inline named groups) into one RE2 expression. */
export function expandGrok(pattern: string, library = GROK_LIBRARY): CompiledPattern {
  const captures: Capture[] = [];
  const expandedNames = new Map<string, string>();
  const name = (field: string) => {
    const group = `g${captures.length}`;
    captures.push({ group, field });
    return group;
  };

  const expand = (text: string, stack: string[], top: boolean): string => {
    let out = '';
    let last = 0;
    for (const m of text.matchAll(REFERENCE)) {
      const at = m.index;
      out += inline(text.slice(last, at), top ? last : -1);
      last = at + m[0].length;
      const [, ref, field, type] = m as unknown as [string, string, string | undefined, string | undefined];
      const where = top ? at : 0;
      if (!Object.hasOwn(library, ref)) throw new PatternError(`unknown grok pattern %{${ref}}`, where);
      if (stack.includes(ref)) throw new PatternError(`grok pattern %{${ref}} refers to itself`, where);
      if (type !== undefined && !TYPES.has(type))
        throw new PatternError(`unknown grok type "${type}" (int, float, long, double, string)`, where);
      if (field !== undefined && !FIELD_NAME.test(field))
        throw new PatternError(`"${field}" is not a field name`, where);
      let body = expandedNames.get(ref);
      // Definitions without captures of their own expand once; those with them each time
      // (every use gets its own group numbers).
      if (body === undefined) {
        const before = captures.length;
        body = expand(library[ref] as string, [...stack, ref], false);
        if (captures.length === before) expandedNames.set(ref, body);
      }
      out += field === undefined ? `(?:${body})` : `(?P<${name(field)}>${body})`;
    }
    out += inline(text.slice(last), top ? last : -1);
    return out;
  };

  /** Inline named groups of the user's own text become numbered groups too. */
  const inline = (text: string, offset: number): string =>
    text.replace(INLINE_GROUP, (_all, field: string, at: number) => {
      if (offset >= 0 && !FIELD_NAME.test(field))
        throw new PatternError(`"${field}" is not a field name`, offset + at);
      return `(?P<${name(field)}>`;
    });

  return { source: expand(pattern, [], true), captures };
}

/**
 * Compiles a user's pattern for RE2. Throws PatternError (with the offset, where RE2's
 * message names a part of the pattern as written) for patterns RE2 refuses.
 */
export function compileUserPattern(pattern: string, grok: boolean): Extractor {
  const compiled = grok ? expandGrok(pattern) : expandRegexGroups(pattern);
  let re: ReturnType<typeof compileRegex>;
  try {
    re = compileRegex(compiled.source);
  } catch (err) {
    const message = (err as Error).message;
    const fragment = /: (.+)$/.exec(message)?.[1];
    const at = fragment ? pattern.indexOf(fragment) : -1;
    throw new PatternError(message, Math.max(0, at));
  }
  if (compiled.captures.length === 0) throw new PatternError('the pattern names no field to extract', 0);
  const { captures } = compiled;
  return (text) => {
    // The DFA answers "no" about twenty times faster than a capturing match.
    if (!re.test(text)) return null;
    const groups = re.exec(text)?.groups;
    return groups ? collect(groups, captures) : null;
  };
}

/** A built-in's pattern as a JavaScript regular expression (see the module comment). */
export function compileTrustedPattern(pattern: string): Extractor {
  const { source, captures } = expandGrok(pattern);
  const re = new RegExp(source.replaceAll('(?P<', '(?<'));
  return (text) => {
    const groups = re.exec(text)?.groups;
    return groups ? collect(groups, captures) : null;
  };
}

/** A regex step's pattern: its RE2 named groups become numbered ones mapped to their names. */
function expandRegexGroups(pattern: string): CompiledPattern {
  const captures: Capture[] = [];
  const source = pattern.replace(INLINE_GROUP, (_all, field: string, at: number) => {
    if (!FIELD_NAME.test(field)) throw new PatternError(`"${field}" is not a field name`, at);
    const group = `g${captures.length}`;
    captures.push({ group, field });
    return `(?P<${group}>`;
  });
  return { source, captures };
}

function collect(groups: Record<string, string | undefined>, captures: Capture[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const { group, field } of captures) {
    const value = groups[group];
    if (value !== undefined && value !== '') out.push([field, value]);
  }
  return out;
}
