/** Loghub samples in test/fixtures/loghub (see its README and LICENSE). */
import { readFileSync } from 'node:fs';

const FIXTURES = new URL('../fixtures/loghub/', import.meta.url);
export const readLoghubFixture = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');

/** RFC 4180 rows of a `*_structured.csv`, keyed by its header. */
export const readLoghubCsv = (name: string): Record<string, string>[] =>
  parseLoghubCsv(readLoghubFixture(name));

/** RFC 4180 rows of a `*_structured.csv`'s text, keyed by its header. */
export function parseLoghubCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  const [header, ...body] = rows;
  return body.map((cells) => Object.fromEntries(header!.map((h, i) => [h, cells[i] ?? ''])));
}

/** The lines of a sample, line ends (CRLF or LF) removed. */
export const readLoghubLines = (name: string): string[] =>
  readLoghubFixture(name).replace(/\r/g, '').replace(/\n$/, '').split('\n');
