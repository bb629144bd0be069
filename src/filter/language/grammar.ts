/**
 * The query-language grammar (Peggy). Kept as a string constant because the build copies
 * only `.ts` files. Actions stay thin: they hand raw pieces (words as character segments,
 * value descriptors, locations) to the typed helpers in parse-query.ts, which build the
 * AST and check values.
 *
 * Precedence, loosest first: OR, then AND (explicit or implied by juxtaposition), then
 * the prefixes NOT / `-` / `+`. Unary prefixes are a loop, not recursion, and nesting
 * comes only from parentheses, which parse-query.ts bounds before parsing, so deep input
 * cannot exhaust the stack.
 */
export const QUERY_GRAMMAR = String.raw`
{
  const h = options.helpers;
}

Query
  = _ e:Or _ { return e; }

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
  = Space / [()"] / !.

WordChar "word"
  = [^ \t\r\n\f\v\u00a0\u2028\u2029\ufeff()"\\:*[\]{}]

ValueChar "value"
  = [^ \t\r\n\f\v\u00a0\u2028\u2029\ufeff()"\\*[\]{}]

AnyChar "character"
  = .

Space "whitespace"
  = [ \t\r\n\f\v\u00a0\u2028\u2029\ufeff]

_
  = Space*

__
  = Space+
`;
