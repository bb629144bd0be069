import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import type { IngestService } from './ingest-service.js';
import type { ParsedEntry } from './parsers/ndjson.js';
import { DEFAULT_MAX_SYSLOG_MESSAGE_BYTES, parseSyslog, SyslogFrameSplitter } from './parsers/syslog.js';

export interface SyslogListenerOptions {
  host: string;
  /** One port for both UDP and TCP. */
  port: number;
  log: { warn: (obj: object, msg: string) => void };
}

export interface SyslogListener {
  /** The TCP/UDP port actually bound (useful with port 0 in tests). */
  readonly port: number;
  /** Datagrams dropped because the ingest queue was full. */
  readonly dropped: number;
  close(): Promise<void>;
}

const utf8 = new TextDecoder('utf-8');

/**
 * Syslog intake (RFC 5424 and RFC 3164) over UDP and TCP (octet counting or newline
 * framing, per RFC 6587). UDP has no way to push back, so a full queue drops datagrams
 * (counted); a TCP connection is paused until its messages are committed.
 */
export async function startSyslogListener(
  ingest: IngestService,
  opts: SyslogListenerOptions,
): Promise<SyslogListener> {
  let dropped = 0;
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
        .catch((err: Error) => opts.log.warn({ err: err.message }, 'syslog messages not stored'))
        .finally(() => socket.resume());
    };
    socket.on('data', (chunk) => send(splitter.push(chunk)));
    socket.on('end', () => send(splitter.end()));
    socket.on('error', () => socket.destroy());
  });
  const udp: UdpSocket = createSocket(opts.host.includes(':') ? 'udp6' : 'udp4');
  udp.on('message', (msg, rinfo) => {
    const truncated = msg.length > DEFAULT_MAX_SYSLOG_MESSAGE_BYTES;
    const text = utf8.decode(truncated ? msg.subarray(0, DEFAULT_MAX_SYSLOG_MESSAGE_BYTES) : msg);
    ingest.ingest(toEntries([{ text, truncated }]), `syslog:${rinfo.address}`).catch(() => {
      dropped++;
    });
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

  return {
    port,
    get dropped() {
      return dropped;
    },
    async close() {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}
