/**
 * Microsoft Teams: an Adaptive Card through a Workflows webhook ("When a Teams webhook
 * request is received"), whose signed URL is the credential.
 */
import { Type } from 'typebox';
import { groupText, headline, type Notification } from '../notification.js';
import { type ReportNotice, reportHeadline } from '../report-notice.js';
import type { ChannelKind, Masked } from './channel-kind.js';
import { checkUrl } from './config-checks.js';

const settings = {
  url: Type.String({
    description: 'The workflow’s webhook URL; reads back as its origin and /********.',
  }),
};

const masked: Masked = { url: true };
/** Teams refuses a card it cannot take with a 4xx that a retry does not help. */
const vendor = { final4xx: true };

export const teams: ChannelKind<'teams', typeof settings> = {
  type: 'teams',
  title: 'Teams',
  settings,
  about: 'an Adaptive Card through a Workflows webhook URL',
  masked,
  check(raw, stored, fail, refused) {
    return { url: checkUrl(raw.url, stored?.url, masked.url === true, fail, refused).url };
  },
  async send(c, n, out) {
    await out.post(c.url, JSON.stringify(teamsCard(n)), {}, vendor);
  },
  reports: {
    attachesFile: false,
    async send(c, n, out) {
      await out.post(c.url, JSON.stringify(reportTeamsCard(n)), {}, vendor);
    },
  },
};

/** A Teams message carrying an Adaptive Card (a recovery's headline says Resolved). */
export function teamsCard(n: Notification): object {
  const recovered = n.kind === 'recover';
  const facts = [
    { title: 'Count', value: String(n.count) },
    ...(n.window_seconds !== null ? [{ title: 'Window', value: `${n.window_seconds} s` }] : []),
    ...(Object.keys(n.group).length ? [{ title: 'Group', value: groupText(n.group) }] : []),
    { title: 'Fired at', value: n.fired_at },
  ];
  const samples = n.samples.slice(-5).map((s) => ({
    type: 'TextBlock',
    text: (s.message ?? '').slice(0, 200),
    isSubtle: true,
    wrap: true,
    fontType: 'Monospace',
  }));
  const description = n.trigger?.description || (n.kind === 'test' ? 'Sent from Logscope.' : '');
  return adaptiveCardMessage(
    [
      {
        type: 'TextBlock',
        text: recovered ? `Resolved: ${headline(n)}` : headline(n),
        weight: 'Bolder',
        size: 'Medium',
        wrap: true,
        color: recovered ? 'Good' : n.kind === 'test' ? 'Default' : 'Attention',
      },
      ...(description ? [{ type: 'TextBlock', text: description, wrap: true }] : []),
      { type: 'FactSet', facts },
      ...samples,
    ],
    n.search_url ? [{ type: 'Action.OpenUrl', title: 'Open in Logscope', url: n.search_url }] : [],
  );
}

/** A Teams card for a scheduled report: the schedule and the range, and an Action.OpenUrl to the link. */
export const reportTeamsCard = (n: ReportNotice) =>
  adaptiveCardMessage(
    [
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
    [{ type: 'Action.OpenUrl', title: 'Download the report', url: n.link }],
  );

/** A Teams message of one Adaptive Card (1.4) of `body` and `actions`. */
const adaptiveCardMessage = (body: object[], actions: object[]) => ({
  type: 'message',
  attachments: [
    {
      contentType: 'application/vnd.microsoft.card.adaptive',
      contentUrl: null,
      content: {
        $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
        type: 'AdaptiveCard',
        version: '1.4',
        body,
        actions,
      },
    },
  ],
});
