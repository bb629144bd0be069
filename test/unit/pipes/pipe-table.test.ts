import { describe, expect, it } from 'vitest';
import { PIPE_TABLE, type PipeName, pipeRule } from '../../../src/pipes/pipe-table.js';
import { PIPE_NAMES } from '../../../src/shared/pipe-names.js';
import { QUERY_GRAMMAR } from '../../../src/syntax/grammar.js';
import { parseTableQuery, QuerySyntaxError } from '../../../src/syntax/parse-query.js';

/** The message of a query that is refused, or undefined when it is a query. */
function messageOf(query: string): string | undefined {
  try {
    parseTableQuery(query);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(QuerySyntaxError);
    return (error as QuerySyntaxError).message;
  }
}

describe('the table of pipes', () => {
  it('has an entry for each pipe the web UI completes, in the same order', () => {
    expect(Object.keys(PIPE_TABLE)).toEqual([...PIPE_NAMES]);
  });

  it.each(PIPE_NAMES)('gives "%s" its own rule of the grammar, reading its name first', (name: PipeName) => {
    expect(PIPE_TABLE[name].grammar.trim()).toMatch(new RegExp(`^${pipeRule(name)}\\n\\s+= "${name}" `));
    expect(QUERY_GRAMMAR).toContain(`${pipeRule(name)} /`);
  });

  it.each(PIPE_NAMES)('tells how "%s" is written when its name alone is not a pipe', (name: PipeName) => {
    expect(PIPE_TABLE[name].usage.startsWith(name)).toBe(true);
    const message = messageOf(`* | ${name}`);
    // `patterns` alone is complete (its count has a default).
    if (message !== undefined)
      expect(message).toContain(`"${name}" is not complete: write ${PIPE_TABLE[name].usage}`);
    else expect(name).toBe('patterns');
  });

  it('computes a query per time slice only when each of its pipes says it is rowwise', () => {
    const sliceable = (q: string) => parseTableQuery(q).program.sliceable;
    expect(sliceable('error | where status >= 500 | eval ms = duration * 1000 | rename host as h')).toBe(
      true,
    );
    expect(sliceable('error | fields host, message')).toBe(true);
    for (const q of ['* | sort host', '* | limit 5', '* | stats count()', '* | patterns', '* | top host'])
      expect(sliceable(q), q).toBe(false);
    // The safe default: an entry that does not say it is rowwise reorders.
    const where = PIPE_TABLE.where as { rowwise?: true };
    const saved = where.rowwise;
    try {
      delete where.rowwise;
      expect(sliceable('error | where status >= 500')).toBe(false);
    } finally {
      if (saved) where.rowwise = saved;
    }
  });
});
