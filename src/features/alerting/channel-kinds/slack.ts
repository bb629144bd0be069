/** Slack: a message through an incoming webhook, whose URL is the credential. */
import { Type } from 'typebox';
import { headline } from '../notification.js';
import { type ReportNotice, reportHeadline } from '../report-notice.js';
import type { ChannelKind, Masked } from './channel-kind.js';
import { checkUrl } from './config-checks.js';

const settings = {
  url: Type.String({
    description: 'The incoming webhook’s URL; reads back as its origin and /********.',
  }),
};

const masked: Masked = { url: true };

export const slack: ChannelKind<'slack', typeof settings> = {
  type: 'slack',
  title: 'Slack',
  settings,
  about: 'a message through an incoming webhook',
  masked,
  check(raw, stored, fail, refused) {
    return { url: checkUrl(raw.url, stored?.url, masked.url === true, fail, refused).url };
  },
  async send(c, n, out) {
    const text = n.search_url ? `${headline(n)}\n<${n.search_url}|Open in Logscope>` : headline(n);
    const samples = n.samples
      .slice(-5)
      .map((s) => `• ${(s.message ?? '').slice(0, 200)}`)
      .join('\n');
    await out.post(c.url, JSON.stringify({ text: samples ? `${text}\n${samples}` : text }), {});
  },
  reports: {
    attachesFile: false,
    async send(c, n, out) {
      await out.post(c.url, JSON.stringify(reportSlack(n)), {});
    },
  },
};

/** A Slack message for a scheduled report: the schedule and the range, with the link. */
export const reportSlack = (n: ReportNotice) => ({
  text: `${reportHeadline(n)}\n<${n.link}|Download the report>`,
});
