// The types of query-parser.generated.js (written by scripts/query-parser.ts).
import type { parser } from 'peggy';

declare const ParseError: typeof parser.SyntaxError;
export declare const StartRules: readonly string[];
export declare function parse(input: string, options?: parser.ParserOptions): unknown;
export { ParseError as SyntaxError };
