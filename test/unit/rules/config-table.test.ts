import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BEGIN, CONFIG_DOC, configTable, END } from '../../../scripts/config-table.js';
import { describeSettings } from '../../../src/config/config.js';

describe('the configuration table of docs/configuration.md', () => {
  it('is the one the config schema generates (npm run docs:config rewrites it)', () => {
    const page = readFileSync(CONFIG_DOC, 'utf8');
    const shown = page.slice(page.indexOf(BEGIN) + BEGIN.length, page.indexOf(END)).trim();
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
