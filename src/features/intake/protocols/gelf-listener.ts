import { counter, type MetricDecl } from '../../../core/metrics.js';
import type { ParsedEntry } from '../../../ingest/parsers/ndjson.js';
import {
  decodeGelfDatagram,
  decodeGelfPayload,
  GELF_CHUNK_TIMEOUT_MS,
  GELF_MAX_MESSAGE_BYTES,
  GelfChunkAssembler,
  type GelfDecodeResult,
  GelfFrameSplitter,
} from '../../../ingest/protocols/gelf.js';
import type { IngestService } from '../ingest-service.js';
import {
  DEFAULT_UDP_RECEIVE_BUFFER,
  listenOnOnePort,
  type TcpIntakeCounts,
  type TcpIntakeLimits,
  tcpIntakeServer,
  UdpIntake,
  udpSocketDrops,
} from './socket-intake.js';

export interface GelfListenerOptions extends TcpIntakeLimits {
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
export interface GelfStats extends TcpIntakeCounts {
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
  metrics(): MetricDecl[];
  close(): Promise<void>;
}

/** A GELF listener's figures for /metrics (summed over listeners by the route). */
function gelfMetrics(stats: () => GelfStats): MetricDecl[] {
  return [
    counter(
      'logscope_gelf_received_total',
      'GELF input read by the listener: transport="udp" datagrams (a chunk counts as one), transport="tcp" frames.',
      () => {
        const s = stats();
        return { udp: s.udpReceived, tcp: s.tcpReceived };
      },
      'transport',
    ),
    counter(
      'logscope_gelf_dropped_total',
      'GELF messages not stored: reason="malformed" (not GELF: bad chunk, corrupt compression, not JSON, no short_message), ' +
        'reason="too_large" (decompressed or framed past 1 MiB), reason="incomplete" (chunks missing after 5 s, or evicted from a full reassembly buffer), ' +
        'reason="refused" (shed by the listener or refused by ingest: queue full, store failing), reason="kernel" (datagrams dropped for a full socket receive buffer).',
      () => {
        const s = stats();
        return {
          malformed: s.malformed,
          too_large: s.tooLarge,
          incomplete: s.incomplete,
          refused: s.refused,
          kernel: s.udpKernelDrops,
        };
      },
      'reason',
    ),
    counter(
      'logscope_gelf_tcp_connections_closed_total',
      'GELF TCP connections closed by the listener: reason="over_limit" (over intakeTcpMaxConnections, as they came), reason="idle" (intakeTcpIdleSeconds without data).',
      () => {
        const s = stats();
        return { over_limit: s.tcpConnectionsRefused, idle: s.tcpIdleClosed };
      },
      'reason',
    ),
  ];
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
  const counts = { tcpReceived: 0, malformed: 0, tooLarge: 0, refused: 0 };
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

  const {
    server: tcp,
    counts: tcpCounts,
    close: closeTcp,
  } = tcpIntakeServer(opts, opts.log, 'GELF', (socket) => {
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
  });

  const udp = new UdpIntake(opts.host, opts.udpReceiveBuffer ?? DEFAULT_UDP_RECEIVE_BUFFER, (bySource) => {
    const now = Date.now();
    for (const [address, datagrams] of bySource) {
      const entries: ParsedEntry[] = [];
      for (const msg of datagrams) {
        const record = recordOf(decodeGelfDatagram(msg, address, assembler, now, maxBytes));
        if (record) entries.push({ index: entries.length, value: record });
      }
      if (entries.length)
        ingest.ingest(entries, `gelf:${address}`).catch((err: Error) => refuse(entries.length, err));
    }
  });
  // Messages whose chunks stopped coming are counted even when no other datagram arrives.
  const sweeper = setInterval(
    () => assembler.sweep(Date.now()),
    Math.min(1000, opts.chunkTimeoutMs ?? GELF_CHUNK_TIMEOUT_MS),
  );
  sweeper.unref();

  let port: number;
  try {
    port = await listenOnOnePort(tcp, udp.socket, opts.port, opts.host);
  } catch (err) {
    clearInterval(sweeper);
    throw err;
  }
  udp.checkReceiveBuffer(opts.log, 'GELF');

  const stats = (): GelfStats => ({
    ...counts,
    ...tcpCounts,
    udpReceived: udp.received,
    refused: counts.refused + udp.shed,
    incomplete: assembler.incomplete,
    udpKernelDrops: udpSocketDrops(port),
  });
  return {
    port,
    stats,
    metrics: () => gelfMetrics(stats),
    async close() {
      clearInterval(sweeper);
      await udp.close();
      await closeTcp();
    },
  };
}
