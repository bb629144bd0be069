import { bodyText, groupText, headline, type Notification } from './notification.js';

/**
 * A webhook channel's `body_template` (docs/api/alerting.md): a Mustache subset, parsed once
 * when the channel is saved (so a template that does not parse, or names a variable that
 * does not exist, is a 400 then and never a failed delivery), rendered per notification.
 *
 * Tags: `{{name}}` (escaped for the content type), `{{{name}}}` (as it is), `{{#name}}…{{/name}}`,
 * `{{^name}}…{{/name}}`, `{{.}}`, `{{! comment }}`; names may be dotted. No partials, no
 * delimiter changes, no lambdas, and no standalone-line trimming: what is between tags is
 * sent byte for byte.
 */

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'var'; path: string[]; raw: boolean }
  | { kind: 'section'; path: string[]; inverted: boolean; children: Node[] };

/** A parsed template. */
export interface BodyTemplate {
  readonly nodes: readonly Node[];
}

/** Why a template does not parse: a message naming the name or the position. */
export class TemplateError extends Error {}

/**
 * The variables a template may name, as a tree: a leaf (`true`), an object of named
 * members, `'any'` (an object whose members are open: `group.<field>`), or a list whose
 * items have the given members.
 */
type Shape = true | 'any' | { [name: string]: Shape } | { items: { [name: string]: Shape } };

const TRIGGER: Shape = { id: true, name: true, severity: true, description: true };
const SAMPLE: Shape = { ev_id: true, ts: true, message: true };

/** Every variable of every kind (one of another kind renders as missing). */
const VARIABLES: { [name: string]: Shape } = {
  kind: true,
  is_fire: true,
  is_recover: true,
  is_test: true,
  is_report: true,
  headline: true,
  text: true,
  trigger: TRIGGER,
  condition: { type: true },
  group: 'any',
  group_text: true,
  count: true,
  window_seconds: true,
  fired_at: true,
  search_url: true,
  samples: { items: SAMPLE },
  pattern: { pattern_id: true, template: true },
  schedule: { id: true, name: true },
  report: { id: true, title: true, ftype: true, filename: true, size: true },
  link: true,
  link_expires_at: true,
  time_range: { ts_from: true, ts_to: true },
  run: { at: true, trigger: true },
};

/** The largest template (bytes of UTF-8). */
export const TEMPLATE_MAX_BYTES = 16 * 1024;

const isName = (s: string) => {
  if (!s) return false;
  for (const ch of s) {
    const ok =
      (ch >= 'a' && ch <= 'z') ||
      (ch >= 'A' && ch <= 'Z') ||
      (ch >= '0' && ch <= '9') ||
      ch === '_' ||
      ch === '-';
    if (!ok) return false;
  }
  return true;
};

/** Line and column (1-based) of an offset, for messages. */
function position(source: string, offset: number): string {
  let line = 1;
  let column = 1;
  for (let i = 0; i < offset && i < source.length; i++) {
    if (source[i] === '\n') {
      line++;
      column = 1;
    } else column++;
  }
  return `line ${line}, column ${column}`;
}

/** The members a name may continue with in a context frame: a shape, or undefined when unknown. */
function member(frame: Shape, name: string): Shape | undefined {
  if (frame === 'any') return 'any';
  if (frame === true) return undefined;
  if ('items' in frame && typeof frame.items === 'object') return undefined;
  return (frame as { [name: string]: Shape })[name];
}

/** The shape of a dotted name looked up through the context stack (innermost first), or undefined. */
function resolveShape(stack: readonly Shape[], path: readonly string[]): Shape | undefined {
  if (path.length === 0) return stack[stack.length - 1];
  const [head, ...rest] = path as [string, ...string[]];
  for (let i = stack.length - 1; i >= 0; i--) {
    let shape = member(stack[i] as Shape, head);
    if (shape === undefined) continue;
    for (const part of rest) {
      shape = member(shape, part);
      if (shape === undefined) return undefined;
    }
    return shape;
  }
  return undefined;
}

/** The context a section's body sees: a list's item, an object, or the same. */
const inner = (shape: Shape): Shape =>
  typeof shape === 'object' && 'items' in shape && typeof shape.items === 'object'
    ? (shape.items as Shape)
    : shape;

/** Parses a template; throws TemplateError naming the name or the position. */
export function parseTemplate(source: string): BodyTemplate {
  const root: Node[] = [];
  const open: Array<{ path: string[]; name: string; at: number; children: Node[]; shape: Shape }> = [];
  const shapes: Shape[] = [VARIABLES];
  let children = root;
  let i = 0;
  const pathOf = (name: string, at: number): string[] => {
    if (name === '.') return [];
    const parts = name.split('.');
    if (!parts.every(isName)) throw new TemplateError(`"${name}" at ${position(source, at)} is not a name`);
    return parts;
  };
  const known = (name: string, path: string[], at: number): Shape => {
    const shape = resolveShape(shapes, path);
    if (shape === undefined) throw new TemplateError(`unknown variable "${name}" at ${position(source, at)}`);
    return shape;
  };
  while (i < source.length) {
    const start = source.indexOf('{{', i);
    if (start < 0) {
      children.push({ kind: 'text', text: source.slice(i) });
      break;
    }
    if (start > i) children.push({ kind: 'text', text: source.slice(i, start) });
    const triple = source.startsWith('{{{', start);
    const close = triple ? '}}}' : '}}';
    const end = source.indexOf(close, start + (triple ? 3 : 2));
    if (end < 0) throw new TemplateError(`unterminated tag at ${position(source, start)}`);
    const body = source.slice(start + (triple ? 3 : 2), end);
    i = end + close.length;
    if (triple) {
      const name = body.trim();
      children.push({ kind: 'var', path: pathOf(name, start), raw: true });
      known(name, pathOf(name, start), start);
      continue;
    }
    const sigil = body.trimStart()[0];
    if (sigil === '!') continue;
    if (sigil === '#' || sigil === '^' || sigil === '/' || sigil === '&') {
      const name = body.trimStart().slice(1).trim();
      const path = pathOf(name, start);
      if (sigil === '&') {
        known(name, path, start);
        children.push({ kind: 'var', path, raw: true });
      } else if (sigil === '/') {
        const top = open.pop();
        if (!top) throw new TemplateError(`"{{/${name}}}" at ${position(source, start)} closes no section`);
        if (top.name !== name)
          throw new TemplateError(
            `"{{/${name}}}" at ${position(source, start)} does not close "${top.name}" (opened at ${position(source, top.at)})`,
          );
        shapes.pop();
        children = open.length ? (open[open.length - 1] as { children: Node[] }).children : root;
      } else {
        const shape = known(name, path, start);
        // A section inside one of its own name walks its list once per item of the outer
        // one, and again per nesting: a 168-byte template could hold the server for seconds.
        const outer = open.find((o) => o.name === name);
        if (outer)
          throw new TemplateError(
            `section "${name}" at ${position(source, start)} is inside a section of the same name (opened at ${position(source, outer.at)})`,
          );
        const node: Node = { kind: 'section', path, inverted: sigil === '^', children: [] };
        children.push(node);
        open.push({ path, name, at: start, children: node.children, shape });
        shapes.push(sigil === '^' ? (shapes[shapes.length - 1] as Shape) : inner(shape));
        children = node.children;
      }
      continue;
    }
    const name = body.trim();
    const path = pathOf(name, start);
    known(name, path, start);
    children.push({ kind: 'var', path, raw: false });
  }
  const unclosed = open.pop();
  if (unclosed)
    throw new TemplateError(
      `section "${unclosed.name}" opened at ${position(source, unclosed.at)} is not closed`,
    );
  return { nodes: root };
}

/** Whether a content type is JSON (`application/json`, `*+json`): `{{name}}` then escapes as in a JSON string. */
export function isJsonType(contentType: string): boolean {
  const media = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return media === 'application/json' || media.endsWith('+json');
}

const lookup = (stack: readonly unknown[], path: readonly string[]): unknown => {
  if (path.length === 0) return stack[stack.length - 1];
  const [head, ...rest] = path as [string, ...string[]];
  for (let i = stack.length - 1; i >= 0; i--) {
    const frame = stack[i];
    if (frame === null || typeof frame !== 'object' || !Object.hasOwn(frame, head)) continue;
    let value: unknown = (frame as Record<string, unknown>)[head];
    for (const part of rest) {
      if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
      value = (value as Record<string, unknown>)[part];
    }
    return value;
  }
  return undefined;
};

const falsy = (v: unknown) =>
  v === undefined || v === null || v === false || v === '' || v === 0 || (Array.isArray(v) && v.length === 0);

/** A value as written: `json` escapes it as inside a JSON string (no quotes added). */
function write(value: unknown, json: boolean): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return json ? JSON.stringify(text).slice(1, -1) : text;
}

/**
 * What one rendering may do (docs/api/alerting.md): the nodes it visits and the bytes it
 * writes. A template within TEMPLATE_MAX_BYTES whose sections cannot contain themselves
 * stays far below both; past either the rendering stops, and the delivery fails saying so.
 */
export const RENDER_BUDGET = { nodes: 100_000, bytes: 1024 * 1024 } as const;

/** A rendering went past RENDER_BUDGET. */
export class TemplateBudgetError extends Error {}

/** Renders a parsed template with `vars`, escaping `{{name}}` for `contentType`. */
export function renderTemplate(
  template: BodyTemplate,
  vars: Record<string, unknown>,
  contentType: string,
  budget: { nodes: number; bytes: number } = RENDER_BUDGET,
): string {
  const json = isJsonType(contentType);
  const out: string[] = [];
  let nodesLeft = budget.nodes;
  let bytesLeft = budget.bytes;
  const emit = (text: string) => {
    bytesLeft -= text.length;
    if (bytesLeft < 0)
      throw new TemplateBudgetError(`the body template renders more than ${budget.bytes} bytes`);
    out.push(text);
  };
  const walk = (nodes: readonly Node[], stack: unknown[]) => {
    for (const node of nodes) {
      if (--nodesLeft < 0)
        throw new TemplateBudgetError(`the body template renders more than ${budget.nodes} tags and texts`);
      if (node.kind === 'text') emit(node.text);
      else if (node.kind === 'var') emit(write(lookup(stack, node.path), json && !node.raw));
      else {
        const value = lookup(stack, node.path);
        if (node.inverted) {
          if (falsy(value)) walk(node.children, stack);
        } else if (Array.isArray(value)) for (const item of value) walk(node.children, [...stack, item]);
        else if (!falsy(value)) walk(node.children, [...stack, value]);
      }
    }
  };
  walk(template.nodes, [vars]);
  return out.join('');
}

/**
 * The variables of a notification (docs/api/alerting.md): those of another kind are left
 * out, so they render as missing.
 */
export function templateVariables(n: Notification): Record<string, unknown> {
  const vars: Record<string, unknown> = {
    kind: n.kind,
    is_fire: n.kind === 'fire',
    is_recover: n.kind === 'recover',
    is_test: n.kind === 'test',
    is_report: false,
    headline: headline(n),
    text: bodyText(n),
  };
  // A test is neither an alert nor a report: the variables of both render as missing.
  if (n.kind === 'test') return vars;
  Object.assign(vars, {
    count: n.count,
    window_seconds: n.window_seconds,
    fired_at: n.fired_at,
    search_url: n.search_url,
    samples: n.samples,
    group: n.group,
    group_text: groupText(n.group),
  });
  if (n.trigger) vars.trigger = n.trigger;
  if (n.condition) vars.condition = { type: n.condition.type };
  if (n.pattern) vars.pattern = n.pattern;
  return vars;
}
