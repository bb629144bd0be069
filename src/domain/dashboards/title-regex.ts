import vm from 'node:vm';
import { fieldError } from '../../errors/errors.js';
import { checkRegex, compileRegex } from '../../query/filter/regex.js';

/** How long one list request may spend matching titles before the pattern is refused. */
const MATCH_BUDGET_MS = 250;

// One context for every call: runs are synchronous, so calls never share it at once.
const context = vm.createContext({});
const script = new vm.Script('out = titles.map((t) => re.test(t));');

/**
 * `title__iregex`: a case-insensitive RE2-syntax search (unanchored, as Django's iregex),
 * checked and translated by the same code as the query `regex` operator. The match runs
 * in the application rather than in SQL, so SQLite and PostgreSQL (whose `~*` speaks
 * POSIX ARE, where `\b` is a backspace) answer the same. The translated pattern runs on
 * a backtracking engine, so the match runs under a time budget: a pattern that blows up
 * is a 400, never a stalled process.
 */
export function titleMatcher(pattern: string, field = 'title__iregex'): (titles: string[]) => boolean[] {
  const problem = checkRegex(pattern);
  if (problem !== undefined) throw fieldError(field, `Not a valid RE2 regular expression: ${problem}.`);
  const base = compileRegex(pattern);
  const re = new RegExp(base.source, base.flags.includes('i') ? base.flags : `${base.flags}i`);
  return (titles) => {
    Object.assign(context, { re, titles, out: undefined });
    try {
      script.runInContext(context, { timeout: MATCH_BUDGET_MS });
      return context.out as boolean[];
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
        throw fieldError(field, 'The pattern takes too long to evaluate; simplify it.');
      }
      throw error;
    } finally {
      Object.assign(context, { re: undefined, titles: undefined, out: undefined });
    }
  };
}
