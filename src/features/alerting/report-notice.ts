/**
 * What a scheduled report's run sends on a channel (docs/api/schedules.md): the delivery's
 * payload, and the texts the kinds make of it (each kind's own message is in its file of
 * channel-kinds/).
 */

/** A scheduled run's report, as a delivery carries it. */
export interface ReportNotice {
  kind: 'report';
  schedule: { id: number; name: string; cron: string; time_zone: string };
  report: { id: number; title: string; ftype: string; filename: string; size: number; created_at: string };
  /** The range the report covers, resolved at the run's start; null: the widgets' own ranges. */
  time_range: { ts_from: number; ts_to: number } | null;
  run: { at: string; trigger: 'cron' | 'manual' };
  /** A signed link to the file that needs no token, and when it stops working. */
  link: string;
  link_expires_at: string;
  /** What a person reads: the source named, the run's and the range's local times. */
  about: { source: string; local_time: string; range: string | null };
  /**
   * The file for a mail, base64, when at most scheduleAttachMaxBytes (kept in the delivery
   * so a retry sends the same bytes after the report itself was pruned); null: the link alone.
   */
  attachment: { filename: string; media_type: string; content_base64: string } | null;
}

/**
 * A report's delivery as stored: without its link, which is made when it is sent (a stored
 * payload holds nothing that opens data by itself).
 */
export type StoredReportNotice = Omit<ReportNotice, 'link' | 'link_expires_at'>;

/** A mail's subject: `[Logscope] <name> – <local date and time>`. */
export const reportSubject = (n: ReportNotice): string =>
  `[Logscope] ${n.schedule.name} – ${n.about.local_time}`;

/** One line naming the schedule and the range, for chat channels. */
export const reportHeadline = (n: ReportNotice): string =>
  `Scheduled report "${n.schedule.name}" (${n.about.local_time})${n.about.range ? `: ${n.about.range}` : ''}`;

/** A mail's text: the schedule, its source, the range in its zone and the link. */
export function reportText(n: ReportNotice): string {
  return [
    `Scheduled report "${n.schedule.name}", run ${n.about.local_time} (${n.schedule.time_zone}, ${n.run.trigger}).`,
    '',
    `Source: ${n.about.source}`,
    `Time range: ${n.about.range ?? "each widget's own"}`,
    `Report: ${n.report.title} (${n.report.filename}, ${n.report.size} bytes)`,
    '',
    `Download: ${n.link}`,
    `(the link works without signing in until ${n.link_expires_at})`,
    ...(n.attachment ? [] : ['', 'The file is too large to attach: use the link above.']),
  ].join('\n');
}
