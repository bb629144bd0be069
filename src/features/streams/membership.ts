import { createHash } from 'node:crypto';
import type { StreamRules } from '../../event-store/read-scope.js';
import type { FilterNode } from '../../filter/ast.js';
import { not, or, TRUE } from '../../filter/builders.js';
import { parseQuery } from '../../syntax/parse-query.js';
import type { StreamRow } from './streams-repository.js';

/**
 * Which events belong to each stream, as filters: a stream's parsed rule, and for the
 * built-in Default the events no other rule matches (`rules`: theirs, when parsed already).
 * Rules are evaluated when events are read, so a new or changed stream applies to what is
 * already stored (a store that keeps membership reads it only once written under the same
 * rules, ADR 0016).
 */
export function membership(
  streams: readonly StreamRow[],
  { streams: rules }: StreamRules = streamRules(streams),
): Map<number, FilterNode> {
  const out = new Map<number, FilterNode>(rules.map((r) => [r.id, r.filter]));
  const [first, ...rest] = rules.map((r) => r.filter);
  const unclaimed = first ? not(or(first, ...rest)) : TRUE;
  for (const s of streams) if (s.builtin) out.set(s.id, unclaimed);
  return out;
}

/** The streams' rules, parsed, in id order, with the key that names them (the event store's). */
export function streamRules(streams: readonly StreamRow[]): StreamRules {
  const rules = streams
    .filter((s) => !s.builtin && s.rule !== null)
    .sort((a, b) => a.id - b.id)
    .map((s) => ({ id: s.id, filter: parseQuery(s.rule as string, { path: 'rule' }) }));
  return rulesWithKey(rules);
}

/** Rules with their key: a digest of the ids and parsed rules. */
export function rulesWithKey(streams: StreamRules['streams']): StreamRules {
  const key = createHash('sha256').update(JSON.stringify(streams)).digest('base64url').slice(0, 22);
  return Object.freeze({ key, streams });
}
