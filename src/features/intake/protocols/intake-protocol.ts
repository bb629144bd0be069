import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { TSchema } from 'typebox';
import type { Config } from '../../../config/config.js';
import type { Log } from '../../../core/log.js';
import type { MetricsSource } from '../../../core/metrics.js';
import type { EventStore } from '../../../event-store/event-store.js';
import type { IngestService } from '../ingest-service.js';
import type { TcpIntakeLimits } from './socket-intake.js';

/**
 * One protocol Logscope takes logs in: a module of this folder holding its HTTP routes, its
 * listener on a port of its own, or both, over its decoder in `src/ingest/protocols/` or
 * `src/ingest/parsers/`. The intake component runs every protocol of its list the same
 * way (`intakeProtocols`): one ingest service and one set of bounds for all, listeners
 * started with the component and closed before the batcher's last commit, their figures
 * in /metrics. Adding a protocol is a module here and a line in `INTAKE_PROTOCOLS`.
 */
export interface IntakeProtocol {
  /**
   * Its name, which is also how its events' `intake` (where they came in) begins:
   * `<name>:<user>` for what a token sent over HTTP, `<name>:<address>` for what a sender
   * sent to its listener.
   */
  readonly name: string;
  /** Shared schemas its routes `$ref`, added to the app before any route. */
  readonly schemas?: readonly TSchema[];
  /**
   * Its HTTP routes, registered in a scope of their own (its content types, its error
   * shape where its shippers read errors).
   */
  readonly routes?: FastifyPluginAsync<IntakeContext>;
  /**
   * Starts its listener on a port of its own when its port setting asks for one (none
   * when the port is 0: off). Called when the component starts; a listener that fails to
   * bind fails the start.
   */
  readonly listen?: (intake: IntakeContext) => Promise<IntakeListener | undefined>;
}

/** A protocol's running listener: its figures for /metrics, and its close. */
export interface IntakeListener extends MetricsSource {
  /** Stops taking messages; those received are handed to ingest first. */
  close(): Promise<void>;
}

/** What every protocol is given: the same service and bounds as every other. */
export interface IntakeContext {
  /** Where every protocol's records go: normalised, through the pipelines, to the batcher. */
  ingest: IngestService;
  /** The event store, for a protocol that must know what is stored already (journald's resent head). */
  events: EventStore;
  /** A listener's settings (its port and address). */
  config: Config;
  log: Log;
  /** Largest request body, decompressed (`ingestBodyLimit`). */
  bodyLimit: number;
  /** Records in one request at most (`ingestMaxRecords`). */
  maxRecords: number;
  /** Bounds of each TCP listener (`intakeTcpMaxConnections`, `intakeTcpIdleSeconds`). */
  tcpLimits: Required<TcpIntakeLimits>;
  /** The `intake` of the events this protocol stores for `who` (a token's user): `<name>:<who>`. */
  intakeOf(who: string): string;
}

/** What a list of protocols gives the intake component: its parts of the component's own. */
export interface IntakeProtocols {
  schemas: readonly TSchema[];
  /** Registers every protocol's routes, in list order. */
  routes(app: FastifyInstance): Promise<void>;
  /** The running listeners' figures. */
  metrics: MetricsSource;
  /** Starts every protocol's listener, in list order. */
  start(): Promise<void>;
  /** Closes the listeners started, in list order. */
  close(): Promise<void>;
}

/** Runs a list of protocols over what they share. Two protocols of one name are a programming error. */
export function intakeProtocols(
  protocols: readonly IntakeProtocol[],
  shared: Omit<IntakeContext, 'intakeOf'>,
): IntakeProtocols {
  const names = new Set<string>();
  for (const { name } of protocols) {
    if (names.has(name)) throw new Error(`intake protocol ${name} is listed twice`);
    names.add(name);
  }
  const contextOf = (protocol: IntakeProtocol): IntakeContext => ({
    ...shared,
    intakeOf: (who) => `${protocol.name}:${who}`,
  });
  const running: IntakeListener[] = [];
  return {
    schemas: protocols.flatMap((p) => p.schemas ?? []),
    async routes(app) {
      for (const protocol of protocols)
        if (protocol.routes) await app.register(protocol.routes, contextOf(protocol));
    },
    metrics: { metrics: () => running.flatMap((listener) => listener.metrics()) },
    async start() {
      for (const protocol of protocols) {
        const listener = await protocol.listen?.(contextOf(protocol));
        // Kept as each starts: when a later one fails to bind, the component's quiesce
        // still closes those before it.
        if (listener) running.push(listener);
      }
    },
    async close() {
      for (const listener of running.splice(0)) await listener.close();
    },
  };
}
