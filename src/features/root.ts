/**
 * The composition root: builds the registered components in order over the platform,
 * starts them in that order and stops them in the reverse one. Nothing else decides an
 * order of start or stop.
 */
import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';
import type { MetricsSource } from '../core/metrics.js';
import type { Built, Component, MigrationOf, Platform, Services } from './component.js';

export interface Root {
  readonly platform: Platform;
  readonly services: Services;
  /** Every component's shared schemas (added to an app before any route). */
  readonly schemas: readonly TSchema[];
  /** Every component's figures for /metrics, the batcher's first. */
  readonly metrics: readonly MetricsSource[];
  /** Registers every component's routes on an app, in registration order. */
  routes(app: FastifyInstance): Promise<void>;
  start(): Promise<void>;
  /**
   * Commits what the batcher holds (its commits still reach triggers and the other
   * nodes), then stops the components in reverse order. The stores stay open: the
   * runtime closes them.
   */
  stop(): Promise<void>;
}

/** Every component's migrations, by name (a name used twice is a programming error). */
export function migrationsOf(components: readonly Component[]): Record<string, MigrationOf> {
  const all: Record<string, MigrationOf> = {};
  for (const c of components)
    for (const [name, migration] of Object.entries(c.migrations ?? {})) {
      if (all[name]) throw new Error(`migration ${name} is declared twice (component ${c.name})`);
      all[name] = migration;
    }
  return all;
}

/**
 * What a component's build may read: the services of those registered before it. Asking
 * for one not built yet names both components instead of handing out `undefined`.
 */
function builtSoFar(services: Record<string, unknown>, current: () => string): Services {
  return new Proxy(services, {
    get(target, key) {
      if (typeof key === 'string' && !(key in target))
        throw new Error(
          `component ${current()} needs service "${key}", which no component before it provides`,
        );
      return target[key as string];
    },
  }) as unknown as Services;
}

/** A component's stop taking this long is logged with its name. */
const SLOW_STOP_MS = 2_000;

export function compose(platform: Platform, components: readonly Component[]): Root {
  const services: Record<string, unknown> = {};
  let building = '';
  const view = builtSoFar(services, () => building);
  const built: Built<Partial<Services>>[] = [];
  const names: string[] = [];
  for (const c of components) {
    names.push(c.name);
    building = c.name;
    const b = c.build(platform, view);
    for (const key of Object.keys(b.provides)) {
      if (key in services) throw new Error(`service "${key}" is provided twice (component ${c.name})`);
    }
    Object.assign(services, b.provides);
    built.push(b);
  }
  return {
    platform,
    services: services as unknown as Services,
    schemas: built.flatMap((b) => b.schemas ?? []),
    metrics: [platform.batcher, ...built.flatMap((b) => b.metrics ?? [])],
    async routes(app) {
      for (const b of built) await b.routes?.(app);
    },
    async start() {
      for (const b of built) await b.start?.();
    },
    async stop() {
      for (const b of [...built].reverse()) await b.quiesce?.();
      await platform.batcher.close();
      // All of them, started or not: a failed start is stopped the same way. A slow one is
      // named in the log (a stop that waits on work in flight should be seconds at most).
      for (let i = built.length - 1; i >= 0; i--) {
        const began = Date.now();
        await built[i]?.stop?.();
        const took = Date.now() - began;
        if (took >= SLOW_STOP_MS)
          platform.log.warn({ component: names[i], ms: took }, 'a component was slow to stop');
      }
    },
  };
}
