/** Loghub samples in test/fixtures/loghub (see its README and LICENSE). */
import { readFileSync } from 'node:fs';
import { csvRows } from './csv.js';

const FIXTURES = new URL('../fixtures/loghub/', import.meta.url);
export const readLoghubFixture = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');

/** RFC 4180 rows of a `*_structured.csv`, keyed by its header. */
export const readLoghubCsv = (name: string): Record<string, string>[] =>
  parseLoghubCsv(readLoghubFixture(name));

/** RFC 4180 rows of a `*_structured.csv`'s text, keyed by its header. */
export function parseLoghubCsv(text: string): Record<string, string>[] {
  const rows = csvRows(text);
  const [header, ...body] = rows;
  return body.map((cells) => Object.fromEntries(header!.map((h, i) => [h, cells[i] ?? ''])));
}

/** The lines of a sample, line ends (CRLF or LF) removed. */
export const readLoghubLines = (name: string): string[] =>
  readLoghubFixture(name).replace(/\r/g, '').replace(/\n$/, '').split('\n');
