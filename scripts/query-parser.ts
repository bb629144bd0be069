/**
 * Writes the query language's parser (src/syntax/query-parser.generated.js) from
 * its grammar (grammar.ts) with Peggy, so no start of the server spends ~0.2 s generating
 * it. A test compares the file with what this generates:
 *
 *   npm run gen:parser   # after changing the grammar
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import peggy from 'peggy';
import { QUERY_GRAMMAR } from '../src/syntax/grammar.js';

export const PARSER_FILE = fileURLToPath(new URL('../src/syntax/query-parser.generated.js', import.meta.url));

export function parserSource(): string {
  const source = peggy.generate(QUERY_GRAMMAR, { output: 'source', format: 'es' });
  return `// Written by scripts/query-parser.ts from src/syntax/grammar.ts: run \`npm run gen:parser\`, do not edit.\n${source}`;
}

if (process.argv.includes('--write')) writeFileSync(PARSER_FILE, parserSource());
