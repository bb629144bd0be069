import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  engines: { node: string };
};
const lock = JSON.parse(readFileSync(new URL('../../../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[]; optional?: boolean; cpu?: string[] }>;
};

/** The lowest Node version of each range `engines` allows: `^20.19.0 || ^22.13.0 || >=24` → 20.19.0, 22.13.0, 24.0.0. */
const supported = pkg.engines.node.split('||').map((range) => semver.minVersion(range.trim())?.version ?? '');

describe('engines', () => {
  it('names the Node versions CI runs', () => {
    expect(supported).toEqual(['20.19.0', '22.13.0', '24.0.0']);
    expect(semver.satisfies(process.version, pkg.engines.node)).toBe(true);
  });

  it('agrees with every locked package: none wants a Node version engines allows without', () => {
    const refused: string[] = [];
    for (const [name, entry] of Object.entries(lock.packages)) {
      const wanted = !Array.isArray(entry.engines) ? entry.engines?.node : undefined;
      // Optional per-CPU binaries (wasm32 fallbacks) are never installed on a supported platform.
      if (!name || !wanted || (entry.optional && entry.cpu)) continue;
      for (const version of supported)
        if (!semver.satisfies(version, wanted)) refused.push(`${name} wants ${wanted}, not ${version}`);
    }
    expect(refused).toEqual([]);
  });
});
