import { inflateRawSync } from 'node:zlib';

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;

/**
 * The bytes of the entry `name` of a ZIP archive in memory, or `undefined` when it has
 * none. Enough of the format (APPNOTE.TXT) for the small packages docx writes: stored or
 * deflated entries, no ZIP64, no encryption.
 */
export function readZipEntry(zip: Buffer, name: string): Buffer | undefined {
  // The end record is 22 bytes plus a comment of up to 64 KiB, so it is searched from the end.
  let end = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === END_OF_CENTRAL_DIRECTORY) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error('not a ZIP archive');
  const entries = zip.readUInt16LE(end + 10);
  let p = zip.readUInt32LE(end + 16);
  for (let n = 0; n < entries; n++) {
    if (zip.readUInt32LE(p) !== CENTRAL_DIRECTORY_ENTRY) throw new Error('corrupt ZIP central directory');
    const method = zip.readUInt16LE(p + 10);
    const size = zip.readUInt32LE(p + 20);
    const nameLength = zip.readUInt16LE(p + 28);
    const entryName = zip.toString('utf8', p + 46, p + 46 + nameLength);
    if (entryName === name) {
      const local = zip.readUInt32LE(p + 42);
      if (zip.readUInt32LE(local) !== LOCAL_HEADER) throw new Error('corrupt ZIP local header');
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + size);
      if (method === STORED) return data;
      if (method === DEFLATED) return inflateRawSync(data);
      throw new Error(`unsupported ZIP compression method ${method}`);
    }
    p += 46 + nameLength + zip.readUInt16LE(p + 30) + zip.readUInt16LE(p + 32);
  }
  return undefined;
}
