import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { IngestService } from './ingest-service.js';
import type { ParsedEntry } from './parsers/ndjson.js';
import { DEFAULT_MAX_SYSLOG_MESSAGE_BYTES, parseSyslog, SyslogFrameSplitter } from './parsers/syslog.js';

/** Receive buffer asked for by default: 8 MiB holds a burst of several thousand datagrams. */
export const DEFAULT_UDP_RECEIVE_BUFFER = 8 * 1024 * 1024;
/** Datagrams parsed and handed to ingest in one turn of the event loop. */
const UDP_BATCH_DATAGRAMS = 2_000;
/** Received bytes the listener holds before it sheds datagrams (the batcher bounds the rest). */
const UDP_MAX_PENDING_BYTES = 32 * 1024 * 1024;

export interface SyslogListenerOptions {
  host: string;
  /** One port for both UDP and TCP. */
  port: number;
  /**
   * SO_RCVBUF asked for the UDP socket, in bytes (0: the system default). Linux caps it at
   * `net.core.rmem_max` (and doubles it for bookkeeping); a smaller result is logged.
   */
  udpReceiveBuffer?: number;
  log: { warn: (obj: object, msg: string) => void };
}

/** Counts since start, for /metrics. */
export interface SyslogStats {
  /** Datagrams read from the UDP socket. */
  udpReceived: number;
  /** Datagrams the kernel dropped because the socket's receive buffer was full (/proc/net/udp). */
  udpKernelDrops: number;
  /** Datagrams the listener shed or ingest refused (its queue full, the store failing). */
  udpRefused: number;
  /** The UDP socket's receive buffer as the kernel granted it (bytes). */
  udpReceiveBufferBytes: number;
  /** TCP messages ingest refused. */
  tcpRefused: number;
}

export interface SyslogListener {
  /** The TCP/UDP port actually bound (useful with port 0 in tests). */
  readonly port: number;
  /** Datagrams not stored by the listener's fault or the queue's (kernel drops excluded). */
  readonly dropped: number;
  stats(): SyslogStats;
  close(): Promise<void>;
}

const utf8 = new TextDecoder('utf-8');

/**
 * Syslog intake (RFC 5424 and RFC 3164) over UDP and TCP (octet counting or newline
 * framing, per RFC 6587). A TCP connection is paused until its messages are committed.
 * UDP has no way to push back, so the socket must be read faster than bursts arrive:
 * datagrams are only queued as they come in, and parsed and handed to ingest in batches
 * on later turns of the event loop (never waiting for a commit), so the socket keeps being
 * drained while commits run; a large receive buffer absorbs what arrives meanwhile.
 * Whatever is lost anyway is counted: by the kernel (a full receive buffer) and by the
 * listener (its pending bytes over the bound, or ingest refusing: queue full, store down).
 */
export async function startSyslogListener(
  ingest: IngestService,
  opts: SyslogListenerOptions,
): Promise<SyslogListener> {
  let udpReceived = 0;
  let udpRefused = 0;
  let tcpRefused = 0;
  const toEntries = (frames: Array<{ text: string; truncated: boolean }>): ParsedEntry[] =>
    frames.map((f, index) => ({ index, value: parseSyslog(f.text, { truncated: f.truncated }) }));

  const tcp: Server = createServer((socket) => {
    const splitter = new SyslogFrameSplitter();
    const source = `syslog:${socket.remoteAddress ?? 'tcp'}`;
    const send = (frames: ReturnType<SyslogFrameSplitter['push']>) => {
      if (!frames.length) return;
      socket.pause();
      ingest
        .ingest(toEntries(frames), source)
        .catch((err: Error) => {
          tcpRefused += frames.length;
          opts.log.warn({ err: err.message }, 'syslog messages not stored');
        })
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
  let warnedRefused = false;

  const flush = () => {
    flushScheduled = false;
    let batch = pending;
    if (batch.length > UDP_BATCH_DATAGRAMS) {
      batch = pending.slice(0, UDP_BATCH_DATAGRAMS);
      pending = pending.slice(UDP_BATCH_DATAGRAMS);
      flushScheduled = true;
      setImmediate(flush);
    } else pending = [];
    const bySource = new Map<string, ParsedEntry[]>();
    for (const { msg, address } of batch) {
      pendingBytes -= msg.length;
      const truncated = msg.length > DEFAULT_MAX_SYSLOG_MESSAGE_BYTES;
      const text = utf8.decode(truncated ? msg.subarray(0, DEFAULT_MAX_SYSLOG_MESSAGE_BYTES) : msg);
      let entries = bySource.get(address);
      if (!entries) {
        entries = [];
        bySource.set(address, entries);
      }
      entries.push({ index: entries.length, value: parseSyslog(text, { truncated }) });
    }
    for (const [address, entries] of bySource) {
      ingest.ingest(entries, `syslog:${address}`).catch((err: Error) => {
        udpRefused += entries.length;
        if (!warnedRefused) {
          warnedRefused = true;
          opts.log.warn({ err: err.message }, 'syslog datagrams not stored (counted in /metrics)');
        }
      });
    }
  };

  udp.on('message', (msg, rinfo) => {
    udpReceived++;
    if (pendingBytes + msg.length > UDP_MAX_PENDING_BYTES) {
      udpRefused++;
      return;
    }
    pending.push({ msg, address: rinfo.address });
    pendingBytes += msg.length;
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  });

  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(opts.port, opts.host, () => resolve());
  });
  const port = (tcp.address() as { port: number }).port;
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(port, opts.host, () => resolve());
  });
  const granted = udp.getRecvBufferSize();
  // Linux grants twice what is asked (the other half is for its bookkeeping), up to
  // twice net.core.rmem_max.
  const expected = process.platform === 'linux' ? 2 * receiveBuffer : receiveBuffer;
  if (receiveBuffer > 0 && granted < expected) {
    opts.log.warn(
      { asked: receiveBuffer, granted },
      'syslog UDP receive buffer capped by the kernel: raise net.core.rmem_max (sysctl) to absorb bursts',
    );
  }

  return {
    port,
    get dropped() {
      return udpRefused;
    },
    stats: () => ({
      udpReceived,
      udpKernelDrops: udpSocketDrops(port),
      udpRefused,
      udpReceiveBufferBytes: granted,
      tcpRefused,
    }),
    async close() {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

/**
 * Datagrams the kernel dropped on the UDP sockets bound to `port`: the `drops` column of
 * /proc/net/udp and /proc/net/udp6 (Linux; 0 elsewhere).
 */
export function udpSocketDrops(port: number): number {
  let drops = 0;
  for (const file of ['/proc/net/udp', '/proc/net/udp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'latin1');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const local = cols[1];
      if (!local || cols.length < 13) continue;
      if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) !== port) continue;
      drops += Number(cols[cols.length - 1]) || 0;
    }
  }
  return drops;
}
