/** Intake: every protocol's routes, pipelines and the service that hands events to the batcher. */

import { PipelineSchema } from '../domain/pipelines/pipeline-schema.js';
import { PipelinesService } from '../domain/pipelines/pipelines-service.js';
import { esBulkRoutes } from '../http/routes/es-bulk.js';
import { gelfRoutes } from '../http/routes/gelf.js';
import { IngestResultSchema, ingestRoutes } from '../http/routes/ingest.js';
import { journaldRoutes } from '../http/routes/journald.js';
import { lokiRoutes } from '../http/routes/loki.js';
import { otlpRoutes } from '../http/routes/otlp.js';
import { pipelineRoutes } from '../http/routes/pipelines.js';
import { IngestService } from '../ingest/ingest-service.js';
import { JournaldIntake } from '../ingest/journald-intake.js';
import { PipelinesRepository } from '../metadata/pipelines-repository.js';
import { component, RELOAD_RULES_MS } from './component.js';

declare module './component.js' {
  interface Services {
    ingest: IngestService;
    pipelines: PipelinesService;
    /** systemd-journal-upload's uploads (streamed, the already-stored head skipped). */
    journald: JournaldIntake;
  }
}

export const ingest = component({
  name: 'ingest',
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
      metrics: [ingest, pipelines],
      async start() {
        await pipelines.start();
        // Pipelines changed while the bus was down are read again.
        if (cluster)
          reload = setInterval(() => {
            if (!bus.connected) pipelines.load().catch(() => undefined);
          }, RELOAD_RULES_MS).unref();
      },
      stop: async () => clearInterval(reload),
    };
  },
});
