/**
 * A webhook: the JSON notification POSTed to a URL, or a body rendered from its template
 * (body-template.ts), with headers of its own and, given a secret, signed.
 */
import { createHmac } from 'node:crypto';
import { Type } from 'typebox';
import {
  isJsonType,
  parseTemplate,
  renderTemplate,
  TEMPLATE_MAX_BYTES,
  TemplateBudgetError,
  TemplateError,
  templateVariables,
} from '../body-template.js';
import { type ReportNotice, reportHeadline, reportText } from '../report-notice.js';
import { type ChannelKind, type ConfigOf, type Fail, type Masked, SendError } from './channel-kind.js';
import { checkUrl, giveAgain, SECRET_MASK } from './config-checks.js';

const settings = {
  url: Type.String({
    description: 'Where it POSTs: http:// or https://, without user:password (use headers).',
  }),
  headers: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: 'At most 20 headers sent with each request; each value reads back as "********".',
    }),
  ),
  secret: Type.Optional(
    Type.String({
      description:
        'Signs each body: X-Logscope-Signature: sha256=<hex HMAC-SHA256 of the body>. Reads back as "********".',
    }),
  ),
  body_template: Type.Optional(
    Type.String({ description: 'Sent instead of the JSON notification, rendered (docs/api/alerting.md).' }),
  ),
  content_type: Type.Optional(
    Type.String({
      description: 'The rendered body’s media type (default application/json); needs body_template.',
    }),
  ),
};
export type WebhookConfig = ConfigOf<typeof settings>;

const masked: Masked = { keys: ['secret'], valuesOf: ['headers'] };

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers a channel may not set: the request's own framing and the signature. */
const RESERVED_HEADERS = new Set([
  'content-type',
  'content-length',
  'host',
  'transfer-encoding',
  'x-logscope-signature',
]);
/** A media type as a Content-Type header carries it (`type/subtype`, parameters allowed). */
const MEDIA_TYPE = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;[^\r\n\0]*)?$/;

export const webhook: ChannelKind<'webhook', typeof settings> = {
  type: 'webhook',
  title: 'webhook',
  settings,
  about:
    'a JSON POST of the notification, or the body_template rendered, signed (X-Logscope-Signature) when it has a secret',
  masked,
  check(raw, stored, fail, refused) {
    const { url, keep } = checkUrl(raw.url, stored?.url, masked.url === true, fail, refused);
    const out: WebhookConfig = { url };
    // A webhook's headers and secret go where its URL points: not to a new origin.
    const headers = raw.headers ?? {};
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
      fail('headers', 'An object of header names to values.');
    else {
      const entries = Object.entries(headers as Record<string, unknown>);
      if (entries.length > 20) fail('headers', 'At most 20 headers.');
      const storedHeaders = stored?.headers ?? {};
      const kept: Array<[string, string]> = [];
      for (const [name, value] of entries) {
        if (!HEADER_NAME.test(name) || RESERVED_HEADERS.has(name.toLowerCase()))
          fail(`headers.${name}`, 'Not a header name a channel may set.');
        else if (value === SECRET_MASK) {
          // Values are shown masked (they carry credentials): sent back, the stored one stays.
          const had = Object.hasOwn(storedHeaders, name);
          if (had && !keep) kept.push([name, storedHeaders[name] as string]);
          else fail(`headers.${name}`, giveAgain(had, keep));
        } else if (typeof value !== 'string' || value.length > 4000 || /[\r\n\0]/.test(value))
          fail(`headers.${name}`, 'A header value: text on one line.');
        else kept.push([name, value]);
      }
      if (kept.length) out.headers = Object.fromEntries(kept);
    }
    const secret = raw.secret;
    if (secret !== undefined && secret !== null) {
      if (secret === SECRET_MASK) {
        const kept = stored?.secret;
        if (kept && !keep) out.secret = kept;
        else if (kept) fail('secret', giveAgain(kept, keep));
      } else if (typeof secret !== 'string' || secret.length < 1 || secret.length > 500)
        fail('secret', 'Text of 1 to 500 characters.');
      else out.secret = secret;
    }
    return Object.assign(out, checkTemplate(raw, fail));
  },
  async send(c, n, out) {
    const contentType = c.content_type ?? 'application/json';
    const body = c.body_template
      ? renderBody(c.body_template, templateVariables(n), contentType)
      : JSON.stringify(n);
    await out.post(c.url, body, signed(c, body), { contentType });
  },
  reports: {
    attachesFile: false,
    async send(c, n, out) {
      const contentType = c.content_type ?? 'application/json';
      const body = c.body_template
        ? renderBody(c.body_template, reportTemplateVariables(n), contentType)
        : JSON.stringify(reportWebhookBody(n));
      await out.post(c.url, body, signed(c, body), { contentType });
    },
  },
};

/** A signature of the body as the receiver recomputes it: `sha256=<hex HMAC-SHA256>`. */
export const signature = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** The channel's headers, and the body's signature when it has a secret. */
const signed = (c: WebhookConfig, body: string): Record<string, string> => ({
  ...(c.headers ?? {}),
  ...(c.secret ? { 'x-logscope-signature': signature(c.secret, body) } : {}),
});

/** A webhook's body from its template; past the render budget a final failure saying so. */
function renderBody(template: string, vars: Record<string, unknown>, contentType: string): string {
  try {
    return renderTemplate(parseTemplate(template), vars, contentType);
  } catch (err) {
    if (err instanceof TemplateBudgetError) throw new SendError(`not sent: ${err.message}`, true);
    throw err;
  }
}

/** A webhook's `body_template` and `content_type`, as stored (absent ones left out). */
function checkTemplate(
  raw: Record<string, unknown>,
  fail: Fail,
): { body_template?: string; content_type?: string } {
  const out: { body_template?: string; content_type?: string } = {};
  const contentType = raw.content_type;
  if (contentType !== undefined && contentType !== null) {
    if (typeof contentType !== 'string' || contentType.length > 200 || !MEDIA_TYPE.test(contentType))
      fail('content_type', 'A media type (application/json, text/plain; charset=utf-8).');
    else out.content_type = contentType;
  }
  const template = raw.body_template;
  if (template !== undefined && template !== null && template !== '') {
    if (typeof template !== 'string') fail('body_template', 'Text: a template.');
    else if (Buffer.byteLength(template) > TEMPLATE_MAX_BYTES)
      fail('body_template', `At most ${TEMPLATE_MAX_BYTES} bytes.`);
    else {
      try {
        parseTemplate(template);
        out.body_template = template;
      } catch (err) {
        if (!(err instanceof TemplateError)) throw err;
        fail('body_template', `${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}.`);
      }
    }
  } else if (out.content_type && !isJsonType(out.content_type))
    // Without a template the body is the JSON notification: it must say so.
    fail('content_type', 'Without a body_template the body is JSON: leave content_type out.');
  return out;
}

/** The JSON a webhook receives for a scheduled report (§23's shape: no mail-only parts). */
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
