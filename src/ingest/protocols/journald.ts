/**
 * The systemd journal export format (`application/vnd.fdo.journal`), as
 * `systemd-journal-upload` and `journalctl -o export` write it: entries separated by a
 * blank line; each field either `NAME=value\n` (text without a newline) or `NAME\n`, a
 * 64-bit little-endian length, that many bytes and `\n` (binary, or text with newlines).
 * Pure: no I/O; the caller feeds the body chunk by chunk, so an upload of any length is
 * parsed in bounded memory (one entry at most).
 *
 * Decisions worth knowing before reading the code:
 * - An entry becomes the record `journalctl -o json` would print: a value that is UTF-8
 *   without control characters (newlines and tabs allowed) is a string, anything else an
 *   array of its bytes; a field repeated within an entry becomes an array of its values.
 *   The normaliser then maps the journald names (`MESSAGE`, `_HOSTNAME`,
 *   `SYSLOG_IDENTIFIER`, `PRIORITY`, `_PID`, `__REALTIME_TIMESTAMP`); the rest are fields.
 * - Field names follow journald's rule (upper-case letters, digits and `_`, not starting
 *   with a digit, at most 64 characters); the export format's own `__CURSOR`,
 *   `__REALTIME_TIMESTAMP` and `__MONOTONIC_TIMESTAMP` pass the same rule.
 * - Malformed input is an error naming the entry and the byte offset: a line without `=`
 *   whose length prefix runs past the end of the body or is not followed by `\n`, a name
 *   that is not a field name, an entry larger than the cap (told from the length prefix,
 *   before its bytes are read). Entries completed before the error are the caller's to
 *   keep: the format has no other framing to resynchronise on.
 */

/** Why a body is not a journal export stream, with the entry and offset it broke at. */
export class JournalFormatError extends Error {
  override name = 'JournalFormatError';
  /** The entries completed before the error in what the failing call was given. */
  completed: JournalEntry[] = [];
}

/** journald's field-name rule (journal_field_valid), export fields (`__CURSOR`) included. */
const FIELD_NAME = /^[A-Z_][A-Z0-9_]{0,63}$/;

const NEWLINE = 0x0a;
const LENGTH_BYTES = 8;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A value as `journalctl -o json` prints it: text, or its bytes when not printable text. */
function fieldValue(bytes: Buffer): string | number[] {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return [...bytes];
  }
  // Control characters other than tab and newline (NUL, escape sequences) make it binary.
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if ((b < 0x20 && b !== 0x09 && b !== NEWLINE) || b === 0x7f) return [...bytes];
  }
  return text;
}

export interface JournalEntry {
  /** The fields, as the normaliser takes them. */
  record: Record<string, unknown>;
  /** Bytes the entry took in the stream. */
  bytes: number;
}

export interface JournalParserLimits {
  /** Largest entry accepted, in bytes of the stream. */
  maxEntryBytes: number;
}

/**
 * Incremental parser: `push` each chunk as it arrives, `end` once the body is complete.
 * Both return the entries completed by what they were given, and throw
 * JournalFormatError at the first malformed byte.
 */
export class JournalExportParser {
  private chunks: Buffer[] = [];
  private held = 0;
  /** Bytes to hold before parsing again (a field is only parsed once it can be whole). */
  private wanted = 1;
  /** Offset in the stream of the first held byte. */
  private offset = 0;
  private record: Record<string, unknown> = Object.create(null);
  /** Names already turned into arrays of values in the current entry. */
  private repeated = new Set<string>();
  private fields = 0;
  private entryBytes = 0;
  private entries = 0;

  constructor(private readonly limits: JournalParserLimits) {}

  push(chunk: Buffer): JournalEntry[] {
    if (chunk.length === 0) return [];
    this.chunks.push(chunk);
    this.held += chunk.length;
    return this.held < this.wanted ? [] : this.parse(false);
  }

  end(): JournalEntry[] {
    const out = this.held > 0 ? this.parse(true) : [];
    // The last entry may end with the body instead of a blank line.
    if (this.fields > 0) out.push(this.finishEntry());
    return out;
  }

  private fail(at: number, detail: string): never {
    throw new JournalFormatError(`Entry ${this.entries + 1} (byte ${this.offset + at}): ${detail}`);
  }

  private failName(name: string, at: number): never {
    const shown = JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
    this.fail(at, `${shown} is not a journal field name (A-Z, 0-9 and _, at most 64 characters)`);
  }

  private finishEntry(): JournalEntry {
    const entry = { record: this.record, bytes: this.entryBytes };
    this.record = Object.create(null);
    this.repeated.clear();
    this.fields = 0;
    this.entryBytes = 0;
    this.entries++;
    return entry;
  }

  private addField(name: string, value: string | number[], at: number) {
    if (!FIELD_NAME.test(name)) this.failName(name, at);
    const before = this.record[name];
    if (before === undefined) this.record[name] = value;
    else if (Array.isArray(before) && this.repeated.has(name)) before.push(value);
    else {
      this.record[name] = [before, value];
      this.repeated.add(name);
    }
    this.fields++;
  }

  /** Fails when `bytes` more would make the current entry larger than the cap. */
  private checkFits(at: number, bytes: number) {
    if (this.entryBytes + bytes > this.limits.maxEntryBytes) {
      this.fail(at, `the entry is larger than ${this.limits.maxEntryBytes} bytes`);
    }
  }

  private parse(final: boolean): JournalEntry[] {
    const out: JournalEntry[] = [];
    try {
      this.parseInto(out, final);
    } catch (error) {
      if (error instanceof JournalFormatError) error.completed = out;
      throw error;
    }
    return out;
  }

  private parseInto(out: JournalEntry[], final: boolean) {
    const buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.held);
    let pos = 0;
    this.wanted = 1;
    while (pos < buf.length) {
      const eol = buf.indexOf(NEWLINE, pos);
      if (eol === -1) {
        // An unfinished line: wait for more (twice as much, so a long line is not rescanned
        // on every small chunk), unless it already cannot fit in an entry.
        this.checkFits(pos, buf.length - pos);
        if (final) this.fail(pos, 'the body ends inside a field (no newline after it)');
        this.wanted = 2 * (buf.length - pos);
        break;
      }
      if (eol === pos) {
        // A blank line ends the entry; blank lines between entries are ignored.
        pos++;
        if (this.fields > 0) out.push(this.finishEntry());
        continue;
      }
      const line = buf.subarray(pos, eol);
      const eq = line.indexOf(0x3d);
      if (eq !== -1) {
        this.checkFits(pos, eol + 1 - pos);
        this.entryBytes += eol + 1 - pos;
        this.addField(line.toString('latin1', 0, eq), fieldValue(line.subarray(eq + 1)), pos);
        pos = eol + 1;
        continue;
      }
      // `NAME\n`, then the value's length and bytes, then `\n`.
      const name = line.toString('latin1');
      if (!FIELD_NAME.test(name)) this.failName(name, pos);
      const dataAt = eol + 1 + LENGTH_BYTES;
      if (dataAt > buf.length) {
        if (final) this.fail(pos, `binary field ${name}: the body ends inside its length`);
        this.wanted = dataAt - pos;
        break;
      }
      const length = buf.readBigUInt64LE(eol + 1);
      if (length > BigInt(this.limits.maxEntryBytes)) {
        this.fail(pos, `binary field ${name} is ${length} bytes, more than ${this.limits.maxEntryBytes}`);
      }
      const end = dataAt + Number(length);
      this.checkFits(pos, end + 1 - pos);
      if (end + 1 > buf.length) {
        if (final)
          this.fail(pos, `binary field ${name}: its length (${length}) runs past the end of the body`);
        this.wanted = end + 1 - pos;
        break;
      }
      if (buf[end] !== NEWLINE) this.fail(end, `binary field ${name} is not followed by a newline`);
      this.entryBytes += end + 1 - pos;
      this.addField(name, fieldValue(buf.subarray(dataAt, end)), pos);
      pos = end + 1;
    }
    const rest = buf.subarray(pos);
    this.offset += pos;
    this.chunks = rest.length > 0 ? [Buffer.from(rest)] : [];
    this.held = rest.length;
  }
}
