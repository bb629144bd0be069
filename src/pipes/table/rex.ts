import { checkRegex } from '../../filter/regex.js';
import { rexRegex } from '../capture-regex.js';
import { PipeError } from '../pipe-error.js';
import type { PipeDef } from '../pipe-table.js';
import { captures } from './captures.js';

export const rexPipe: PipeDef<'rex'> = {
  rowwise: true,
  usage: 'rex "RE2 with (?P<name>…) groups" [from field]',
  grammar: String.raw`
RexPipe
  = "rex" !IdentChar __ s:RawQuotedAt from:(__ "from" __ @Col)?
    { return h.pipe('rex', { regex: s.s, regexAt: s.at, ...(from ? { from: from } : {}) }, location()); }

// A regex in quotes reaches RE2 as written (\d, \., \\); only \" is a quote.
RawQuotedAt
  = '"' cs:RawChar* '"' { return { s: cs.join(''), at: location().start.offset + 1 }; }

RawChar
  = '\\"' { return '"'; }
  / "\\" c:AnyChar { return '\\' + c; }
  / [^"\\]`,
  check(args) {
    const problem = checkRegex(args.regex);
    if (problem !== undefined) throw new PipeError(`invalid regex: ${problem}`, args.regexAt);
  },
  resolve: (p, scope) => captures(rexRegex(p.regex, p.regexAt), p, scope),
};
