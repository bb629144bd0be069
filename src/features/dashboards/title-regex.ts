import { fieldError } from '../../errors/errors.js';
import { checkRegex, compileRegex } from '../../filter/regex.js';

/**
 * `title__iregex`: a case-insensitive RE2 search (unanchored, as Django's iregex),
 * checked by the same code as the query `regex` operator. The match runs in the
 * application rather than in SQL, so SQLite and PostgreSQL (whose `~*` speaks POSIX ARE,
 * where `\b` is a backspace) answer the same; RE2 runs in linear time, so no pattern can
 * stall a list request.
 */
export function titleMatcher(pattern: string, field = 'title__iregex'): (titles: string[]) => boolean[] {
  const problem = checkRegex(pattern);
  if (problem !== undefined) throw fieldError(field, `Not a valid RE2 regular expression: ${problem}.`);
  const re = compileRegex(pattern, { ignoreCase: true });
  return (titles) => titles.map((t) => re.test(t));
}
