import { RENDERERS } from '../../export/renderers.js';
import type { ChannelsService } from '../alerting/channels-service.js';
import {
  channelKinds,
  type DeliveryQueue,
  type ReportNotice,
  type StoredReportNotice,
} from '../alerting/index.js';
import type { ShortReport } from '../reports/index.js';
import type { ReportsService } from '../reports/reports-service.js';
import type { LastRun } from './schedule-schema.js';
import type { ScheduleRow } from './schedules-table.js';

/** How long a run waits for its deliveries' first attempts (a send gives up after 10 s). */
const FIRST_ATTEMPTS_MS = 30_000;

export interface DeliveryDeps {
  reports: ReportsService;
  channels: ChannelsService;
  deliveryQueue: DeliveryQueue;
  /** `scheduleAttachMaxBytes`. */
  attachMaxBytes: number;
  /** The run's record is saved (deliveries made are never made twice by a node taking it over). */
  save: (run: LastRun) => Promise<void>;
  /** True once the server stops: waiting ends. */
  closing: () => boolean;
}

/** What a person reads of the run: the source named, its local time and the range's. */
export interface RunAbout {
  source: string;
  local_time: string;
  range: string | null;
  timeRange: ReportNotice['time_range'];
}

/**
 * Sends a run's READY report to the schedule's channels: one delivery each (report-notice.ts
 * says what each kind sends), then waits for their first attempts. A channel gone or of a
 * kind that carries no report fails the run, saying which, and the others still get it.
 * A run taken over from a dead node whose deliveries were made only waits for them.
 */
export async function deliverRun(
  d: DeliveryDeps,
  row: ScheduleRow,
  channelIds: number[],
  run: LastRun,
  report: ShortReport,
  about: RunAbout,
): Promise<void> {
  if (!channelIds.length) return;
  const errors: string[] = [];
  if (!run.deliveries.length) {
    const found = await d.channels.ownersAndTypes(channelIds);
    const usable: number[] = [];
    for (const id of channelIds) {
      const c = found.get(id);
      const why = !c
        ? 'no longer exists'
        : channelKinds.carriesReports(c.type)
          ? null
          : 'no longer carries reports';
      if (why === null) usable.push(id);
      else {
        errors.push(`channel ${id} ${why}`);
        run.deliveries.push({ channel_id: id, delivery_id: null, status: 'failed' });
      }
    }
    if (usable.length) {
      // A kind that attaches the file (email) gets it when small enough; the others, the link.
      const attaches = usable.some((id) => channelKinds.attachesReports(found.get(id)?.type ?? ''));
      const notice = await noticeOf(d, row, run, report, about, attaches && report.size <= d.attachMaxBytes);
      const made = await d.deliveryQueue.enqueueReport(notice, usable, row.owner_id);
      for (const m of made) run.deliveries.push({ ...m, status: 'pending' });
    }
    await d.save(run);
  } else
    for (const r of run.deliveries)
      if (r.delivery_id === null)
        errors.push(`channel ${r.channel_id} no longer exists or carries no reports`);
  const states = await firstAttempts(
    d,
    run.deliveries.flatMap((r) => (r.delivery_id === null ? [] : [r.delivery_id])),
  );
  for (const r of run.deliveries) {
    const st = r.delivery_id === null ? undefined : states.get(r.delivery_id);
    if (!st) continue;
    r.status = st.status;
    if (st.attempts > 0 && st.status !== 'sent')
      errors.push(`channel ${r.channel_id}: ${st.last_error ?? 'the first attempt failed'}`);
  }
  run.deliveries.sort((a, b) => channelIds.indexOf(a.channel_id) - channelIds.indexOf(b.channel_id));
  if (errors.length) {
    run.status = 'failed';
    run.error = errors.join('; ');
  }
}

async function noticeOf(
  d: DeliveryDeps,
  row: ScheduleRow,
  run: LastRun,
  report: ShortReport,
  about: RunAbout,
  attach: boolean,
): Promise<StoredReportNotice> {
  // No link yet: each delivery gets its own when it is sent (the delivery queue asks reports).
  const bytes = attach ? await d.reports.bytes(report.id) : null;
  return {
    kind: 'report',
    schedule: { id: row.id, name: row.name, cron: row.cron, time_zone: row.time_zone },
    report: {
      id: report.id,
      title: report.title,
      ftype: report.ftype,
      filename: report.filename,
      size: report.size,
      created_at: report.created_at,
    },
    time_range: about.timeRange,
    run: { at: run.at, trigger: run.trigger },
    about: { source: about.source, local_time: about.local_time, range: about.range },
    attachment: bytes
      ? {
          filename: report.filename,
          media_type: RENDERERS[report.ftype as keyof typeof RENDERERS].mediaType,
          content_base64: bytes.toString('base64'),
        }
      : null,
  };
}

/** Waits until each delivery was tried once (or FIRST_ATTEMPTS_MS passed, or the server stops). */
async function firstAttempts(d: DeliveryDeps, ids: number[]) {
  const deadline = Date.now() + FIRST_ATTEMPTS_MS;
  for (;;) {
    const rows = await d.deliveryQueue.statusOf(ids);
    const map = new Map(rows.map((r) => [r.id, r]));
    const tried = rows.every((r) => r.attempts > 0 || r.status !== 'pending');
    if (tried || Date.now() > deadline || d.closing()) return map;
    await new Promise((r) => setTimeout(r, 100));
  }
}
