import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ADMIN_LEVEL_PERMISSIONS, PERMISSIONS } from '../../../src/shared/permissions.js';

const ACCESS_DOC = new URL('../../../docs/access.md', import.meta.url);

/** The rows of the permission table: each permission with what its holder may read. */
function permissionRows(): Map<string, string> {
  const page = readFileSync(ACCESS_DOC, 'utf8');
  const rows = new Map<string, string>();
  for (const line of page.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`(manage_[a-z_]+)`$/.exec(cells[1] ?? '')?.[1];
    if (name && cells.length >= 6) rows.set(name, cells[3] ?? '');
  }
  return rows;
}

describe('the permission table of docs/access.md', () => {
  it('has a row for every permission, and none for one that does not exist', () => {
    expect([...permissionRows().keys()].sort()).toEqual([...PERMISSIONS].sort());
  });

  it('says admin-level exactly for the admin-level permissions', () => {
    const rows = permissionRows();
    for (const p of PERMISSIONS)
      expect(rows.get(p)?.includes('**admin-level**'), p).toBe(ADMIN_LEVEL_PERMISSIONS.includes(p));
  });
});
