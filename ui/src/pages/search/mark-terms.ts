import { tokenize } from './query.js';

/**
 * The query's terms to mark (`<mark>`, highlight.tsx) where a row or the event panel shows
 * them: its words, phrases and `field:value` values, not its operators, negated terms,
 * regexes or comparisons. Bounded work: only the first MARK_CHARS characters of a text are
 * searched, at most MAX_MARKS marks drawn in one text (a 64 KB message costs what 8 KB do).
 */
export const MARK_CHARS = 8_000;
const MAX_MARKS = 200;
const MAX_TERMS = 20;
/** A word that compares a field (`status>=500`): no text to find. */
const COMPARISON = /^[\w.@-]+(?:>=|<=|!=|>|<|=)/;

const unquote = (s: string) =>
  s.startsWith('"')
    ? s.slice(1, s.endsWith('"') && s.length > 1 ? -1 : undefined).replace(/\\(.)/g, '$1')
    : s;

/** The text a word stands for: its wildcards dropped (the longest literal piece of it). */
function literal(word: string): string {
  const pieces = word.split(/[*?]/);
  return pieces.reduce((a, b) => (b.length > a.length ? b : a), '');
}

/** The terms of a query to mark, lower-cased, longest first, without repeats. */
export function queryTerms(query: string): string[] {
  const terms = new Set<string>();
  let negated = false;
  /** Depth inside a negated group: `-(a OR b)` marks neither. */
  let skipDepth = 0;
  let depth = 0;
  for (const t of tokenize(query)) {
    if (t.type === 'operator' && t.text === '|') break;
    if (t.type === 'paren') {
      if (t.text === '(') {
        depth++;
        if (negated && skipDepth === 0) skipDepth = depth;
        negated = false;
      } else {
        if (skipDepth === depth) skipDepth = 0;
        depth = Math.max(0, depth - 1);
      }
      continue;
    }
    if ((t.type === 'operator' && t.text === '-') || (t.type === 'keyword' && t.text === 'NOT')) {
      negated = true;
      continue;
    }
    if (t.type === 'keyword' || t.type === 'operator') continue;
    if (t.type === 'propertyName') {
      continue;
    }
    if (t.type === 'punctuation') continue;
    const wasNegated = negated || skipDepth > 0;
    negated = false;
    if (wasNegated || t.type === 'regexp' || COMPARISON.test(t.text)) continue;
    const text = (t.type === 'string' ? unquote(t.text) : literal(t.text)).trim().toLowerCase();
    if (text.length >= 2 || (text.length === 1 && /\w/.test(text))) terms.add(text);
  }
  return [...terms].sort((a, b) => b.length - a.length).slice(0, MAX_TERMS);
}

/** `text` cut into plain and marked pieces, the terms found case-insensitively. */
export function splitMarks(text: string, terms: readonly string[]): { text: string; mark: boolean }[] {
  if (terms.length === 0 || text === '') return [{ text, mark: false }];
  const head = text.slice(0, MARK_CHARS);
  const lower = head.toLowerCase();
  // Lower-casing changed some character's length: positions would not match, mark nothing.
  if (lower.length !== head.length) return [{ text, mark: false }];
  const ranges: [number, number][] = [];
  for (const term of terms) {
    for (
      let at = lower.indexOf(term);
      at !== -1 && ranges.length < MAX_MARKS * 4;
      at = lower.indexOf(term, at + term.length)
    )
      ranges.push([at, at + term.length]);
  }
  if (ranges.length === 0) return [{ text, mark: false }];
  ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const out: { text: string; mark: boolean }[] = [];
  let pos = 0;
  let marks = 0;
  for (const [from, to] of ranges) {
    if (from < pos || marks >= MAX_MARKS) continue;
    if (from > pos) out.push({ text: text.slice(pos, from), mark: false });
    out.push({ text: text.slice(from, to), mark: true });
    pos = to;
    marks++;
  }
  if (pos < text.length) out.push({ text: text.slice(pos), mark: false });
  return out;
}
