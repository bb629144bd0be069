/**
 * The regexes of `extract` and `rex`. Their capturing groups, in order, are the holes or
 * the named groups, each written as a plain `(` (every other group becomes `(?:`), which
 * ClickHouse's `onlyGroup` (event-store/clickhouse/clickhouse-plans.ts) relies on.
 */
import { rewriteGroups } from '../filter/regex.js';
import { PipeError } from './pipe-error.js';

const escapeRe2 = (s: string) => s.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');

/**
 * `extract "…<name>…"`: the literal text around the holes matched as it is, each hole
 * the shortest text up to what follows it (a last hole takes the rest), anywhere in the
 * value; `<_>` matches without making a column. Holes may span lines.
 */
export function extractRegex(pattern: string, at: number): { regex: string; names: Array<string | null> } {
  const names: Array<string | null> = [];
  let regex = '(?s)';
  let i = 0;
  const hole = /<([A-Za-z_][A-Za-z0-9_.@-]*)>/g;
  for (let m = hole.exec(pattern); m; m = hole.exec(pattern)) {
    regex += escapeRe2(pattern.slice(i, m.index));
    const last = m.index + m[0].length === pattern.length;
    regex += last ? '(.*)' : '(.*?)';
    const name = m[1] as string;
    if (name !== '_' && names.includes(name)) throw new PipeError(`the hole <${name}> appears twice`, at);
    names.push(name === '_' ? null : name);
    i = m.index + m[0].length;
  }
  regex += escapeRe2(pattern.slice(i));
  if (!names.some((n) => n !== null))
    throw new PipeError('an extract pattern needs at least one hole such as <name>', at);
  return { regex, names };
}

/**
 * `rex "…(?P<name>…)…"`: RE2 with named groups, each a column. Unnamed groups are made
 * non-capturing so that the capturing groups are exactly the named ones, in order.
 */
export function rexRegex(regex: string, at: number): { regex: string; names: Array<string | null> } {
  const names: string[] = [];
  const out = rewriteGroups(regex, (g) => {
    if (g.index === 0) return undefined;
    if (g.name === null) return '(?:';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(g.name))
      throw new PipeError(`the group name <${g.name}> may hold letters, digits and _ only`, at);
    if (names.includes(g.name)) throw new PipeError(`the group <${g.name}> appears twice`, at);
    names.push(g.name);
    return '(';
  });
  if (!names.length)
    throw new PipeError('a rex regex needs at least one named group such as (?P<name>…)', at);
  return { regex: out, names };
}
