import { extractRegex } from '../capture-regex.js';
import type { PipeDef } from '../pipe-table.js';
import { captures } from './captures.js';

export const extractPipe: PipeDef<'extract'> = {
  rowwise: true,
  usage: 'extract "text with <name> holes" [from field]',
  grammar: `
ExtractPipe
  = "extract" !IdentChar __ s:QuotedAt from:(__ "from" __ @Col)?
    { return h.pipe('extract', { pattern: s.s, patternAt: s.at, ...(from ? { from: from } : {}) }, location()); }

QuotedAt
  = s:Quoted { return { s: s, at: location().start.offset }; }`,
  resolve: (p, scope) => captures(extractRegex(p.pattern, p.patternAt), p, scope),
};
