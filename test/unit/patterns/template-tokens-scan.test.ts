import { describe, expect, it } from 'vitest';
import { isBareWord } from '../../../src/ingest/patterns/template-compare.js';
import { maskToken, templateId, tokenize, WILDCARD } from '../../../src/ingest/patterns/template-miner.js';

/**
 * The miner's hot path reads characters by code where it used regexes, a split and
 * lower-cased copies (bench/notes/2026-11-28-miner-cost.md): these hold it to what those
 * gave, and the ids to what they were (they are stored, and shared between nodes).
 */
describe('template tokens read by character', () => {
  it('cuts at every character `\\s` matches, and at no other', () => {
    const wrong: string[] = [];
    for (let c = 0; c < 0x10000; c++) {
      const ch = String.fromCharCode(c);
      if (tokenize(`alpha${ch}beta`).length !== (/\s/.test(ch) ? 2 : 1)) wrong.push(`U+${c.toString(16)}`);
    }
    expect(wrong).toEqual([]);
    expect(tokenize('  lead and trail \t\n')).toEqual(['lead', 'and', 'trail']);
    expect(tokenize('')).toEqual([]);
  });

  it('reads a word as the bare-word pattern does', () => {
    const BARE_WORD = /^[("'[]*[A-Za-z]+[)"'\],;:.!?]*$/;
    const samples = [
      "'Active'",
      'SPP.',
      '(word),',
      '"quoted"!',
      'a',
      '',
      '((',
      'ab1',
      'a-b',
      '[x]?',
      'x)(',
      'é',
      'K',
    ];
    for (let c = 0; c < 0x3000; c++) samples.push(String.fromCharCode(c), `a${String.fromCharCode(c)}`);
    expect(samples.filter((s) => isBareWord(s) !== BARE_WORD.test(s))).toEqual([]);
  });

  it('masks a token the same each time it comes, however long and wherever it was cut from', () => {
    const long = `job_${'1'.repeat(20)}_x.${'a'.repeat(30)}`;
    const first = tokenize(`start ${long} user:`);
    for (let i = 0; i < 3; i++) expect(tokenize(`start ${long} user:`)).toEqual(first);
    expect(maskToken('10.0.0.1')).toBe(WILDCARD);
    expect(maskToken('1,024')).toBe(WILDCARD);
    expect(maskToken('user:')).toBe('user:');
    expect(maskToken('dead::')).toBe(WILDCARD);
    expect(maskToken('True.')).toBe('True.');
  });

  it('keeps units, dates and lists as before', () => {
    // The Kelvin sign lower-cases to `k`: `KB` written with it is a unit too.
    expect(tokenize('size 5 \u212aB, done')).toEqual(['size', `${WILDCARD},`, 'done']);
    expect(tokenize('at Fri Jun 17 07:07:00 2005 up')).toEqual(['at', WILDCARD, 'up']);
    expect(tokenize('nodes an14 an15 an16 ready')).toEqual(['nodes', WILDCARD, 'ready']);
    expect(tokenize('via eth0 only')).toEqual(['via', 'eth0', 'only']);
  });

  it('leaves no token of a long message to the next', () => {
    const long = Array.from({ length: 3000 }, (_, i) => `w${i}x`).join(' ');
    expect(tokenize(long)).toHaveLength(64);
    expect(tokenize('short one')).toEqual(['short', 'one']);
  });

  it('gives the ids it gave before (sha256 of app, NUL and tokens)', () => {
    const tokens = ['Accepted', 'password', 'for', WILDCARD, 'from', WILDCARD, 'port', WILDCARD, 'ssh2'];
    expect(templateId('sshd', tokens)).toBe('8oV42luqQrpLYT');
    expect(templateId('ünï\ud800', ['\udc00x', 'naïve', '日本語'])).toBe('4swPIijNcqo1JI');
    expect(templateId('', [])).toBe('bjQLnPzepicpUT');
  });
});
