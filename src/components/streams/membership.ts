import type { FilterNode } from '../../filter/ast.js';
import { not, or, TRUE } from '../../filter/builders.js';
import { parseQuery } from '../../filter/language/parse-query.js';
import type { StreamRow } from './streams-repository.js';

/**
 * Which events belong to each stream, as filters: a stream's parsed rule, and for the
 * built-in Default the events no other rule matches. Rules are evaluated when events are
 * read, so a new or changed stream applies to what is already stored.
 */
export function membership(streams: readonly StreamRow[]): Map<number, FilterNode> {
  const out = new Map<number, FilterNode>();
  const rules: FilterNode[] = [];
  for (const s of streams) {
    if (s.builtin || s.rule === null) continue;
    const rule = parseQuery(s.rule, { path: 'rule' });
    rules.push(rule);
    out.set(s.id, rule);
  }
  const [first, ...rest] = rules;
  const unclaimed = first ? not(or(first, ...rest)) : TRUE;
  for (const s of streams) if (s.builtin) out.set(s.id, unclaimed);
  return out;
}
