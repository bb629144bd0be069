import { describe, expect, it } from 'vitest';
import { LeasesRepository } from '../../src/metadata/leases-repository.js';
import { freshMetadata, METADATA_BACKENDS } from '../helpers/metadata.js';

/** Named leases (the alert notifier's): one holder at a time, on each metadata store. */
describe.each(METADATA_BACKENDS)('leases on $name', ({ url }) => {
  it('is held by one node until it lapses or is released, then by whoever asks', async () => {
    const { meta, dispose } = await freshMetadata(url, 'leases');
    try {
      const leases = new LeasesRepository(meta.db);
      expect(await leases.hold('n', 'a', 1000, 3000)).toBe(true);
      expect(await leases.hold('n', 'b', 2000, 3000)).toBe(false);
      expect(await leases.hold('n', 'a', 3500, 3000)).toBe(true); // renewed until 6500
      expect(await leases.hold('n', 'b', 6000, 3000)).toBe(false);
      expect(await leases.hold('other', 'b', 6000, 3000)).toBe(true); // names are apart
      expect(await leases.hold('n', 'b', 6501, 3000)).toBe(true); // lapsed: taken over
      expect(await leases.hold('n', 'a', 7000, 3000)).toBe(false);
      await leases.release('n', 'a'); // not a's: nothing happens
      expect(await leases.hold('n', 'a', 7000, 3000)).toBe(false);
      await leases.release('n', 'b');
      expect(await leases.hold('n', 'a', 7000, 3000)).toBe(true);
      // Two nodes asking at once: exactly one holds it.
      const both = await Promise.all([
        leases.hold('race', 'a', 8000, 3000),
        leases.hold('race', 'b', 8000, 3000),
      ]);
      expect(both.filter(Boolean)).toHaveLength(1);
    } finally {
      await dispose();
    }
  });
});
