/**
 * Intake: every protocol's routes, the syslog and GELF listeners (started and stopped with
 * this component), pipelines and the service that hands events to the batcher.
 */

import type { MetricsSource } from '../../core/metrics.js';
import { compileOneWaiting } from '../../ingest/pipelines/grok.js';
import { component, RELOAD_RULES_MS } from '../component.js';
import { esBulkRoutes } from './es-bulk-routes.js';
import { type GelfListener, startGelfListener } from './gelf-listener.js';
import { gelfRoutes } from './gelf-routes.js';
import { IngestResultSchema, ingestRoutes } from './ingest-routes.js';
import { IngestService } from './ingest-service.js';
import { JournaldIntake } from './journald-intake.js';
import { journaldRoutes } from './journald-routes.js';
import { lokiRoutes } from './loki-routes.js';
import { otlpRoutes } from './otlp-routes.js';
import { PipelineSchema } from './pipeline-schema.js';
import { PipelinesRepository } from './pipelines-repository.js';
import { pipelineRoutes } from './pipelines-routes.js';
import { PipelinesService } from './pipelines-service.js';
import { pipelinesMigration } from './pipelines-table.js';
import { type SyslogListener, startSyslogListener } from './syslog-listener.js';

/** After start, then between two patterns' compiles (each ~10-60 ms of the loop). */
const WARM_AFTER_MS = 1000;
const WARM_STEP_MS = 20;

declare module '../component.js' {
  interface Services {
    ingest: IngestService;
    pipelines: PipelinesService;
    /** systemd-journal-upload's uploads (streamed, the already-stored head skipped). */
    journald: JournaldIntake;
  }
}

export const intake = component({
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
    const journald = new JournaldIntake(ingest, events);
    let reload: NodeJS.Timeout | undefined;
    let warming: NodeJS.Timeout | undefined;
    // The listeners on their own ports (syslogPort, gelfPort; 0: off), and their figures.
    let syslog: SyslogListener | undefined;
    let gelf: GelfListener | undefined;
    const listeners: MetricsSource = {
      metrics: () => [...(syslog?.metrics() ?? []), ...(gelf?.metrics() ?? [])],
    };
    const tcpLimits = {
      maxConnections: config.intakeTcpMaxConnections,
      idleMs: config.intakeTcpIdleSeconds * 1000,
    };
    return {
      provides: { ingest, pipelines, journald },
      schemas: [IngestResultSchema, PipelineSchema],
      async routes(app) {
        await app.register(pipelineRoutes, { pipelines });
        // Every intake path: the same service and bounds.
        const intake = { ingest, bodyLimit: config.ingestBodyLimit, maxRecords: config.ingestMaxRecords };
        for (const routes of [ingestRoutes, esBulkRoutes, gelfRoutes, lokiRoutes, otlpRoutes])
          await app.register(routes, intake);
        await app.register(journaldRoutes, { journald });
      },
      metrics: [ingest, pipelines, listeners],
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
        if (config.syslogPort > 0) {
          syslog = await startSyslogListener(ingest, {
            host: config.syslogHost,
            port: config.syslogPort,
            udpReceiveBuffer: config.syslogUdpReceiveBuffer,
            ...tcpLimits,
            log,
          });
          log.info({ port: syslog.port }, 'syslog listening on UDP and TCP');
        }
        if (config.gelfPort > 0) {
          gelf = await startGelfListener(ingest, {
            host: config.gelfHost,
            port: config.gelfPort,
            ...tcpLimits,
            log,
          });
          log.info({ port: gelf.port }, 'GELF listening on UDP and TCP');
        }
      },
      // The listeners close before the batcher's last commit: nothing arrives after it.
      async quiesce() {
        await syslog?.close();
        await gelf?.close();
      },
      stop: async () => {
        clearInterval(reload);
        clearTimeout(warming);
      },
    };
  },
});
