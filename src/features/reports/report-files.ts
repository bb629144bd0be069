import {
  createReadStream,
  createWriteStream,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { Database } from '../../metadata/schema.js';

/** A report file being written: whole only once `commit` resolved. */
export interface ReportSink {
  stream: Writable;
  /** The file is complete and becomes visible; resolves with its size in bytes. */
  commit(): Promise<number>;
  /** Deletes what was written. */
  abort(): Promise<void>;
}

/**
 * Where report files live: the data dir of the one server, or the shared metadata store
 * in a cluster (any node serves a file any node wrote).
 */
export interface ReportFiles {
  create(id: number, ext: string): Promise<ReportSink>;
  read(id: number, ext: string): Readable;
  delete(id: number, ext: string): Promise<void>;
  /** Deletes what writers that stopped mid-way left (`pending`: reports never finished). */
  cleanUp(pending: ReadonlyArray<{ id: number; ext: string }>): Promise<void>;
}

/** The suffix of a file being written: renamed to the report's name only once complete. */
const PART = '.part';

/**
 * Files in `<dir>/<id>.<ext>`, written as `<id>.<ext>.part` and renamed when complete, so
 * a crash never leaves a partial file that looks whole.
 */
export class LocalReportFiles implements ReportFiles {
  constructor(private readonly dir: string) {}

  private fileOf(id: number, ext: string) {
    return path.join(this.dir, `${id}.${ext}`);
  }

  async create(id: number, ext: string): Promise<ReportSink> {
    mkdirSync(this.dir, { recursive: true });
    const file = this.fileOf(id, ext);
    const part = `${file}${PART}`;
    const stream = createWriteStream(part, { mode: 0o600 });
    const written = finished(stream);
    return {
      stream,
      async commit() {
        await written;
        renameSync(part, file);
        return statSync(file).size;
      },
      async abort() {
        stream.destroy();
        await written.catch(() => undefined);
        rmSync(part, { force: true });
        rmSync(file, { force: true });
      },
    };
  }

  read(id: number, ext: string): Readable {
    return createReadStream(this.fileOf(id, ext));
  }

  async delete(id: number, ext: string): Promise<void> {
    rmSync(this.fileOf(id, ext), { force: true });
  }

  async cleanUp(pending: ReadonlyArray<{ id: number; ext: string }>): Promise<void> {
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      // no reports directory yet
    }
    for (const name of names) if (name.endsWith(PART)) rmSync(path.join(this.dir, name), { force: true });
    for (const r of pending) rmSync(this.fileOf(r.id, r.ext), { force: true });
  }
}

/** Bytes of one stored piece of a report file. */
const CHUNK_BYTES = 1 << 20;

/**
 * Files in the metadata store's `report_chunks`, 1 MiB a row: written piece by piece as
 * the renderer produces them (never whole in memory), read back the same way. A file is
 * whole when its report is READY (the report row says so); a writer that died leaves
 * pieces that the node finishing the report deletes first.
 */
export class SharedReportFiles implements ReportFiles {
  constructor(private readonly db: Kysely<Database>) {}

  async create(id: number): Promise<ReportSink> {
    const db = this.db;
    await db.deleteFrom('report_chunks').where('report_id', '=', id).execute();
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let seq = 0;
    let size = 0;
    const flush = async () => {
      if (!pendingBytes) return;
      const data = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      await db.insertInto('report_chunks').values({ report_id: id, seq: seq++, data }).execute();
    };
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        pending.push(chunk);
        pendingBytes += chunk.length;
        size += chunk.length;
        if (pendingBytes < CHUNK_BYTES) return cb();
        flush().then(() => cb(), cb);
      },
      final(cb) {
        flush().then(() => cb(), cb);
      },
    });
    const written = finished(stream);
    return {
      stream,
      async commit() {
        await written;
        return size;
      },
      async abort() {
        stream.destroy();
        await written.catch(() => undefined);
        await db.deleteFrom('report_chunks').where('report_id', '=', id).execute();
      },
    };
  }

  read(id: number): Readable {
    const db = this.db;
    return Readable.from(
      (async function* () {
        for (let seq = 0; ; seq++) {
          const row = await db
            .selectFrom('report_chunks')
            .select('data')
            .where('report_id', '=', id)
            .where('seq', '=', seq)
            .executeTakeFirst();
          if (!row) return;
          yield Buffer.from(row.data);
        }
      })(),
    );
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('report_chunks').where('report_id', '=', id).execute();
  }

  /** Pieces of unfinished reports are deleted by the node that finishes each. */
  async cleanUp(): Promise<void> {}
}
