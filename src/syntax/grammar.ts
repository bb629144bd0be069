/**
 * The query-language grammar (Peggy). scripts/query-parser.ts writes the parser from it
 * (`npm run gen:parser`, query-parser.generated.js; a test checks that file is current).
 * Actions stay thin: they hand raw pieces (words as character segments, value
 * descriptors, locations) to the typed helpers (filter-helpers.ts, pipe-helpers.ts), which
 * build the AST and check values.
 *
 * Precedence, loosest first: OR, then AND (explicit or implied by juxtaposition), then
 * the prefixes NOT / `-` / `+`. Unary prefixes are a loop, not recursion, and nesting
 * comes only from parentheses, which parse-query.ts bounds before parsing, so deep input
 * cannot exhaust the stack. Pipes' expressions and conditions are trees the actions build
 * in loops (operator chains, prefix runs); each node is measured as it is made, and one
 * deeper than MAX_EXPRESSION_DEPTH is refused there, before anything walks the tree.
 *
 * Each pipe's own rules are its entry's in the pipe table (pipes/pipe-table.ts), put in
 * here in the order of PIPE_NAMES; what they share is written below them.
 */
import { PIPE_TABLE, pipeRule } from '../pipes/pipe-table.js';
import { PIPE_NAMES } from '../pipes/program.js';

export const QUERY_GRAMMAR = String.raw`
{
  const h = options.helpers;
}

Query
  = _ e:(@Or _)? pipes:PipeTail* { return h.query(e, pipes); }

Or
  = head:And tail:(_ OrOp _ @And)* { return h.or(head, tail); }

And
  = head:Unary tail:(AndSep @Unary)* { return h.and(head, tail); }

AndSep
  = _ AndOp _
  / _

Unary
  = ops:UnaryOp* p:Primary { return h.unary(ops, p); }

UnaryOp
  = NotOp _ { return true; }
  / "-" { return true; }
  / "+" { return false; }

Primary
  = "(" _ e:Or _ ")" { return e; }
  / "*:*" &Delim { return h.all(); }
  / ExistsTerm
  / FieldTerm
  / RegexTerm
  / PhraseTerm
  / WordTerm

ExistsTerm
  = "_exists_:" _ f:FieldName { return h.exists(f, location()); }

// The keyword check keeps "a OR OR b" from being reported as a field missing its ":".
FieldTerm
  = !(Keyword Delim) f:FieldName ":" _ v:FieldValue { return h.field(f, v, location()); }

RegexTerm
  = r:RegexLit { return h.messageRegex(r, location()); }

PhraseTerm
  = s:Quoted { return h.phrase(s); }

WordTerm
  = !(Keyword Delim) !"/" segs:WordSeg+ { return h.word(segs); }

WordSeg
  = "\\" c:AnyChar { return { c: c, escaped: true }; }
  / "*" { return { star: true }; }
  / c:WordChar { return { c: c }; }

FieldValue
  = "(" _ e:ValueOr _ ")" { return e; }
  / ValueTerm

ValueOr
  = head:ValueAnd tail:(_ OrOp _ @ValueAnd)* { return { t: 'or', items: [head, ...tail] }; }

ValueAnd
  = head:ValueUnary tail:(AndSep @ValueUnary)* { return { t: 'and', items: [head, ...tail] }; }

ValueUnary
  = ops:UnaryOp* item:ValuePrimary { return { t: 'unary', ops: ops, item: item }; }

ValuePrimary
  = "(" _ e:ValueOr _ ")" { return e; }
  / !(Keyword Delim) v:ValueTerm { return v; }

ValueTerm
  = RangeValue
  / RelValue
  / r:RegexLit { return { t: 'regex', s: r, loc: location() }; }
  / s:Quoted { return { t: 'quoted', s: s, loc: location() }; }
  / BareValue

RangeValue
  = open:RangeOpen _ lo:RangeBound __ "TO" __ hi:RangeBound _ close:RangeClose
    { return { t: 'range', open: open, lo: lo, hi: hi, close: close, loc: location() }; }

RangeOpen "range"
  = [[{]

RangeClose "closing ] or }"
  = [\]}]

RangeBound
  = "*" &(Space / RangeClose) { return { star: true }; }
  / s:Quoted { return { s: s, quoted: true }; }
  / s:PlainChars { return { s: s, quoted: false }; }

RelValue
  = op:RelOp _ v:RelOperand { return { t: 'rel', op: op, v: v, loc: location() }; }

RelOp
  = ">=" / "<=" / ">" / "<"

RelOperand
  = s:Quoted { return { s: s, quoted: true }; }
  / s:PlainChars { return { s: s, quoted: false }; }

BareValue
  = ![/<>] segs:ValueSeg+ { return { t: 'bare', segs: segs, loc: location() }; }

ValueSeg
  = "\\" c:AnyChar { return { c: c, escaped: true }; }
  / "*" { return { star: true }; }
  / c:ValueChar { return { c: c }; }

PlainChars
  = cs:PlainChar+ { return cs.join(''); }

PlainChar
  = "\\" c:AnyChar { return c; }
  / "*"
  / ValueChar

RegexLit
  = "/" cs:RegexChar* "/" RegexEnd { return cs.join(''); }

// Nothing else can start with "/", so a regex glued to more text is an error right away.
RegexEnd
  = &Delim
  / . { error('a regular expression must be followed by a space, ")" or the end of the query (quote values that start with "/")'); }

RegexChar
  = "\\/" { return '/'; }
  / "\\" c:AnyChar { return '\\' + c; }
  / [^/\\]

Quoted
  = '"' cs:QuotedChar* '"' { return cs.join(''); }

QuotedChar
  = "\\" c:AnyChar { return c; }
  / [^"\\]

// ---- Pipes (docs/query-language.md#pipes): after the filter part, each "|" starts one. A "|" in a quoted
// phrase, a regex or after a backslash is text.

PipeTail
  = "|" _ p:Pipe _ { return p; }

Pipe "a pipe"
  = ${PIPE_NAMES.map(pipeRule).join(' / ')} / UnknownPipe

${PIPE_NAMES.map((name) => PIPE_TABLE[name].grammar.trim()).join('\n\n')}

// ---- What every pipe's rules may use.

AggList
  = head:Agg tail:(_ "," _ @Agg)* { return [head, ...tail]; }

Agg "an aggregate such as count()"
  = fn:Ident _ "(" _ f:Col? _ ")" as:(__ "as" __ @Col)? { return h.agg(fn, f, as, location()); }

ColList
  = head:Col tail:(_ "," _ @Col)* { return [head, ...tail]; }

Col "column name"
  = n:$(ColStart ColChar*) { return { name: n, at: location().start.offset }; }

ColStart
  = [\p{L}\p{N}_.@]u

ColChar
  = [\p{L}\p{N}_.@\-]u

Count "a whole number"
  = s:$([0-9]+) !ColChar { return h.count(s, location()); }

Number "number"
  = s:$("-"? [0-9]+ ("." [0-9]+)? ([eE] [+\-]? [0-9]+)?) { return h.number(s, location()); }

Span "a span such as 5m"
  = s:$([0-9]+ [a-z]+) { return h.span(s, location()); }

Ident
  = $([a-z_]i [a-z0-9_]i*)

IdentChar
  = [a-z0-9_]i

UnknownPipe
  = name:$([^ \t\r\n|]+) { return h.unknownPipe(name, location()); }

FieldName "field name"
  = $([\p{L}\p{N}_.@]u [\p{L}\p{N}_.@\-]u*)

Keyword
  = "AND" / "OR" / "NOT"

OrOp
  = "OR" &Delim

AndOp
  = "AND" &Delim

NotOp
  = "NOT" &Delim

Delim
  = Space / [()"|] / !.

WordChar "word"
  = [^ \t\r\n\f\v\u00a0\u2028\u2029\ufeff()"\\:*[\]{}|]

ValueChar "value"
  = [^ \t\r\n\f\v\u00a0\u2028\u2029\ufeff()"\\*[\]{}|]

AnyChar "character"
  = .

Space "whitespace"
  = [ \t\r\n\f\v\u00a0\u2028\u2029\ufeff]

_
  = Space*

__
  = Space+
`;
