/** Email: a mail through smtpUrl; a scheduled report's file rides along when small enough. */
import { Type } from 'typebox';
import { bodyText, headline } from '../notification.js';
import { reportSubject, reportText } from '../report-notice.js';
import type { ChannelKind } from './channel-kind.js';

const settings = {
  to: Type.Array(Type.String(), { description: '1 to 50 addresses.' }),
};

const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+$/;

export const email: ChannelKind<'email', typeof settings> = {
  type: 'email',
  title: 'email',
  settings,
  about: 'a mail through the smtpUrl setting',
  masked: {},
  check(raw, _stored, fail) {
    const to = raw.to;
    if (!Array.isArray(to) || to.length === 0 || to.length > 50) fail('to', 'A list of 1 to 50 addresses.');
    else
      to.forEach((a, i) => {
        if (typeof a !== 'string' || a.length > 320 || !EMAIL.test(a))
          fail(`to[${i}]`, 'Not an email address.');
      });
    return { to: Array.isArray(to) ? (to as string[]) : [] };
  },
  async send(c, n, out) {
    await out.mail(c.to, headline(n), bodyText(n));
  },
  reports: {
    attachesFile: true,
    async send(c, n, out) {
      const a = n.attachment;
      await out.mail(c.to, reportSubject(n), reportText(n), [
        ...(a
          ? [
              {
                filename: a.filename,
                contentType: a.media_type,
                content: Buffer.from(a.content_base64, 'base64'),
              },
            ]
          : []),
      ]);
    },
  },
};
