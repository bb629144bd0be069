import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:net';

/**
 * What the syslog and GELF listeners share: a UDP socket whose datagrams are queued and
 * handed over in batches, one port for TCP and UDP, and the kernel's figures for the
 * UDP socket.
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
      tcp.listen(port, host, () => resolve());
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
