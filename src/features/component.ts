/**
 * What a component is: a feature's services, routes, metrics, bus wiring, start and stop,
 * built once from the platform and the components registered before it. The root
 * (`root.ts`) builds the list of `index.ts` in order, starts them in that order and stops
 * them in the reverse one (ADR 0012).
 */
import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';
import type { Config } from '../config/config.js';
import type { PublicUrl } from '../config/public-url.js';
import type { Bus, ClusterTopics } from '../core/bus.js';
import type { Log } from '../core/log.js';
import type { MetricsSource } from '../core/metrics.js';
import type { GeoIpLookup } from '../enrich/geoip.js';
import type { EventStore } from '../event-store/event-store.js';
import type { Batcher } from '../ingest/batcher.js';
import type { MetadataDb } from '../metadata/database.js';
import type { MigrationOf } from '../metadata/migrator.js';
import type { JobStore } from '../query/job-store.js';

/** What every component stands on: opened by the runtime before any component is built. */
export interface Platform {
  config: Config;
  meta: MetadataDb;
  events: EventStore;
  /** The write path to the event store: every intake's events are committed by it. */
  batcher: Batcher;
  /** In-process by default; Redis in a cluster. */
  bus: Bus<ClusterTopics>;
  /** Memory by default; the metadata store's `query_jobs` in a cluster. */
  jobStore: JobStore;
  /** Null when no GeoIP database could be opened. */
  geoip: GeoIpLookup | null;
  /** This process's id among the cluster's nodes. */
  node: string;
  /** Whether this process is a cluster node (a bus to other nodes, shared job state). */
  cluster: boolean;
  /** How long a node's lease on shared work lasts without renewal (ms). */
  leaseMs: number;
  /** Where clients reach the server: links in answers and notifications. */
  publicUrl: PublicUrl;
  /** The server's logger (silent unless the serving process gives one). */
  log: Log;
}

/**
 * The services components offer one another, the HTTP layer and tests. Each component
 * adds its own by augmenting this interface in its own file:
 * `declare module './component.js' { interface Services { tasks: TasksService } }`.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by each component's module augmentation
export interface Services {}

/** How often a cluster node whose bus is down reads rules (triggers, pipelines) again (ms). */
export const RELOAD_RULES_MS = 10_000;

/** How often a cluster node looks for work a dead node left (ms). */
export const ADOPT_EVERY_MS = 1000;

/** What a component's build gives the root. */
export interface Built<P> {
  /** Its services, merged into `Services` for the components after it. */
  provides: P;
  /** Shared schemas (`$ref`-able by every component's routes), added before any route. */
  schemas?: readonly TSchema[];
  /** Registers its routes; called once for every app built over the runtime. */
  routes?: (app: FastifyInstance) => Promise<void>;
  /** Its figures for /metrics. */
  metrics?: readonly MetricsSource[];
  /** Starts its work (timers, loading rules); components start in registration order. */
  start?: () => Promise<void>;
  /**
   * Stops taking work from outside (listeners on their own ports): called in reverse
   * registration order before the batcher commits its last events, so none arrive after.
   */
  quiesce?: () => Promise<void>;
  /** Stops its work; components stop in reverse registration order, after the last commit. */
  stop?: () => Promise<void>;
}

/** A component: its name, its migrations and how it is built. */
export type { MigrationOf };

export interface Component<P = Partial<Services>> {
  name: string;
  /** Metadata migrations by name (`0011-streams`); run in name order with everyone's. */
  migrations?: Readonly<Record<string, MigrationOf>>;
  /** `services` holds what the components registered before this one provide. */
  build(platform: Platform, services: Services): Built<P>;
}

/** Declares a component providing exactly the services named by `K`. */
export function component<K extends keyof Services>(def: Component<Pick<Services, K>>): Component {
  return def as Component;
}
