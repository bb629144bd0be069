import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Component, Platform } from '../../../src/features/component.js';
import { COMPONENTS } from '../../../src/features/index.js';
import { compose, migrationsOf } from '../../../src/features/root.js';

/** The root's own rules: build order, start in order, stop in reverse after the batcher. */
function platform(told: string[]): Platform {
  return { batcher: { close: async () => void told.push('batcher closed') } } as unknown as Platform;
}

function recording(name: string, told: string[], needs: string[] = []): Component {
  return {
    name,
    build(_p, services) {
      for (const n of needs) void (services as unknown as Record<string, unknown>)[n];
      return {
        provides: { [name]: { name } } as never,
        start: async () => void told.push(`start ${name}`),
        quiesce: async () => void told.push(`quiesce ${name}`),
        stop: async () => void told.push(`stop ${name}`),
      };
    },
  };
}

describe('composition root', () => {
  it('starts components in list order, quiesces them in reverse before the batcher commits, then stops them in reverse', async () => {
    const told: string[] = [];
    const root = compose(platform(told), [
      recording('a', told),
      recording('b', told, ['a']),
      recording('c', told, ['a', 'b']),
    ]);
    expect(Object.keys(root.services)).toEqual(['a', 'b', 'c']);
    await root.start();
    await root.stop();
    expect(told).toEqual([
      'start a',
      'start b',
      'start c',
      'quiesce c',
      'quiesce b',
      'quiesce a',
      'batcher closed',
      'stop c',
      'stop b',
      'stop a',
    ]);
  });

  it('names both components when one needs a service no earlier one provides', () => {
    expect(() => compose(platform([]), [recording('a', [], ['b']), recording('b', [])])).toThrow(
      'component a needs service "b", which no component before it provides',
    );
  });

  it('refuses a service provided twice and a migration declared twice', () => {
    expect(() => compose(platform([]), [recording('a', []), recording('a', [])])).toThrow(
      'service "a" is provided twice',
    );
    const m = { migrations: { '0011-x': () => ({ up: async () => undefined }) } };
    expect(() =>
      migrationsOf([
        { ...recording('a', []), ...m },
        { ...recording('b', []), ...m },
      ]),
    ).toThrow('migration 0011-x is declared twice');
  });

  it('holds, outside the feature folders of src/features, only its own four files (docs/architecture.md)', () => {
    // Every feature is one folder (ADR 0021); these are the contract, the platform it
    // builds on, the root and the list.
    const loose = readdirSync('src/features', { withFileTypes: true })
      .filter((d) => !d.isDirectory())
      .map((d) => d.name)
      .sort();
    expect(loose).toEqual(['component.ts', 'index.ts', 'platform.ts', 'root.ts']);
  });

  it('registers components whose names are unique', () => {
    const names = COMPONENTS.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeGreaterThan(5);
  });
});
