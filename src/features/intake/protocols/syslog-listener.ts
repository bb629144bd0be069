import { counter, gauge, type MetricDecl } from '../../../core/metrics.js';
import type { ParsedEntry } from '../../../ingest/parsers/ndjson.js';
import {
  DEFAULT_MAX_SYSLOG_MESSAGE_BYTES,
  parseSyslog,
  SyslogFrameSplitter,
} from '../../../ingest/parsers/syslog.js';
import type { IngestService } from '../ingest-service.js';
import type { IntakeProtocol } from './intake-protocol.js';
import {
  DEFAULT_UDP_RECEIVE_BUFFER,
  listenOnOnePort,
  type TcpIntakeCounts,
  type TcpIntakeLimits,
  tcpIntakeServer,
  UdpIntake,
  udpSocketDrops,
} from './socket-intake.js';

export interface SyslogListenerOptions extends TcpIntakeLimits {
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
export interface SyslogStats extends TcpIntakeCounts {
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
  metrics(): MetricDecl[];
  close(): Promise<void>;
}

/** A syslog listener's figures for /metrics (summed over listeners by the route). */
function syslogMetrics(stats: () => SyslogStats): MetricDecl[] {
  return [
    counter(
      'logscope_syslog_udp_received_total',
      'Syslog datagrams read from the UDP socket.',
      () => stats().udpReceived,
    ),
    counter(
      'logscope_syslog_udp_dropped_total',
      'Syslog datagrams lost: reason="kernel" dropped by the kernel for a full socket receive buffer ' +
        '(raise syslogUdpReceiveBuffer and net.core.rmem_max), reason="refused" shed by the listener or refused by ingest (queue full, store failing).',
      () => {
        const s = stats();
        return { kernel: s.udpKernelDrops, refused: s.udpRefused };
      },
      'reason',
    ),
    counter(
      'logscope_syslog_tcp_refused_total',
      'Syslog TCP messages refused by ingest (queue full, store failing).',
      () => stats().tcpRefused,
    ),
    counter(
      'logscope_syslog_tcp_connections_refused_total',
      'Syslog TCP connections closed as they came, over intakeTcpMaxConnections.',
      () => stats().tcpConnectionsRefused,
    ),
    counter(
      'logscope_syslog_tcp_idle_closed_total',
      'Syslog TCP connections closed after intakeTcpIdleSeconds without data.',
      () => stats().tcpIdleClosed,
    ),
    gauge(
      'logscope_syslog_udp_receive_buffer_bytes',
      'Receive buffer the kernel granted the syslog UDP socket.',
      () => stats().udpReceiveBufferBytes,
    ),
  ];
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
  let udpRefused = 0;
  let tcpRefused = 0;
  const toEntries = (frames: Array<{ text: string; truncated: boolean }>): ParsedEntry[] =>
    frames.map((f, index) => ({ index, value: parseSyslog(f.text, { truncated: f.truncated }) }));

  const {
    server: tcp,
    counts: tcpCounts,
    close: closeTcp,
  } = tcpIntakeServer(opts, opts.log, 'syslog', (socket) => {
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
  });

  let warnedRefused = false;
  const udp = new UdpIntake(opts.host, opts.udpReceiveBuffer ?? DEFAULT_UDP_RECEIVE_BUFFER, (bySource) => {
    for (const [address, datagrams] of bySource) {
      const entries: ParsedEntry[] = datagrams.map((msg, index) => {
        const truncated = msg.length > DEFAULT_MAX_SYSLOG_MESSAGE_BYTES;
        const text = utf8.decode(truncated ? msg.subarray(0, DEFAULT_MAX_SYSLOG_MESSAGE_BYTES) : msg);
        return { index, value: parseSyslog(text, { truncated }) };
      });
      ingest.ingest(entries, `syslog:${address}`).catch((err: Error) => {
        udpRefused += entries.length;
        if (!warnedRefused) {
          warnedRefused = true;
          opts.log.warn({ err: err.message }, 'syslog datagrams not stored (counted in /metrics)');
        }
      });
    }
  });

  const port = await listenOnOnePort(tcp, udp.socket, opts.port, opts.host);
  const granted = udp.checkReceiveBuffer(opts.log, 'syslog');

  const stats = (): SyslogStats => ({
    ...tcpCounts,
    udpReceived: udp.received,
    udpKernelDrops: udpSocketDrops(port),
    udpRefused: udpRefused + udp.shed,
    udpReceiveBufferBytes: granted,
    tcpRefused,
  });
  return {
    port,
    get dropped() {
      return udpRefused + udp.shed;
    },
    stats,
    metrics: () => syslogMetrics(stats),
    async close() {
      await udp.close();
      await closeTcp();
    },
  };
}

/** Syslog on its own port (`syslogPort`: UDP and TCP); its events' intake is `syslog:<address>`. */
export const syslogProtocol: IntakeProtocol = {
  name: 'syslog',
  async listen({ ingest, config, log, tcpLimits }) {
    if (config.syslogPort <= 0) return undefined;
    const listener = await startSyslogListener(ingest, {
      host: config.syslogHost,
      port: config.syslogPort,
      udpReceiveBuffer: config.syslogUdpReceiveBuffer,
      ...tcpLimits,
      log,
    });
    log.info({ port: listener.port }, 'syslog listening on UDP and TCP');
    return listener;
  },
};
