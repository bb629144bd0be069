/**
 * What a scheduled report's run sends on a channel (docs/api/schedules.md): the delivery's payload,
 * and what each kind of channel makes of it.
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

/** The JSON a webhook receives (§23's shape: no mail-only parts). */
export const reportWebhookBody = (n: ReportNotice) => ({
  kind: n.kind,
  schedule: n.schedule,
  report: n.report,
  time_range: n.time_range,
  run: n.run,
  link: n.link,
  link_expires_at: n.link_expires_at,
});

/** A webhook template's variables for a report (body-template.ts renders them). */
export const reportTemplateVariables = (n: ReportNotice): Record<string, unknown> => ({
  ...reportWebhookBody(n),
  is_fire: false,
  is_recover: false,
  is_test: false,
  is_report: true,
  headline: reportHeadline(n),
  text: reportText(n),
});

/** A Slack message: the schedule and the range, with the link. */
export const reportSlack = (n: ReportNotice) => ({
  text: `${reportHeadline(n)}\n<${n.link}|Download the report>`,
});

/** A Teams card: the same, and an Action.OpenUrl to the link. */
export const reportTeamsCard = (n: ReportNotice) => ({
  type: 'message',
  attachments: [
    {
      contentType: 'application/vnd.microsoft.card.adaptive',
      contentUrl: null,
      content: {
        $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
        type: 'AdaptiveCard',
        version: '1.4',
        body: [
          { type: 'TextBlock', text: reportHeadline(n), weight: 'Bolder', size: 'Medium', wrap: true },
          {
            type: 'FactSet',
            facts: [
              { title: 'Source', value: n.about.source },
              { title: 'Time range', value: n.about.range ?? "each widget's own" },
              { title: 'Report', value: n.report.filename },
            ],
          },
        ],
        actions: [{ type: 'Action.OpenUrl', title: 'Download the report', url: n.link }],
      },
    },
  ],
});
