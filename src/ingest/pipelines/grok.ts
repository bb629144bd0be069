/**
 * Grok: `%{NAME}`, `%{NAME:field}` and `%{NAME:field:type}` references to the pattern
 * library (grok-library.ts) inside a regular expression, as Logstash and Elasticsearch
 * write them. A grok pattern compiles to one RE2 expression whose named groups are
 * numbered (`g0`, `g1`, ...) and mapped back to field names, so field names may hold dots
 * (`http.method`) that group names cannot. Named groups written inline (`(?P<user>...)`)
 * capture too. `:int` and `:float` are accepted and change nothing: every field is stored
 * as text, and the columns (`status`, `bytes`, ports) convert on their own.
 *
 * Every pattern runs on RE2, the built-in pipelines' too: linear time, so no record can
 * stall ingest. (The built-ins once ran as JavaScript regular expressions, which capture
 * faster; one 64 KB record then held the event loop for seconds.)
 */
import { compileRegex, type Regex, requiredLiteral, rewriteGroups } from '../../filter/regex.js';
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

/** The grok library with `IPV6` a class no character is in: a text without `:` holds no IPv6 address. */
const NO_IPV6_LIBRARY: Readonly<Record<string, string>> = {
  ...GROK_LIBRARY,
  IPV6: '[^\\x00-\\x{10FFFF}]',
};

/**
 * Compiles a user's pattern for RE2. Throws PatternError (with the offset, where RE2's
 * message names a part of the pattern as written) for patterns RE2 refuses.
 */
export function compileUserPattern(pattern: string, grok: boolean): Extractor {
  const compiled = grok ? expandGrok(pattern) : expandRegexGroups(pattern);
  let re: Regex;
  try {
    re = compileRegex(compiled.source);
  } catch (err) {
    const message = (err as Error).message;
    const fragment = /`([^`]+)`$/.exec(message)?.[1];
    const at = fragment ? pattern.indexOf(fragment) : -1;
    throw new PatternError(message, Math.max(0, at));
  }
  if (compiled.captures.length === 0) throw new PatternError('the pattern names no field to extract', 0);
  return extractor(pattern, grok, compiled, re);
}

/**
 * A built-in's pattern (grok), compiled like a user's (RE2) when it is first used: the
 * built-ins' expressions took about half a second of every start, most of them for apps a
 * server may never see. A mistake in one is a bug (the pipeline tests compile each).
 */
export function compileTrustedPattern(pattern: string): Extractor {
  return extractor(pattern, true, expandGrok(pattern));
}

/** `re`: the expression compiled already, when it was (to check it). */
function extractor(pattern: string, grok: boolean, compiled: CompiledPattern, re?: Regex): Extractor {
  const full = matcher(compiled, re);
  // Every IPv6 address holds a colon, so in a text without one `%{IPV6}` matches nothing,
  // and the pattern with it written as "nothing" gives the same matches and captures: RE2
  // runs that far smaller program (an sshd line's `from %{IP:src_ip}`: ~5 µs, not ~20).
  const lean = grok ? expandGrok(pattern, NO_IPV6_LIBRARY) : null;
  if (!lean || lean.source === compiled.source) return full;
  const colonFree = matcher(lean);
  return (text) => (text.includes(':') ? full(text) : colonFree(text));
}

/**
 * Matchers made but not compiled yet. A first text paying for its pattern's compile held
 * the event loop ~0.2 s (a syslog line's pattern, cold); `compileOneWaiting` lets the
 * intake compile them one at a time after start, between requests.
 */
const waiting = new Set<() => Extractor>();

/** The pattern's matcher, its expressions compiled on its first text or when warmed. */
function matcher(compiled: CompiledPattern, re?: Regex): Extractor {
  let ready: Extractor | null = null;
  const prepare = () => {
    ready ??= compileMatcher(compiled, re ?? compileRegex(compiled.source));
    waiting.delete(prepare);
    return ready;
  };
  waiting.add(prepare);
  return (text) => (ready ?? prepare())(text);
}

/** Compiles one matcher not compiled yet; false when none is left. */
export function compileOneWaiting(): boolean {
  const next = waiting.values().next();
  if (next.done) return false;
  next.value();
  return true;
}

function compileMatcher(compiled: CompiledPattern, re: Regex): Extractor {
  // Captured by number: a match with named groups also builds a `groups` object.
  const numbered = numberGroups(compiled.source);
  const fast = compileRegex(numbered.source);
  const slots = compiled.captures.map(
    ({ group, field }) => [numbered.index.get(group) ?? -1, field] as const,
  );
  // Text every match contains (` from `, `PROTO=`): looked for first, it answers most
  // "no"s without crossing into RE2 at all.
  const literal = requiredLiteral(compiled.source);
  return (text) => {
    if (literal !== undefined && !text.includes(literal)) return null;
    // The DFA answers "no" several times faster than a capturing match.
    if (!re.test(text)) return null;
    const m = fast.exec(text);
    if (!m) return null;
    const out: Array<[string, string]> = [];
    for (const [i, field] of slots) {
      const value = m[i];
      if (value !== undefined && value !== '') out.push([field, value]);
    }
    return out;
  };
}

/**
 * The expression with its named groups made plain capturing groups, and each name's
 * group number (counting every capturing group, left to right, as RE2 does).
 */
function numberGroups(source: string): { source: string; index: Map<string, number> } {
  const index = new Map<string, number>();
  const out = rewriteGroups(source, (g) => {
    if (g.name === null) return undefined;
    index.set(g.name, g.index);
    return '(';
  });
  return { source: out, index };
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
