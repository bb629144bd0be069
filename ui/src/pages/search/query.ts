/**
 * The query language as the UI needs it (docs/query-language.md): a tokenizer for syntax
 * highlighting and completion, and building `field:"value"` filters. Pure functions, no
 * DOM and no CodeMirror, so the initial bundle can use them and tests can run them.
 */
import { AGG_OPS, EVAL_FUNCTIONS, PIPE_NAMES } from '@shared/pipe-names';

export type TokenType =
  | 'propertyName'
  | 'string'
  | 'keyword'
  | 'operator'
  | 'regexp'
  | 'number'
  | 'atom'
  | 'paren'
  | 'squareBracket'
  | 'punctuation'
  | null;

/** Carried from one line to the next (a quoted phrase or regex may span lines). */
export interface TokenState {
  /** Inside an unterminated `"…"` or `/…/` that started on an earlier line. */
  open: '"' | '/' | null;
  /** The previous token was `field:` (so the next one is its value). */
  afterColon: boolean;
  /** Past the first `|`: the rest is pipes (docs/query-language.md#pipes). */
  pipe: boolean;
  /** Right after a `|`: the next word names a pipe. */
  pipeName: boolean;
}

export const startState = (): TokenState => ({ open: null, afterColon: false, pipe: false, pipeName: false });

/** The pipes, aggregates and functions the query box completes (docs/query-language.md#pipes). */
export { PIPE_NAMES };
export const PIPE_FUNCTIONS = [...AGG_OPS, ...EVAL_FUNCTIONS] as const;
const PIPE_KEYWORDS = new Set(['by', 'as', 'from', 'span', 'AND', 'OR', 'NOT']);

/** A token of the pipes part: pipe names and keywords, functions, numbers, strings, operators. */
function readPipeToken(line: string, pos: number, state: TokenState): { end: number; type: TokenType } {
  const c = line[pos] ?? '';
  const pipeName = state.pipeName;
  state.pipeName = false;
  if (c === '|') {
    state.pipeName = true;
    return { end: pos + 1, type: 'operator' };
  }
  if (c === '"') {
    const { end, closed } = closeOf(line, pos + 1, '"');
    if (!closed) state.open = '"';
    return { end, type: 'string' };
  }
  if (c === '(' || c === ')') return { end: pos + 1, type: 'paren' };
  if (c === ',') return { end: pos + 1, type: 'punctuation' };
  const op = /^(!=|>=|<=|[=<>+*/])/.exec(line.slice(pos));
  if (op) return { end: pos + (op[1] ?? '').length, type: 'operator' };
  const word = /^[^\s()",|=<>!+*/]+/.exec(line.slice(pos))?.[0] ?? '';
  if (!word) return { end: pos + 1, type: null };
  const end = pos + word.length;
  if (pipeName || PIPE_KEYWORDS.has(word)) return { end, type: 'keyword' };
  if (NUMBER.test(word)) return { end, type: 'number' };
  if (line[end] === '(') return { end, type: 'atom' };
  if (word === '-') return { end, type: 'operator' };
  return { end, type: 'propertyName' };
}

/** Whether a query has pipes (a `|` outside quotes, regexes and escapes): it runs as a Table. */
export const hasPipes = (query: string) =>
  tokenize(query).some((t) => t.text === '|' && t.type === 'operator');

const KEYWORDS = new Set(['AND', 'OR', 'NOT', 'TO']);
/** Characters that end a word outside quotes; in a value `:` is an ordinary character. */
const WORD_END = /[\s()":[\]{}|]/;
const VALUE_END = /[\s()"[\]{}|]/;
const NUMBER = /^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/** Where a quoted string or regex opened at `from` (its opening char already read) ends. */
function closeOf(line: string, from: number, quote: '"' | '/'): { end: number; closed: boolean } {
  let i = from;
  while (i < line.length) {
    const c = line[i];
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === quote) {
      // A regex ends at a `/` followed by whitespace, `)` or the end of the query.
      if (quote === '/' && i + 1 < line.length && !/[\s)|]/.test(line[i + 1] ?? '')) {
        i++;
        continue;
      }
      return { end: i + 1, closed: true };
    }
    i++;
  }
  return { end: line.length, closed: false };
}

/** Is `pos` where a term starts (after whitespace, `(`, or at the start of the line)? */
const termStart = (line: string, pos: number) => pos === 0 || /[\s(]/.test(line[pos - 1] ?? '');

/**
 * Reads one token of `line` at `pos` (not whitespace: the caller skips that). Returns its
 * end and type and updates `state`. The shape of CodeMirror's StreamLanguage `token`.
 */
export function readToken(line: string, pos: number, state: TokenState): { end: number; type: TokenType } {
  if (state.open) {
    const { end, closed } = closeOf(line, pos, state.open);
    const type = state.open === '"' ? 'string' : 'regexp';
    if (closed) state.open = null;
    return { end, type };
  }
  if (state.pipe) return readPipeToken(line, pos, state);
  const c = line[pos] ?? '';
  if (c === '|') {
    state.pipe = true;
    state.pipeName = true;
    state.afterColon = false;
    return { end: pos + 1, type: 'operator' };
  }
  const afterColon = state.afterColon;
  state.afterColon = false;

  if (c === '"' || (c === '/' && (afterColon || termStart(line, pos)))) {
    const { end, closed } = closeOf(line, pos + 1, c);
    if (!closed) state.open = c;
    return { end, type: c === '"' ? 'string' : 'regexp' };
  }
  if (c === '(' || c === ')') return { end: pos + 1, type: 'paren' };
  if (c === '[' || c === ']' || c === '{' || c === '}') return { end: pos + 1, type: 'squareBracket' };
  if (c === ':') {
    // `field:` then its value (a space after the colon is allowed).
    state.afterColon = afterColon;
    return { end: pos + 1, type: 'punctuation' };
  }
  if ((c === '-' || c === '+') && !afterColon && termStart(line, pos))
    return { end: pos + 1, type: 'operator' };
  if (afterColon) {
    const cmp = /^[<>]=?/.exec(line.slice(pos));
    if (cmp) {
      state.afterColon = true;
      return { end: pos + cmp[0].length, type: 'operator' };
    }
  }

  // A word: up to whitespace or one of ( ) " : [ ] { }, backslash escapes included.
  const stop = afterColon ? VALUE_END : WORD_END;
  let i = pos;
  while (i < line.length) {
    const ch = line[i] ?? '';
    if (ch === '\\') {
      i += 2;
      continue;
    }
    if (stop.test(ch)) break;
    i++;
  }
  if (i === pos) return { end: pos + 1, type: null };
  const end = Math.min(i, line.length);
  const word = line.slice(pos, end);
  if (line[end] === ':' && !afterColon) {
    state.afterColon = true;
    return { end, type: 'propertyName' };
  }
  if (KEYWORDS.has(word)) return { end, type: 'keyword' };
  if (word === '*') return { end, type: 'atom' };
  if (NUMBER.test(word)) return { end, type: 'number' };
  if (afterColon) return { end, type: word.includes('*') ? 'atom' : 'string' };
  return { end, type: null };
}

export interface Token {
  from: number;
  to: number;
  type: TokenType;
  text: string;
}

/** Every token of a (one-line or multi-line) query, whitespace left out. */
export function tokenize(query: string): Token[] {
  const out: Token[] = [];
  const state = startState();
  let offset = 0;
  for (const line of query.split('\n')) {
    let pos = 0;
    while (pos < line.length) {
      if (!state.open && /\s/.test(line[pos] ?? '')) {
        pos++;
        continue;
      }
      const { end, type } = readToken(line, pos, state);
      out.push({ from: offset + pos, to: offset + end, type, text: line.slice(pos, end) });
      pos = end;
    }
    offset += line.length + 1;
  }
  return out;
}

// --- Filters ---------------------------------------------------------------------------

/** A value as a quoted, literal query value: `"…"` with `\` and `"` escaped. */
export const quoteValue = (value: string) => `"${value.replace(/[\\"]/g, '\\$&')}"`;

/** A field name as the query language reads it (names are letters, digits, `_ . - @`). */
export const fieldName = (name: string) =>
  name.replace(/[^\p{L}\p{N}_.@-]/gu, (c) => `\\${c}`).replace(/^-/, '\\-');

/**
 * The term that selects (or, negated, excludes) events whose field equals a value exactly.
 * Numbers of a number field stay unquoted (integer columns compare numerically); everything
 * else is quoted, so wildcards, regex slashes, CIDR blocks and keywords in it are literal.
 */
export function filterTerm(field: string, value: string, opts: { negate?: boolean; numeric?: boolean } = {}) {
  const v = opts.numeric && NUMBER.test(value) ? value : quoteValue(value);
  return `${opts.negate ? '-' : ''}${fieldName(field)}:${v}`;
}

/**
 * `query` narrowed by `term`. A query with a top-level OR is wrapped in parentheses first
 * (`a OR b c` is `a OR (b AND c)`); the term is not added twice, and its opposite
 * (`-host:"x"` for `host:"x"`) is taken out.
 */
export function addTerm(query: string, term: string): string {
  const trimmed = query.trim();
  if (trimmed === '' || trimmed === '*' || trimmed === '*:*') return term;
  const opposite = term.startsWith('-') ? term.slice(1) : `-${term}`;
  const parts = splitTopLevel(trimmed);
  if (parts?.includes(term)) return trimmed;
  if (parts?.includes(opposite)) {
    const rest = parts.filter((p) => p !== opposite);
    return [...rest, term].join(' ');
  }
  return hasTopLevelOr(trimmed) ? `(${trimmed}) ${term}` : `${trimmed} ${term}`;
}

/** The top-level terms of an AND-only query (juxtaposed), or null when it has OR or AND. */
function splitTopLevel(query: string): string[] | null {
  const tokens = tokenize(query);
  if (tokens.some((t) => t.type === 'keyword' && (t.text === 'OR' || t.text === 'AND'))) return null;
  const parts: string[] = [];
  let depth = 0;
  let start = -1;
  let prevEnd = -1;
  for (const t of tokens) {
    const gap = prevEnd >= 0 && t.from > prevEnd;
    if (depth === 0 && start >= 0 && gap && !/:\s*$/.test(query.slice(start, prevEnd))) {
      parts.push(query.slice(start, prevEnd));
      start = -1;
    }
    if (start < 0) start = t.from;
    if (t.text === '(' || t.text === '[' || t.text === '{') depth++;
    if (t.text === ')' || t.text === ']' || t.text === '}') depth = Math.max(0, depth - 1);
    prevEnd = t.to;
  }
  if (start >= 0) parts.push(query.slice(start, prevEnd));
  return parts;
}

function hasTopLevelOr(query: string): boolean {
  let depth = 0;
  for (const t of tokenize(query)) {
    if (t.type === 'paren') depth += t.text === '(' ? 1 : -1;
    else if (depth === 0 && t.type === 'keyword' && t.text === 'OR') return true;
  }
  return false;
}

// --- Completion --------------------------------------------------------------------------

export type CompletionSpot =
  | { kind: 'field'; from: number; prefix: string }
  | { kind: 'value'; field: string; from: number; prefix: string }
  /** A pipe's name, right after `|`. */
  | { kind: 'pipe'; from: number; prefix: string }
  /** A word inside a pipe: a function, an aggregate or a field. */
  | { kind: 'pipe-word'; from: number; prefix: string };

/**
 * What is being typed at `pos`: a field name (or free word) or the value of `field:`.
 * Null inside a quoted phrase that is not a value, a regex, or right after an operator.
 */
export function completionSpot(query: string, pos: number): CompletionSpot | null {
  const before = query.slice(0, pos);
  const tokens = tokenize(before);
  if (tokens.some((t) => t.text === '|' && t.type === 'operator')) {
    const last = tokens.at(-1);
    // Inside a quoted pattern: nothing to complete.
    if (last?.type === 'string' && last.to === before.length) return null;
    const word = /[\p{L}\p{N}_.@-]*$/u.exec(before)?.[0] ?? '';
    const from = pos - word.length;
    const prev = tokens.filter((t) => t.to <= from).at(-1);
    if (prev?.text === '|') return { kind: 'pipe', from, prefix: word };
    return { kind: 'pipe-word', from, prefix: word };
  }
  // The value of `field:` (optionally after a comparison), quoted or not, being typed.
  const value =
    /(?:^|[\s(])(-|\+)?([\p{L}\p{N}_.@][\p{L}\p{N}_.@-]*):\s*("(?:[^"\\]|\\.)*|[^\s()":/[\]{}][^\s()":[\]{}]*|)$/u.exec(
      before,
    );
  if (value) {
    const typed = value[3] ?? '';
    return { kind: 'value', field: value[2] ?? '', from: pos - typed.length, prefix: typed };
  }
  const word = /(?:^|[\s(])[-+]?([\p{L}\p{N}_.@][\p{L}\p{N}_.@-]*|)$/u.exec(before);
  if (!word) return null;
  // Not inside an unterminated phrase or regex.
  const open = tokenize(before).at(-1);
  if (open && (open.type === 'string' || open.type === 'regexp') && open.to === before.length) {
    const closed = open.text.length > 1 && open.text.endsWith(open.text[0] ?? '');
    if (!closed) return null;
  }
  const prefix = word[1] ?? '';
  return { kind: 'field', from: pos - prefix.length, prefix };
}

// --- Errors ------------------------------------------------------------------------------

/**
 * Where the server's message about `query` points: `Syntax error at position 14 (line 1,
 * column 15): …` (src/syntax/parse-query.ts; offsets in UTF-16 code units, as
 * here) gives 14. Null when the message names no position within the query.
 */
export function errorPosition(message: string | null | undefined, query: string): number | null {
  const m = /\bat position (\d+) \(line \d+, column \d+\)/.exec(message ?? '');
  if (!m) return null;
  const at = Number(m[1]);
  return at <= query.length ? at : null;
}

/**
 * The query around an error position, to show it: the text before, the character at the
 * position (empty at the end of the query) and the text after, each cut to `room`
 * characters beside the position with `…` where cut.
 */
export function errorContext(
  query: string,
  at: number,
  room = 60,
): { before: string; at: string; after: string } {
  const flat = query.replace(/\s/g, ' ');
  // One character, if that is two code units (outside the BMP).
  const width = (flat.codePointAt(at) ?? 0) > 0xffff ? 2 : at < flat.length ? 1 : 0;
  const start = Math.max(0, at - room);
  const end = Math.min(flat.length, at + width + room);
  return {
    before: (start > 0 ? '…' : '') + flat.slice(start, at),
    at: flat.slice(at, at + width),
    after: flat.slice(at + width, end) + (end < flat.length ? '…' : ''),
  };
}
