import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ExportDocument, ExportTable, RenderResult } from './renderer.js';

const closedEarly = () => new Error('the export output was closed before the file was complete');

/** Resolves when `out` can take more data; rejects if it fails or closes first. */
export function drained(out: Writable): Promise<void> {
  if (out.destroyed || out.writableEnded) return Promise.reject(out.errored ?? closedEarly());
  if (!out.writableNeedDrain) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (err?: Error) => {
      out.off('drain', onDrain);
      out.off('close', onClose);
      out.off('error', settle);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => settle();
    const onClose = () => settle(out.errored ?? closedEarly());
    out.on('drain', onDrain);
    out.on('close', onClose);
    out.on('error', settle);
  });
}

/**
 * A pause for producers that write through libraries ignoring back-pressure (exceljs,
 * pdfkit): it lets their compressors run and waits while the client is slow, so the
 * data queued between rows and `out` stays bounded.
 */
export async function pace(out: Writable): Promise<void> {
  await nextTurn();
  await drained(out);
}

/**
 * Yields to the event loop every `every` rows. A row source that answers from memory
 * (a driver's prefetched batch, an array) never leaves the microtask queue otherwise, and
 * a million rows would hold up every other request of the server.
 */
export class Pacer {
  private count = 0;

  constructor(private readonly every = 1_000) {}

  async tick(): Promise<void> {
    this.count += 1;
    if (this.count % this.every === 0) await nextTurn();
  }
}

/**
 * Gathers small strings into larger writes: one `write` per row costs more than the
 * JSON or CSV text of the row itself.
 */
export class ChunkWriter {
  private parts: string[] = [];
  private size = 0;

  constructor(
    private readonly out: Writable,
    private readonly chunkSize = 64 * 1024,
  ) {}

  async push(s: string): Promise<void> {
    this.parts.push(s);
    this.size += s.length;
    if (this.size >= this.chunkSize) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.parts.length === 0) return;
    const chunk = this.parts.join('');
    this.parts = [];
    this.size = 0;
    if (!this.out.write(chunk)) await drained(this.out);
  }
}

/**
 * Runs a renderer body that ends `out`, then waits for `out` to finish. On failure `out`
 * is destroyed, so that whoever reads it sees it break off rather than end. It is
 * destroyed without the error: an 'error' event nobody listens to would bring the
 * process down, and the rejected promise already carries the cause.
 */
export async function rendering(out: Writable, body: () => Promise<RenderResult>): Promise<RenderResult> {
  try {
    const result = await body();
    // A Duplex (e.g. a PassThrough the caller reads) "finishes" on its writable side alone.
    await finished(out, { readable: false });
    return result;
  } catch (err) {
    if (!out.destroyed) out.destroy();
    throw err;
  }
}

/** The tables of a document, in order. */
export const tablesOf = (doc: ExportDocument): ExportTable[] =>
  doc.sections.flatMap((s) => (s.kind === 'table' ? [s.table] : []));

/**
 * Reads at most `cap` rows and tells whether more were there; returning early closes the
 * source's iterator, which releases whatever it streams from.
 */
export async function* capped(
  rows: AsyncIterable<Record<string, unknown>>,
  cap: number,
  onTruncated: () => void,
): AsyncGenerator<Record<string, unknown>> {
  let n = 0;
  for await (const row of rows) {
    if (n === cap) {
      onTruncated();
      return;
    }
    n += 1;
    yield row;
  }
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Throws unless `png` starts like a PNG file, so a bad chart fails loudly rather than as a corrupt file. */
export function checkPng(png: Buffer, title: string): void {
  if (png.length < PNG_SIGNATURE.length || !png.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)) {
    throw new Error(`image "${title}" is not a PNG`);
  }
}
