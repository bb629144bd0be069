/**
 * The constructors of filter nodes (ast.ts): each freezes what it builds and keeps the
 * simplified normal form (flat and/or, no `true` inside `and`, no double negation).
 */
import type { CondFor, CondNode, FilterNode, FilterOp, OpValue, TextNode, TrueNode } from './ast.js';

export const TRUE: TrueNode = Object.freeze({ kind: 'true' });

/**
 * Operators whose negation is another operator. Every backend must treat `ne` as exactly
 * `NOT eq` (and so on), which is what lets `not()` fold them.
 */
export const NEGATED_OP = Object.freeze({
  eq: 'ne',
  ne: 'eq',
  in: 'not_in',
  not_in: 'in',
  contains: 'not_contains',
  not_contains: 'contains',
  exists: 'not_exists',
  not_exists: 'exists',
} as const satisfies Partial<Record<FilterOp, FilterOp>>);

type NegatableOp = keyof typeof NEGATED_OP;

const isNegatable = (op: FilterOp): op is NegatableOp => Object.hasOwn(NEGATED_OP, op);

/** Builds a frozen condition. `exists` / `not_exists` take no value. */
export function cond<Op extends FilterOp>(
  field: string,
  op: Op,
  ...value: OpValue<Op> extends undefined ? [] : [OpValue<Op>]
): CondFor<Op> {
  const v = value[0];
  const node =
    v === undefined
      ? { kind: 'cond', field, op }
      : { kind: 'cond', field, op, value: Array.isArray(v) ? Object.freeze([...v]) : v };
  // The overload signature above is what makes this sound; TS cannot relate the
  // conditional parameter type to the conditional return type by itself.
  return Object.freeze(node) as unknown as CondFor<Op>;
}

export function text(value: string, phrase = false): TextNode {
  return Object.freeze(phrase ? { kind: 'text', value, phrase: true } : { kind: 'text', value });
}

/** Conjunction, flattened; `true` items drop out; no items means `true`. */
export function and(...items: readonly FilterNode[]): FilterNode {
  const flat: FilterNode[] = [];
  for (const item of items) {
    if (item.kind === 'and') flat.push(...item.items);
    else if (item.kind !== 'true') flat.push(item);
  }
  if (flat.length === 0) return TRUE;
  if (flat.length === 1) return flat[0]!;
  return Object.freeze({ kind: 'and', items: Object.freeze(flat) });
}

/**
 * Disjunction, flattened; any `true` item makes it `true`. At least one item, because
 * an empty disjunction would be "match nothing", which the AST does not need to express.
 */
export function or(first: FilterNode, ...rest: readonly FilterNode[]): FilterNode {
  const flat: FilterNode[] = [];
  for (const item of [first, ...rest]) {
    if (item.kind === 'true') return TRUE;
    if (item.kind === 'or') flat.push(...item.items);
    else flat.push(item);
  }
  if (flat.length === 1) return flat[0]!;
  return Object.freeze({ kind: 'or', items: Object.freeze(flat) });
}

/**
 * Negation. Conditions are two-valued (never unknown, see filter/evaluate.ts), so
 * double negation cancels and `not eq` is `ne`.
 */
export function not(item: FilterNode): FilterNode {
  if (item.kind === 'not') return item.item;
  if (item.kind === 'cond' && isNegatable(item.op)) {
    const op = NEGATED_OP[item.op];
    return Object.freeze({ ...item, op }) as CondNode;
  }
  return Object.freeze({ kind: 'not', item });
}

/** Rebuilds a tree (possibly made by hand) in the normal form the constructors keep. */
export function simplify(node: FilterNode): FilterNode {
  switch (node.kind) {
    case 'and':
      return and(...node.items.map(simplify));
    case 'or': {
      const [first, ...rest] = node.items.map(simplify);
      return first === undefined ? node : or(first, ...rest);
    }
    case 'not':
      return not(simplify(node.item));
    case 'cond': {
      if (Object.isFrozen(node) && (!('value' in node) || Object.isFrozen(node.value))) return node;
      const value = 'value' in node && Array.isArray(node.value) ? Object.freeze([...node.value]) : undefined;
      return Object.freeze(value === undefined ? { ...node } : { ...node, value }) as CondNode;
    }
    case 'text':
      return text(node.value, node.phrase ?? false);
    case 'true':
      return TRUE;
    default:
      return node satisfies never;
  }
}

/** Depth (nodes on the longest root path) and size, checked against FILTER_LIMITS. */
export function measure(node: FilterNode): { depth: number; nodes: number } {
  switch (node.kind) {
    case 'and':
    case 'or': {
      let depth = 0;
      let nodes = 1;
      for (const item of node.items) {
        const m = measure(item);
        depth = Math.max(depth, m.depth);
        nodes += m.nodes;
      }
      return { depth: depth + 1, nodes };
    }
    case 'not': {
      const m = measure(node.item);
      return { depth: m.depth + 1, nodes: m.nodes + 1 };
    }
    case 'cond':
      return { depth: 1, nodes: node.op === 'in' || node.op === 'not_in' ? node.value.length : 1 };
    case 'text':
    case 'true':
      return { depth: 1, nodes: 1 };
    default:
      return node satisfies never;
  }
}
