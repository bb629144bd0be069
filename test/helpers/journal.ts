import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

/**
 * The journal export format, written as `journalctl -o export` writes it: a value with a
 * newline or a byte that is not printable text goes as a binary field (name, 64-bit
 * little-endian length, bytes, newline).
 */
export type JournalFields = Record<string, string | Buffer>;

export function journalExport(entries: JournalFields[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    for (const [name, value] of Object.entries(entry)) {
      const bytes = typeof value === 'string' ? Buffer.from(value) : value;
      if (typeof value === 'string' && !value.includes('\n')) {
        parts.push(Buffer.from(`${name}=`), bytes, Buffer.from('\n'));
      } else {
        const length = Buffer.alloc(8);
        length.writeBigUInt64LE(BigInt(bytes.length));
        parts.push(Buffer.from(`${name}\n`), length, bytes, Buffer.from('\n'));
      }
    }
    parts.push(Buffer.from('\n'));
  }
  return Buffer.concat(parts);
}

/** Debian's systemd-journal-remote package: the uploader and the converter to journal files. */
export const JOURNAL_UPLOAD = [
  '/lib/systemd/systemd-journal-upload',
  '/usr/lib/systemd/systemd-journal-upload',
].find(existsSync);
export const JOURNAL_REMOTE = [
  '/lib/systemd/systemd-journal-remote',
  '/usr/lib/systemd/systemd-journal-remote',
].find(existsSync);

export const run = promisify(execFile);
