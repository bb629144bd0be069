import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import type { IngestService } from './ingest-service.js';
import type { ParsedEntry } from './parsers/ndjson.js';
import {
  decodeGelfDatagram,
  decodeGelfPayload,
  GELF_CHUNK_TIMEOUT_MS,
  GELF_MAX_MESSAGE_BYTES,
  GelfChunkAssembler,
  type GelfDecodeResult,
  GelfFrameSplitter,
} from './protocols/gelf.js';
import { DEFAULT_UDP_RECEIVE_BUFFER, udpSocketDrops } from './syslog-listener.js';

/** Datagrams decoded and handed to ingest in one turn of the event loop. */
const UDP_BATCH_DATAGRAMS = 2_000;
/** Received bytes the listener holds before it sheds datagrams (the batcher bounds the rest). */
const UDP_MAX_PENDING_BYTES = 32 * 1024 * 1024;

export interface GelfListenerOptions {
  host: string;
  /** One port for both UDP and TCP. */
  port: number;
  /** SO_RCVBUF asked for the UDP socket, in bytes (0: the system default). */
  udpReceiveBuffer?: number;
  /** Largest message, decompressed, and largest TCP frame (default 1 MiB). */
  maxMessageBytes?: number;
  /** Time within which all chunks of a message must arrive (default 5 s). */
  chunkTimeoutMs?: number;
  /** Chunked messages reassembled at once (the oldest is dropped beyond it). */
  maxPendingMessages?: number;
  /** Bytes of chunks held for reassembly at once. */
  maxPendingChunkBytes?: number;
  log: { warn: (obj: object, msg: string) => void };
}

/** Counts since start, for /metrics. */
export interface GelfStats {
  /** Datagrams read from the UDP socket (a chunk counts as one). */
  udpReceived: number;
  /** NUL-delimited frames read from TCP connections. */
  tcpReceived: number;
  /** Messages that are not GELF: bad chunk header, corrupt compression, not JSON, no short_message. */
  malformed: number;
  /** Messages refused for size: decompressing past the bound (zip bombs), or a longer frame. */
  tooLarge: number;
  /** Chunked messages dropped before all their chunks arrived (timed out, or evicted when full). */
  incomplete: number;
  /** Messages the listener shed or ingest refused (its queue full, the store failing). */
  refused: number;
  /** Datagrams the kernel dropped because the socket's receive buffer was full. */
  udpKernelDrops: number;
}

export interface GelfListener {
  /** The TCP/UDP port actually bound (useful with port 0 in tests). */
  readonly port: number;
  stats(): GelfStats;
  close(): Promise<void>;
}

/**
 * GELF intake over UDP (chunked; gzip, zlib or plain) and TCP (NUL-delimited frames),
 * on one port. Built like the syslog listener: a TCP connection is paused until its
 * messages are committed; UDP datagrams are only queued as they arrive, then decoded,
 * reassembled and handed to ingest in batches on later turns of the event loop (never
 * waiting for a commit), so the socket keeps being drained. Whatever is not stored is
 * counted by reason (GelfStats).
 */
export async function startGelfListener(
  ingest: IngestService,
  opts: GelfListenerOptions,
): Promise<GelfListener> {
  const maxBytes = opts.maxMessageBytes ?? GELF_MAX_MESSAGE_BYTES;
  const counts = { udpReceived: 0, tcpReceived: 0, malformed: 0, tooLarge: 0, refused: 0 };
  const assembler = new GelfChunkAssembler({
    maxMessageBytes: maxBytes,
    timeoutMs: opts.chunkTimeoutMs ?? GELF_CHUNK_TIMEOUT_MS,
    ...(opts.maxPendingMessages ? { maxMessages: opts.maxPendingMessages } : {}),
    ...(opts.maxPendingChunkBytes ? { maxBytes: opts.maxPendingChunkBytes } : {}),
  });
  let warnedRefused = false;
  const refuse = (n: number, err: Error) => {
    counts.refused += n;
    if (!warnedRefused) {
      warnedRefused = true;
      opts.log.warn({ err: err.message }, 'GELF messages not stored (counted in /metrics)');
    }
  };
  /** Counts a result that is not a message; returns the record when it is one. */
  const recordOf = (result: GelfDecodeResult): Record<string, unknown> | undefined => {
    switch (result.kind) {
      case 'message':
        return result.record;
      case 'pending':
        return undefined;
      case 'malformed':
        counts.malformed++;
        return undefined;
      case 'too_large':
        counts.tooLarge++;
        return undefined;
      default:
        return result satisfies never;
    }
  };

  const tcp: Server = createServer((socket) => {
    const splitter = new GelfFrameSplitter(() => counts.tooLarge++, maxBytes);
    const source = `gelf:${socket.remoteAddress ?? 'tcp'}`;
    const send = (frames: Buffer[]) => {
      counts.tcpReceived += frames.length;
      const entries: ParsedEntry[] = [];
      for (const frame of frames) {
        const record = recordOf(decodeGelfPayload(frame, maxBytes));
        if (record) entries.push({ index: entries.length, value: record });
      }
      if (!entries.length) return;
      socket.pause();
      ingest
        .ingest(entries, source)
        .catch((err: Error) => refuse(entries.length, err))
        .finally(() => socket.resume());
    };
    socket.on('data', (chunk) => send(splitter.push(chunk)));
    socket.on('end', () => send(splitter.end()));
    socket.on('error', () => socket.destroy());
  });

  const receiveBuffer = opts.udpReceiveBuffer ?? DEFAULT_UDP_RECEIVE_BUFFER;
  const udp: UdpSocket = createSocket({
    type: opts.host.includes(':') ? 'udp6' : 'udp4',
    ...(receiveBuffer > 0 ? { recvBufferSize: receiveBuffer } : {}),
  });
  let pending: Array<{ msg: Buffer; address: string }> = [];
  let pendingBytes = 0;
  let flushScheduled = false;

  const flush = () => {
    flushScheduled = false;
    let batch = pending;
    if (batch.length > UDP_BATCH_DATAGRAMS) {
      batch = pending.slice(0, UDP_BATCH_DATAGRAMS);
      pending = pending.slice(UDP_BATCH_DATAGRAMS);
      flushScheduled = true;
      setImmediate(flush);
    } else pending = [];
    const now = Date.now();
    const bySource = new Map<string, ParsedEntry[]>();
    for (const { msg, address } of batch) {
      pendingBytes -= msg.length;
      const record = recordOf(decodeGelfDatagram(msg, address, assembler, now, maxBytes));
      if (!record) continue;
      let entries = bySource.get(address);
      if (!entries) {
        entries = [];
        bySource.set(address, entries);
      }
      entries.push({ index: entries.length, value: record });
    }
    for (const [address, entries] of bySource) {
      ingest.ingest(entries, `gelf:${address}`).catch((err: Error) => refuse(entries.length, err));
    }
  };

  udp.on('message', (msg, rinfo) => {
    counts.udpReceived++;
    if (pendingBytes + msg.length > UDP_MAX_PENDING_BYTES) {
      counts.refused++;
      return;
    }
    pending.push({ msg, address: rinfo.address });
    pendingBytes += msg.length;
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  });
  // Messages whose chunks stopped coming are counted even when no other datagram arrives.
  const sweeper = setInterval(
    () => assembler.sweep(Date.now()),
    Math.min(1000, opts.chunkTimeoutMs ?? GELF_CHUNK_TIMEOUT_MS),
  );
  sweeper.unref();

  try {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(opts.port, opts.host, () => resolve());
    });
    const port = (tcp.address() as { port: number }).port;
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(port, opts.host, () => resolve());
    });
  } catch (err) {
    // Nothing half-open is left behind (a port taken for one protocol but not the other).
    clearInterval(sweeper);
    tcp.close(() => undefined);
    udp.close(() => undefined);
    throw err;
  }
  const port = (tcp.address() as { port: number }).port;
  const granted = udp.getRecvBufferSize();
  const expected = process.platform === 'linux' ? 2 * receiveBuffer : receiveBuffer;
  if (receiveBuffer > 0 && granted < expected) {
    opts.log.warn(
      { asked: receiveBuffer, granted },
      'GELF UDP receive buffer capped by the kernel: raise net.core.rmem_max (sysctl) to absorb bursts',
    );
  }

  return {
    port,
    stats: () => ({
      ...counts,
      incomplete: assembler.incomplete,
      udpKernelDrops: udpSocketDrops(port),
    }),
    async close() {
      clearInterval(sweeper);
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}
