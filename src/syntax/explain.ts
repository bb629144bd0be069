/**
 * explain: renders the query language, so that what a log line or an error message shows
 * can be pasted back into a search box and means the same (tests check that property).
 */
import type { CondNode, FilterNode, Scalar } from '../filter/ast.js';
import { scalarToString } from '../filter/values.js';

const KEYWORDS = new Set(['AND', 'OR', 'NOT', 'TO']);
const PLAIN_WORD = /^[\p{L}\p{N}_.@][\p{L}\p{N}_.@-]*$/u;
const PLAIN_CHAR = /[\p{L}\p{N}_.@]/u;

const quote = (s: string): string => `"${s.replace(/[\\"]/g, '\\$&')}"`;

/** A literal inside a wildcard value: every character that could mean syntax is escaped. */
const escapeBare = (s: string): string =>
  Array.from(s, (ch) => (PLAIN_CHAR.test(ch) ? ch : `\\${ch}`)).join('');

/** Escapes the `/` that would end the literal; existing escapes stay as they are. */
function regexLiteral(pattern: string): string {
  let out = '/';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) {
      out += ch + pattern[i + 1];
      i++;
    } else out += ch === '/' ? '\\/' : ch;
  }
  return `${out}/`;
}

/** Numbers and booleans bare (unless a leading `-` would read as NOT), strings quoted. */
function renderScalar(v: Scalar, inGroup = false): string {
  if (typeof v === 'string') return quote(v);
  const s = String(v);
  return inGroup && s.startsWith('-') ? quote(s) : s;
}

const renderOrdered = (v: string | number): string => (typeof v === 'number' ? String(v) : quote(v));

/** RE2 syntax for `s` itself: every character with a meaning of its own escaped. */
const re2Literal = (s: string): string => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/**
 * `message:word` searches like a bare word (parse-query.ts), so the conditions whose
 * rendering would be a `message:` word or phrase are rendered as the equivalent anchored
 * regex instead; undefined for every other condition.
 */
function renderMessageCond(node: CondNode): string | undefined {
  if (node.field !== 'message') return undefined;
  const anchored = (values: readonly Scalar[]) => {
    const alternatives = values.map((v) => re2Literal(scalarToString(v)));
    return regexLiteral(
      alternatives.length === 1 ? `^${alternatives[0]}$` : `^(?:${alternatives.join('|')})$`,
    );
  };
  switch (node.op) {
    case 'eq':
      return `message:${anchored([node.value])}`;
    case 'ne':
      return `NOT message:${anchored([node.value])}`;
    case 'in':
      return `message:${anchored(node.value)}`;
    case 'not_in':
      return `NOT message:${anchored(node.value)}`;
    case 'startswith':
      return `message:${regexLiteral(`^${re2Literal(node.value)}`)}`;
    case 'endswith':
      return `message:${regexLiteral(`${re2Literal(node.value)}$`)}`;
    default:
      return undefined;
  }
}

function renderCond(node: CondNode): string {
  const f = node.field;
  const message = renderMessageCond(node);
  if (message !== undefined) return message;
  switch (node.op) {
    case 'eq':
      return `${f}:${renderScalar(node.value)}`;
    case 'ne':
      return `NOT ${f}:${renderScalar(node.value)}`;
    case 'in':
      return `${f}:(${node.value.map((v) => renderScalar(v, true)).join(' OR ')})`;
    case 'not_in':
      return `NOT ${f}:(${node.value.map((v) => renderScalar(v, true)).join(' OR ')})`;
    case 'contains':
      return `${f}:*${escapeBare(node.value)}*`;
    case 'not_contains':
      return `NOT ${f}:*${escapeBare(node.value)}*`;
    case 'startswith':
      return `${f}:${escapeBare(node.value)}*`;
    case 'endswith':
      return `${f}:*${escapeBare(node.value)}`;
    case 'regex':
      return `${f}:${regexLiteral(node.value)}`;
    case 'gt':
      return `${f}:>${renderOrdered(node.value)}`;
    case 'gte':
      return `${f}:>=${renderOrdered(node.value)}`;
    case 'lt':
      return `${f}:<${renderOrdered(node.value)}`;
    case 'lte':
      return `${f}:<=${renderOrdered(node.value)}`;
    case 'between':
      return `${f}:[${renderOrdered(node.value[0])} TO ${renderOrdered(node.value[1])}]`;
    case 'exists':
      return `_exists_:${f}`;
    case 'not_exists':
      return `NOT _exists_:${f}`;
    case 'cidr':
      return `${f}:${node.value}`;
    default:
      return node satisfies never;
  }
}

type Context = 'top' | 'and' | 'not';

function render(node: FilterNode, ctx: Context): string {
  switch (node.kind) {
    case 'or': {
      const s = node.items.map((i) => render(i, 'top')).join(' OR ');
      return ctx === 'top' ? s : `(${s})`;
    }
    case 'and': {
      const s = node.items.map((i) => render(i, 'and')).join(' AND ');
      return ctx === 'not' ? `(${s})` : s;
    }
    case 'not':
      return `NOT ${render(node.item, 'not')}`;
    case 'cond': {
      const s = renderCond(node);
      // A negated condition renders as NOT ...; under another NOT it needs parentheses.
      return ctx === 'not' && s.startsWith('NOT ') ? `(${s})` : s;
    }
    case 'text':
      // A word stays a word (escaped where needed, as `message:*"*` parses to one), so
      // rendering is stable; phrases, keywords and the empty text are quoted.
      if (node.phrase || node.value === '' || KEYWORDS.has(node.value)) return quote(node.value);
      return PLAIN_WORD.test(node.value) ? node.value : escapeBare(node.value);
    case 'true':
      return '*';
    default:
      return node satisfies never;
  }
}

/**
 * A readable rendering in the query language (Lucene-like), for logs and error
 * messages. Parsing it back gives a filter that matches the same events.
 */
export function explain(node: FilterNode): string {
  return render(node, 'top');
}
