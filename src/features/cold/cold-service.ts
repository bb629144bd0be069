import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import type { Identity } from '../../core/identity.js';
import type { Page } from '../../core/list.js';
import { gauge, type MetricDecl, type MetricsSource } from '../../core/metrics.js';
import { permissionDenied } from '../../errors/errors.js';
import type { ColdFileRecord, EventStore } from '../../event-store/event-store.js';
import type { ColdFileView } from './cold-schema.js';

export interface ColdFileFilter {
  streamId?: number | undefined;
  day?: string | undefined;
}

/** A record as the API shows it: times in Unix seconds (ms precision), created_at ISO. */
const view = (f: ColdFileRecord): ColdFileView => ({
  id: f.id,
  stream_id: f.streamId,
  day: f.day,
  part: f.part,
  path: f.path,
  rows: f.rows,
  bytes: f.bytes,
  min_ts: f.minTs / 1000,
  max_ts: f.maxTs / 1000,
  min_ev_id: f.minEvId,
  max_ev_id: f.maxEvId,
  sha256: f.sha256,
  created_at: new Date(f.createdAt).toISOString(),
  summary_bytes: f.summaryBytes,
});

/** The cold tier's records as administrators read them (`/api/cold/files`), and its figures. */
export class ColdService implements MetricsSource {
  constructor(private readonly store: EventStore) {}

  async list(
    who: Identity,
    filter: ColdFileFilter,
    plan: { limit: number; offset: number },
  ): Promise<Page<ColdFileView>> {
    if (!who.isAdmin) throw permissionDenied('Only administrators read the cold tier’s files.');
    const files = (await this.store.coldFiles())
      .filter(
        (f) =>
          (filter.streamId === undefined || f.streamId === filter.streamId) &&
          (filter.day === undefined || f.day === filter.day),
      )
      // Oldest day first, then stream and part.
      .sort((a, b) => a.day.localeCompare(b.day) || a.streamId - b.streamId || a.part - b.part);
    return { count: files.length, rows: files.slice(plan.offset, plan.offset + plan.limit).map(view) };
  }

  metrics(): MetricDecl[] {
    const files = () => this.store.coldFiles();
    return [
      gauge('logscope_cold_files', 'Files in the cold tier.', async () => (await files()).length),
      gauge(
        'logscope_tier_events',
        'Events in each tier.',
        async () => {
          const [cold, stats] = await Promise.all([files(), this.store.stats()]);
          return { hot: stats.events, cold: cold.reduce((s, f) => s + f.rows, 0) };
        },
        'tier',
      ),
      gauge(
        'logscope_tier_bytes',
        'Bytes of each tier: the hot store’s data at rest, the cold files’ sizes.',
        async () => {
          const [cold, stats] = await Promise.all([files(), this.store.stats()]);
          return { hot: stats.dataBytes, cold: cold.reduce((s, f) => s + f.bytes, 0) };
        },
        'tier',
      ),
    ];
  }
}

/**
 * Fails while the cold directory or a recorded file cannot be read (`/api/health` names
 * `cold`, docs/operations/cold-tier.md): a query that needs the file would fail.
 */
export async function coldFilesReadable(store: EventStore, dir: string): Promise<void> {
  await access(dir, constants.R_OK | constants.X_OK);
  const files = await store.coldFiles();
  for (let i = 0; i < files.length; i += 64)
    await Promise.all(
      files.slice(i, i + 64).map((f) => access(path.join(dir, ...f.path.split('/')), constants.R_OK)),
    );
}
