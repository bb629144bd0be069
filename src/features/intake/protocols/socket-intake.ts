import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';

/**
 * What the listeners on a port of their own share: a UDP socket whose datagrams are
 * queued and handed over in batches, one port for TCP and UDP, and the kernel's figures
 * for the UDP socket.
 */

/** SO_RCVBUF asked for a listener's UDP socket unless told (bytes). */
export const DEFAULT_UDP_RECEIVE_BUFFER = 8 * 1024 * 1024;
/** Datagrams handed over at once: a turn of the event loop stays short. */
const UDP_BATCH_DATAGRAMS = 2_000;
/** Bytes of datagrams waiting at most; beyond, new ones are shed (and counted). */
const UDP_MAX_PENDING_BYTES = 32 * 1024 * 1024;

/**
 * A UDP socket whose datagrams wait (within 32 MiB; beyond, they are shed and counted)
 * for the next turn of the event loop, then go to `onBatch` at most 2,000 at a time,
 * grouped by sender address, so a burst becomes few ingest calls.
 */
export class UdpIntake {
  readonly socket: UdpSocket;
  /** Datagrams read from the socket. */
  received = 0;
  /** Datagrams shed because too many bytes were waiting. */
  shed = 0;
  private pending: Array<{ msg: Buffer; address: string }> = [];
  private pendingBytes = 0;
  private flushScheduled = false;

  constructor(
    host: string,
    readonly receiveBuffer: number,
    private readonly onBatch: (bySource: Map<string, Buffer[]>) => void,
  ) {
    this.socket = createSocket({
      type: host.includes(':') ? 'udp6' : 'udp4',
      ...(receiveBuffer > 0 ? { recvBufferSize: receiveBuffer } : {}),
    });
    this.socket.on('message', (msg, rinfo) => this.push(msg, rinfo.address));
  }

  private push(msg: Buffer, address: string): void {
    this.received++;
    if (this.pendingBytes + msg.length > UDP_MAX_PENDING_BYTES) {
      this.shed++;
      return;
    }
    this.pending.push({ msg, address });
    this.pendingBytes += msg.length;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    let batch = this.pending;
    if (batch.length > UDP_BATCH_DATAGRAMS) {
      batch = this.pending.slice(0, UDP_BATCH_DATAGRAMS);
      this.pending = this.pending.slice(UDP_BATCH_DATAGRAMS);
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    } else this.pending = [];
    const bySource = new Map<string, Buffer[]>();
    for (const { msg, address } of batch) {
      this.pendingBytes -= msg.length;
      const list = bySource.get(address);
      if (list) list.push(msg);
      else bySource.set(address, [msg]);
    }
    this.onBatch(bySource);
  }

  /**
   * The receive buffer the kernel granted; logged when it is less than asked. Linux
   * grants twice what is asked (the other half is for its bookkeeping), up to twice
   * `net.core.rmem_max`.
   */
  checkReceiveBuffer(log: { warn: (obj: object, msg: string) => void }, protocol: string): number {
    const granted = this.socket.getRecvBufferSize();
    const expected = process.platform === 'linux' ? 2 * this.receiveBuffer : this.receiveBuffer;
    if (this.receiveBuffer > 0 && granted < expected) {
      log.warn(
        { asked: this.receiveBuffer, granted },
        `${protocol} UDP receive buffer capped by the kernel: raise net.core.rmem_max (sysctl) to absorb bursts`,
      );
    }
    return granted;
  }

  close(): Promise<void> {
    return new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }
}

/** Bounds of a TCP listener. */
export interface TcpIntakeLimits {
  /** Connections open at once; more are closed as they come (default 1,000). */
  maxConnections?: number;
  /** A connection that sends nothing for this long is closed (ms; default 5 minutes). */
  idleMs?: number;
}

export const DEFAULT_TCP_MAX_CONNECTIONS = 1000;
export const DEFAULT_TCP_IDLE_MS = 5 * 60_000;

/** What a TCP intake turned away, for /metrics. */
export interface TcpIntakeCounts {
  /** Connections closed as they came, over maxConnections. */
  tcpConnectionsRefused: number;
  /** Connections closed after idleMs without data. */
  tcpIdleClosed: number;
}

/**
 * The TCP server of a socket intake: at most `maxConnections` at once (the kernel hands
 * over the rest, which are closed at once and counted), each closed after `idleMs`
 * without data, and no socket or accept error ever unhandled: a reset connection is
 * destroyed, an accept failure (out of file descriptors) is logged and the server keeps
 * listening.
 */
export function tcpIntakeServer(
  limits: TcpIntakeLimits,
  log: { warn: (obj: object, msg: string) => void },
  what: string,
  onConnection: (socket: Socket) => void,
): { server: Server; counts: TcpIntakeCounts; close(): Promise<void> } {
  const counts: TcpIntakeCounts = { tcpConnectionsRefused: 0, tcpIdleClosed: 0 };
  const idleMs = limits.idleMs ?? DEFAULT_TCP_IDLE_MS;
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.setTimeout(idleMs, () => {
      counts.tcpIdleClosed++;
      socket.destroy();
    });
    onConnection(socket);
  });
  server.maxConnections = limits.maxConnections ?? DEFAULT_TCP_MAX_CONNECTIONS;
  let warned = false;
  server.on('drop', () => {
    counts.tcpConnectionsRefused++;
    if (!warned) {
      warned = true;
      log.warn(
        { maxConnections: server.maxConnections },
        `${what} TCP connections over the limit closed (counted in /metrics)`,
      );
    }
  });
  // Once listening, an error is an accept that failed (EMFILE): the server goes on.
  server.once('listening', () =>
    server.on('error', (err) => log.warn({ err: err.message }, `${what} TCP accept failed`)),
  );
  return {
    server,
    counts,
    // Open connections are cut: a sender reconnects and resends what was not acknowledged.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  };
}

/**
 * Binds a TCP server and a UDP socket to one port: TCP first, then UDP on the port TCP
 * got (so port 0 gives both the same free port). On failure nothing is left half-open.
 */
export async function listenOnOnePort(
  tcp: Server,
  udp: UdpSocket,
  port: number,
  host: string,
): Promise<number> {
  try {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(port, host, () => {
        tcp.off('error', reject);
        resolve();
      });
    });
    const bound = (tcp.address() as { port: number }).port;
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(bound, host, () => resolve());
    });
    return bound;
  } catch (err) {
    tcp.close(() => undefined);
    try {
      udp.close();
    } catch {
      // never bound
    }
    throw err;
  }
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
