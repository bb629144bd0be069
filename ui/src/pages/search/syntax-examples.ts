/**
 * The query box's syntax help: a compact reference of the query language
 * (docs/query-language.md), each form with an example a click puts in the box. Every
 * example is parsed by the server's own parser in test/unit/ui/syntax-help.test.ts (those
 * after a `|` as the query type Table), so the help cannot show a query the server refuses.
 */

export interface SyntaxExample {
  query: string;
  /** What it selects, in a few words. */
  meaning: string;
}

export interface SyntaxSection {
  title: string;
  /** One line about the whole section. */
  note: string;
  examples: readonly SyntaxExample[];
}

export const SYNTAX_SECTIONS: readonly SyntaxSection[] = [
  {
    title: 'Words and phrases',
    note: 'Search the message: anywhere in it, ignoring case.',
    examples: [
      { query: 'timeout', meaning: 'contains the word (also “timeouts”)' },
      { query: '"connection refused"', meaning: 'contains the exact phrase' },
    ],
  },
  {
    title: 'Fields',
    note: 'field:value is exact and case-sensitive; quote values with spaces.',
    examples: [
      { query: 'host:web-1', meaning: 'the field equals the value' },
      { query: 'app:(nginx OR firewall)', meaning: 'any of the values' },
      { query: '_exists_:user', meaning: 'the field is present' },
    ],
  },
  {
    title: 'Comparisons and ranges',
    note: 'Numbers compare as numbers, severity by rank.',
    examples: [
      { query: 'status:>=500', meaning: 'also >, <, <=' },
      { query: 'bytes:[1000 TO 5000]', meaning: 'inclusive; { } excludes the ends' },
      { query: 'severity:>=warning', meaning: 'warning and worse' },
    ],
  },
  {
    title: 'Wildcards, regexes, IP blocks',
    note: 'Regexes are RE2, unanchored; (?i) ignores case.',
    examples: [
      { query: 'host:web*', meaning: '* stands for any text' },
      { query: 'message:/(?i)failed password for \\w+/', meaning: 'matches the regex' },
      { query: 'src_ip:10.0.0.0/8', meaning: 'an address in the block' },
    ],
  },
  {
    title: 'Combining',
    note: 'Terms side by side must all hold. NOT binds first, then AND, then OR.',
    examples: [
      { query: 'error AND NOT timeout', meaning: 'both; NOT excludes' },
      { query: 'status:>=500 OR severity:critical', meaning: 'either' },
      { query: '-url.path:"/health" status:404', meaning: '- is NOT; ( ) groups' },
    ],
  },
  {
    title: 'Pipes: a table of results',
    note: 'After |: stats, top, timechart, sort, limit, where, fields, eval, rex, …',
    examples: [
      { query: '* | stats count() by host', meaning: 'events per host' },
      { query: 'status:>=400 | top 5 url.path', meaning: 'the most frequent values' },
      { query: '* | timechart span=1h count() by severity', meaning: 'counts over time' },
      { query: '* | stats count() as n by host | sort -n | limit 5', meaning: 'the busiest hosts' },
    ],
  },
];
