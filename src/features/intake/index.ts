/**
 * Intake: every protocol of INTAKE_PROTOCOLS (its routes, its listener on a port of its
 * own), pipelines and the service that hands events to the batcher.
 */

import { compileOneWaiting } from '../../ingest/pipelines/grok.js';
import { type Component, component, RELOAD_RULES_MS } from '../component.js';
import { IngestService } from './ingest-service.js';
import { PipelineSchema } from './pipeline-schema.js';
import { PipelinesRepository } from './pipelines-repository.js';
import { pipelineRoutes } from './pipelines-routes.js';
import { PipelinesService } from './pipelines-service.js';
import { pipelinesMigration } from './pipelines-table.js';
import { esBulkProtocol } from './protocols/es-bulk-routes.js';
import { gelfProtocol } from './protocols/gelf-routes.js';
import { httpProtocol } from './protocols/ingest-routes.js';
import { type IntakeProtocol, intakeProtocols } from './protocols/intake-protocol.js';
import { journaldProtocol } from './protocols/journald-routes.js';
import { lokiProtocol } from './protocols/loki-routes.js';
import { otlpProtocol } from './protocols/otlp-routes.js';
import { syslogProtocol } from './protocols/syslog-listener.js';

export type { IntakeContext, IntakeListener, IntakeProtocol } from './protocols/intake-protocol.js';

/**
 * The protocols Logscope takes logs in, each one module of ./protocols/: a new protocol is
 * a module there and a line here. Listeners start and close in this order; routes are
 * registered in it.
 */
export const INTAKE_PROTOCOLS: readonly IntakeProtocol[] = [
  syslogProtocol,
  httpProtocol,
  esBulkProtocol,
  gelfProtocol,
  lokiProtocol,
  otlpProtocol,
  journaldProtocol,
];

/** After start, then between two patterns' compiles (each ~10-60 ms of the loop). */
const WARM_AFTER_MS = 1000;
const WARM_STEP_MS = 20;

declare module '../component.js' {
  interface Services {
    ingest: IngestService;
    pipelines: PipelinesService;
  }
}

/** The intake component over a list of protocols: INTAKE_PROTOCOLS, or a test's own. */
export function intakeComponent(list: readonly IntakeProtocol[]): Component {
  return component({
    name: 'intake',
    migrations: { '0008-pipelines': pipelinesMigration },
    build({ meta, config, log, bus, batcher, events, cluster }, s) {
      const pipelines = new PipelinesService(new PipelinesRepository(meta.db), {
        log,
        // What one node changes, every node learns (in one process this stays local).
        onChanged: () => bus.publish('pipelines-changed', {}),
      });
      bus.subscribe('pipelines-changed', (_m, remote) => {
        if (remote) pipelines.load().catch(() => undefined);
      });
      const ingest = new IngestService(batcher, () => pipelines.current, s.patterns);
      // Every protocol: the same service and bounds.
      const protocols = intakeProtocols(list, {
        ingest,
        events,
        config,
        log,
        bodyLimit: config.ingestBodyLimit,
        maxRecords: config.ingestMaxRecords,
        tcpLimits: {
          maxConnections: config.intakeTcpMaxConnections,
          idleMs: config.intakeTcpIdleSeconds * 1000,
        },
      });
      let reload: NodeJS.Timeout | undefined;
      let warming: NodeJS.Timeout | undefined;
      return {
        provides: { ingest, pipelines },
        schemas: [...protocols.schemas, PipelineSchema],
        async routes(app) {
          await app.register(pipelineRoutes, { pipelines });
          await protocols.routes(app);
        },
        metrics: [ingest, pipelines, protocols.metrics],
        async start() {
          await pipelines.start();
          // The built-ins' patterns compile on their first text; compiled here one at a
          // time once the server has started, no text waits for its pattern's compile.
          warming = setTimeout(function warm() {
            if (compileOneWaiting()) warming = setTimeout(warm, WARM_STEP_MS).unref();
          }, WARM_AFTER_MS).unref();
          // Pipelines changed while the bus was down are read again.
          if (cluster)
            reload = setInterval(() => {
              if (!bus.connected) pipelines.load().catch(() => undefined);
            }, RELOAD_RULES_MS).unref();
          // Each protocol's listener on its own port (none where its port setting is 0).
          await protocols.start();
        },
        // The listeners close before the batcher's last commit: nothing arrives after it.
        quiesce: () => protocols.close(),
        stop: async () => {
          clearInterval(reload);
          clearTimeout(warming);
        },
      };
    },
  });
}

export const intake = intakeComponent(INTAKE_PROTOCOLS);
