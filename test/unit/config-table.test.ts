import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BEGIN, configTable, END, README } from '../../scripts/config-table.js';
import { describeSettings } from '../../src/config/config.js';

describe('the README configuration table', () => {
  it('is the one the config schema generates (npm run docs:config rewrites it)', () => {
    const readme = readFileSync(README, 'utf8');
    const shown = readme.slice(readme.indexOf(BEGIN) + BEGIN.length, readme.indexOf(END)).trim();
    expect(shown).toBe(configTable());
  });

  it('has a row with a meaning for every setting', () => {
    const table = configTable();
    for (const s of describeSettings()) {
      expect(table).toContain(`| ${s.key} | \`${s.env}\``);
      expect(s.description.length, s.key).toBeGreaterThan(10);
    }
  });
});
