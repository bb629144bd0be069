import { cpSync, mkdtempSync, readFileSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../../../src/features/backups/manifest.js';
import { NotABackupFolder, verifyBackup } from '../../../src/features/backups/verify.js';
import { makeBackup, writeManifest } from './backup-fixture.js';

/**
 * `backup verify` on a backup folder made as the writer makes one (real DuckDB parts, a
 * real SQLite file made by the migrations), whole and then damaged in each way a backup can
 * be: each damage is found, and the first problem names the first bad file.
 */
describe('verifyBackup', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'logscope-verify-'));
  let whole: string;
  let manifest: Manifest;
  let n = 0;
  /** A copy of the whole backup to damage. */
  const copy = () => {
    const dir = path.join(root, `copy-${n++}`);
    cpSync(whole, dir, { recursive: true });
    return dir;
  };
  const editManifest = (dir: string, edit: (m: Manifest) => void) => {
    const m = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
    edit(m);
    writeManifest(dir, m);
  };

  beforeAll(async () => {
    ({ dir: whole, manifest } = await makeBackup(root));
  }, 60_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('finds a whole backup whole, and changes nothing in it', async () => {
    const before = readFileSync(path.join(whole, 'metadata/meta.sqlite'));
    const r = await verifyBackup(whole);
    expect(r).toEqual({
      ok: true,
      problems: [],
      kind: 'full',
      events: manifest.counts.events.hot + manifest.counts.events.cold,
      files: manifest.files.length,
      bytes: manifest.bytes,
    });
    expect(manifest.counts.events.hot).toBe(30);
    expect(manifest.counts.metadata.streams).toBeGreaterThan(0);
    expect(readFileSync(path.join(whole, 'metadata/meta.sqlite')).equals(before)).toBe(true);
    // Read-only: no journal or WAL file left beside it.
    expect((await verifyBackup(whole)).ok).toBe(true);
  });

  it('finds a flipped byte (checksum), naming the file first', async () => {
    const dir = copy();
    const file = path.join(dir, 'hot/part-1.parquet');
    const bytes = readFileSync(file);
    const at = Math.floor(bytes.length / 2);
    bytes[at] = (bytes[at] as number) ^ 0xff;
    writeFileSync(file, bytes);
    const r = await verifyBackup(dir);
    expect(r.ok).toBe(false);
    expect(r.problems[0]).toMatchObject({ path: 'hot/part-1.parquet', problem: 'checksum' });
    expect(r.problems).toHaveLength(1);
  });

  it('finds a missing file', async () => {
    const dir = copy();
    unlinkSync(path.join(dir, 'admin-token'));
    const r = await verifyBackup(dir);
    expect(r.problems).toEqual([
      { path: 'admin-token', problem: 'missing', detail: expect.stringContaining('not in the folder') },
    ]);
  });

  it('finds truncated files: the first in the manifest first', async () => {
    const dir = copy();
    truncateSync(path.join(dir, 'metadata/meta.sqlite'), 4096);
    truncateSync(path.join(dir, 'hot/part-0.parquet'), 100);
    const r = await verifyBackup(dir);
    const order = manifest.files.map((f) => f.path);
    expect(order.indexOf('hot/part-0.parquet')).toBeLessThan(order.indexOf('metadata/meta.sqlite'));
    expect(r.problems.map((p) => [p.path, p.problem])).toEqual([
      ['hot/part-0.parquet', 'size'],
      ['metadata/meta.sqlite', 'size'],
    ]);
  });

  it('finds a truncated manifest', async () => {
    const dir = copy();
    const text = readFileSync(path.join(dir, 'manifest.json'), 'utf8');
    writeFileSync(path.join(dir, 'manifest.json'), text.slice(0, text.length / 2));
    const r = await verifyBackup(dir);
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([{ path: 'manifest.json', problem: 'manifest', detail: expect.any(String) }]);
    expect(r.kind).toBeNull();
  });

  it('finds an unlisted file', async () => {
    const dir = copy();
    writeFileSync(path.join(dir, 'hot/part-9.parquet'), 'stray');
    const r = await verifyBackup(dir);
    expect(r.problems).toEqual([
      { path: 'hot/part-9.parquet', problem: 'not_listed', detail: expect.any(String) },
    ]);
  });

  it('finds a backup still marked incomplete', async () => {
    const dir = copy();
    writeFileSync(path.join(dir, 'BACKUP_INCOMPLETE'), '');
    const r = await verifyBackup(dir);
    expect(r.problems).toEqual([
      { path: 'BACKUP_INCOMPLETE', problem: 'incomplete', detail: expect.any(String) },
    ]);
  });

  it('finds counts the files do not hold: metadata tables, event counts, footer rows', async () => {
    const dir = copy();
    editManifest(dir, (m) => {
      m.counts.metadata.users += 2;
      m.counts.events.hot += 2;
      const part = m.files.find((f) => f.path === 'hot/part-0.parquet');
      if (part) part.rows = (part.rows ?? 0) + 1;
    });
    const r = await verifyBackup(dir);
    expect(r.problems.map((p) => [p.path, p.problem])).toEqual([
      ['hot/part-0.parquet', 'rows'],
      ['metadata/meta.sqlite', 'counts'],
      ['manifest.json', 'counts'],
    ]);
    expect(r.problems[1]?.detail).toMatch(/^users: \d+ rows, the manifest says \d+$/);
  });

  it('finds a damaged metadata database whose hash was rewritten to match', async () => {
    const dir = copy();
    const file = path.join(dir, 'metadata/meta.sqlite');
    const bytes = readFileSync(file);
    bytes.fill(0x41, 0, 16); // the header's magic
    writeFileSync(file, bytes);
    const { hashFile } = await import('../../../src/features/backups/manifest.js');
    const { sha256 } = await hashFile(file);
    editManifest(dir, (m) => {
      const f = m.files.find((x) => x.path === 'metadata/meta.sqlite');
      if (f) f.sha256 = sha256;
    });
    const r = await verifyBackup(dir);
    expect(r.problems).toEqual([
      { path: 'metadata/meta.sqlite', problem: 'unreadable', detail: expect.any(String) },
    ]);
  });

  it('checks an incremental with its chain: a base not at its path is a problem', async () => {
    const dir = copy();
    editManifest(dir, (m) => {
      m.kind = 'incremental';
      m.base = { id: 'gone', path: path.join(root, 'no-such-base'), snapshot_at: m.snapshot_at };
    });
    const r = await verifyBackup(dir);
    expect(r.problems.map((p) => p.problem)).toContain('base');
  });

  it('refuses a path that is not a folder', async () => {
    await expect(verifyBackup(path.join(whole, 'admin-token'))).rejects.toBeInstanceOf(NotABackupFolder);
  });
});
