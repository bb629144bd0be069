/**
 * JSON filter conditions → the filter AST.
 *
 * Accepted: an array of conditions that must all hold. A condition is
 * `{"field", "op", "value"}` or `[field, op, value]` (`[field, op]` for exists /
 * not_exists); a group is `{"any": [...]}` (OR), `{"all": [...]}` (AND) or
 * `{"not": condition-or-group}`. `{"any": []}` is refused (it could match nothing, which
 * is never what a client means); `{"all": []}` matches everything, like `[]`.
 *
 * Every problem is collected with the JSON path of the offending part, using the real
 * position in the document: `filter[2].value` for the object form, `filter[2][2]` for
 * the array form, `filter[0].any[1].op` inside groups.
 */

import { AppError, type FieldErrors } from '../errors/errors.js';
import { and, FILTER_LIMITS, FILTER_OPS, type FilterNode, not, or, TRUE } from '../filter/ast.js';
import { buildCondition, checkFieldName, isFilterOp } from '../filter/conditions.js';

export interface FilterIssue {
  readonly path: string;
  readonly message: string;
}

/** A filter that failed validation: a 400 whose `errors` are keyed by JSON path. */
export class FilterValidationError extends AppError {
  override name = 'FilterValidationError';
  declare readonly errors: FieldErrors;

  constructor(readonly issues: readonly FilterIssue[]) {
    const errors: FieldErrors = {};
    for (const { path, message } of issues) {
      const list = errors[path] ?? [];
      list.push(message);
      errors[path] = list;
    }
    const first = issues[0];
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    super(
      400,
      'invalid',
      `Invalid filter: ${first ? `${first.path}: ${first.message}` : 'unknown problem'}${more}`,
      errors,
    );
  }
}

export interface ParseFilterOptions {
  /** Path of the filter in the request, the prefix of every error path. */
  readonly path?: string;
}

const GROUP_KEYS = ['any', 'all', 'not'] as const;
const COND_KEYS = ['field', 'op', 'value'];

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

class Walker {
  readonly issues: FilterIssue[] = [];
  private nodes = 0;
  private overLimit = false;

  constructor(private readonly root: string) {}

  issue(path: string, message: string): undefined {
    this.issues.push({ path, message });
    return undefined;
  }

  /** A list whose items must all hold (the top level and `all`). */
  list(raw: readonly unknown[], path: string, depth: number): FilterNode | undefined {
    const items = raw.map((item, i) => this.node(item, `${path}[${i}]`, depth + 1));
    return items.every((i) => i !== undefined) ? and(...items) : undefined;
  }

  private count(n: number): boolean {
    this.nodes += n;
    if (this.nodes > FILTER_LIMITS.maxNodes && !this.overLimit) {
      this.overLimit = true;
      this.issue(this.root, `has more than ${FILTER_LIMITS.maxNodes} conditions, groups and list values`);
    }
    return !this.overLimit;
  }

  node(raw: unknown, path: string, depth: number): FilterNode | undefined {
    if (this.overLimit) return undefined;
    if (depth > FILTER_LIMITS.maxDepth) {
      return this.issue(path, `groups are nested more than ${FILTER_LIMITS.maxDepth - 2} levels deep`);
    }
    if (Array.isArray(raw)) {
      if (raw.length !== 2 && raw.length !== 3) {
        return this.issue(path, 'a condition array has the form [field, op, value] ([field, op] for exists)');
      }
      return this.condition(raw[0], raw[1], raw[2], [`${path}[0]`, `${path}[1]`, `${path}[2]`]);
    }
    if (!isPlainObject(raw)) {
      return this.issue(
        path,
        'must be a condition ({"field", "op", "value"} or [field, op, value]) or a group',
      );
    }
    const keys = Object.keys(raw);
    if (keys.some((k) => COND_KEYS.includes(k))) {
      const unknown = keys.filter((k) => !COND_KEYS.includes(k));
      for (const k of unknown)
        this.issue(`${path}.${k}`, 'unknown key; a condition has "field", "op" and "value"');
      const built = this.condition(raw.field, raw.op, raw.value, [
        `${path}.field`,
        `${path}.op`,
        `${path}.value`,
      ]);
      return unknown.length === 0 ? built : undefined;
    }
    if (keys.length !== 1) {
      if (keys.length === 0)
        return this.issue(path, 'empty object: expected a condition or a group (any, all, not)');
      const unknown = keys.filter((k) => !(GROUP_KEYS as readonly string[]).includes(k));
      if (unknown.length === 0) return this.issue(path, 'a group has exactly one key: "any", "all" or "not"');
      for (const k of unknown)
        this.issue(`${path}.${k}`, `unknown group key "${k}"; expected "any", "all" or "not"`);
      return undefined;
    }
    const key = keys[0]!;
    const inner = raw[key];
    const innerPath = `${path}.${key}`;
    switch (key) {
      case 'any':
      case 'all': {
        if (!Array.isArray(inner)) return this.issue(innerPath, 'must be an array of conditions');
        if (key === 'any' && inner.length === 0)
          return this.issue(innerPath, 'must contain at least one condition');
        if (!this.count(1)) return undefined;
        if (key === 'all') return this.list(inner, innerPath, depth);
        const items = inner.map((item, i) => this.node(item, `${innerPath}[${i}]`, depth + 1));
        const [first, ...rest] = items;
        return first !== undefined && rest.every((i) => i !== undefined) ? or(first, ...rest) : undefined;
      }
      case 'not': {
        if (!this.count(1)) return undefined;
        const item = this.node(inner, innerPath, depth + 1);
        return item === undefined ? undefined : not(item);
      }
      default:
        return this.issue(innerPath, `unknown group key "${key}"; expected "any", "all" or "not"`);
    }
  }

  private condition(
    field: unknown,
    op: unknown,
    value: unknown,
    [fieldPath, opPath, valuePath]: readonly [string, string, string],
  ): FilterNode | undefined {
    const fieldProblem = checkFieldName(field);
    if (fieldProblem !== undefined) this.issue(fieldPath, fieldProblem);
    if (!isFilterOp(op)) {
      return this.issue(
        opPath,
        typeof op === 'string'
          ? `unknown operator "${op}"; expected one of ${FILTER_OPS.join(', ')}`
          : `must be an operator name, one of ${FILTER_OPS.join(', ')}`,
      );
    }
    // Values are still checked with a bad field name, as a string field, to report all.
    const result = buildCondition(fieldProblem === undefined ? (field as string) : '', op, value);
    if (!result.ok) return this.issue(`${valuePath}${result.at ?? ''}`, result.message);
    if (fieldProblem !== undefined) return undefined;
    const listValues = result.node.op === 'in' || result.node.op === 'not_in' ? result.node.value.length : 1;
    return this.count(listValues) ? result.node : undefined;
  }
}

/**
 * Validates JSON filter conditions and returns their AST (`true` for an absent or empty
 * list). Throws one FilterValidationError listing every problem found.
 */
export function parseFilter(input: unknown, options: ParseFilterOptions = {}): FilterNode {
  const root = options.path ?? 'filter';
  if (input === undefined) return TRUE;
  const walker = new Walker(root);
  const result = Array.isArray(input)
    ? walker.list(input, root, 1)
    : walker.issue(root, 'must be an array of conditions');
  if (walker.issues.length > 0 || result === undefined) {
    throw new FilterValidationError(
      walker.issues.length > 0 ? walker.issues : [{ path: root, message: 'invalid' }],
    );
  }
  return result;
}
