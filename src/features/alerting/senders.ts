import { createHmac } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { type BlockList, isIP } from 'node:net';
import { hostname } from 'node:os';
import { createTransport, type Transporter } from 'nodemailer';
import { isDenied } from '../../config/deny-cidrs.js';
import type { ChannelType } from './alerting-table.js';
import { parseTemplate, renderTemplate, templateVariables } from './body-template.js';
import { bodyText, headline, type Notification } from './notification.js';
import {
  dedupKey,
  type OpsgenieConfig,
  opsgenieClose,
  opsgenieCreate,
  type PagerdutyConfig,
  pagerdutyEvent,
  pagerdutyResolve,
  type TeamsConfig,
  teamsCard,
  testKey,
} from './oncall-payloads.js';
import {
  type ReportNotice,
  reportSlack,
  reportSubject,
  reportTeamsCard,
  reportTemplateVariables,
  reportText,
  reportWebhookBody,
} from './report-notice.js';

export interface WebhookConfig {
  url: string;
  headers?: Record<string, string>;
  secret?: string;
  /** Sent instead of the JSON notification, rendered (body-template.ts). */
  body_template?: string;
  content_type?: string;
}
export interface SlackConfig {
  url: string;
}
export interface EmailConfig {
  to: string[];
}
export type { OpsgenieConfig, PagerdutyConfig, TeamsConfig };
export type ChannelConfig =
  | WebhookConfig
  | SlackConfig
  | EmailConfig
  | PagerdutyConfig
  | OpsgenieConfig
  | TeamsConfig;

/**
 * A failed attempt, with what a person reading the deliveries list needs to know. `final`:
 * trying again cannot help (a vendor refused the request itself), so it is not retried.
 */
export class SendError extends Error {
  constructor(
    message: string,
    readonly final = false,
  ) {
    super(message);
  }
}

export interface SendersOptions {
  smtpUrl: string;
  smtpFrom: string;
  denyCidrs: BlockList;
  /** Per attempt (ms). */
  timeoutMs?: number;
  /** PagerDuty Events API base (`https://events.pagerduty.com`). */
  pagerdutyUrl?: string;
  /** Opsgenie API base replacing both regions' (empty: by the channel's region). */
  opsgenieUrl?: string;
}

/** What a send may need besides the notification: a test's keys are the channel's. */
export interface SendContext {
  channelId?: number;
  now?: () => number;
}

/** Bytes of a receiver's answer read before the connection is closed. */
const ANSWER_BYTES = 4096;

/** A signature of the body as the receiver recomputes it: `sha256=<hex HMAC-SHA256>`. */
export const signature = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/**
 * Sends a notification on a channel, once: the delivery queue retries. Every failure is a
 * SendError whose message says what went wrong (an HTTP status, a refused connection, a
 * timeout, an SMTP answer), never a stack.
 */
export class Senders {
  private mailer: Transporter | undefined;
  private readonly timeoutMs: number;

  constructor(private readonly opts: SendersOptions) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
  }

  async send(
    type: ChannelType,
    config: ChannelConfig,
    n: Notification | ReportNotice,
    ctx: SendContext = {},
  ): Promise<void> {
    if (n.kind === 'report') return this.sendReport(type, config, n);
    switch (type) {
      case 'webhook': {
        const c = config as WebhookConfig;
        const contentType = c.content_type ?? 'application/json';
        const body = c.body_template
          ? renderTemplate(parseTemplate(c.body_template), templateVariables(n), contentType)
          : JSON.stringify(n);
        await this.post(
          c.url,
          body,
          {
            ...(c.headers ?? {}),
            ...(c.secret ? { 'x-logscope-signature': signature(c.secret, body) } : {}),
          },
          { contentType },
        );
        return;
      }
      case 'pagerduty': {
        const c = config as PagerdutyConfig;
        const url = `${(this.opts.pagerdutyUrl || 'https://events.pagerduty.com').replace(/\/+$/, '')}/v2/enqueue`;
        const vendor = { final4xx: true };
        if (n.kind === 'test') {
          // A test opens and at once resolves an incident of its own key.
          const key = testKey(ctx.channelId ?? 0, (ctx.now ?? Date.now)());
          await this.post(url, JSON.stringify(pagerdutyEvent(c, n, key)), {}, vendor);
          await this.post(url, JSON.stringify(pagerdutyResolve(c, key)), {}, vendor);
        } else await this.post(url, JSON.stringify(pagerdutyEvent(c, n, dedupKey(n))), {}, vendor);
        return;
      }
      case 'opsgenie': {
        const c = config as OpsgenieConfig;
        const base = (
          this.opts.opsgenieUrl ||
          (c.region === 'eu' ? 'https://api.eu.opsgenie.com' : 'https://api.opsgenie.com')
        ).replace(/\/+$/, '');
        const auth = { authorization: `GenieKey ${c.api_key}` };
        const vendor = { final4xx: true };
        const close = (alias: string) =>
          this.post(
            `${base}/v2/alerts/${encodeURIComponent(alias)}/close?identifierType=alias`,
            JSON.stringify(opsgenieClose(n)),
            auth,
            vendor,
          );
        if (n.kind === 'recover') await close(dedupKey(n));
        else {
          const alias =
            n.kind === 'test' ? testKey(ctx.channelId ?? 0, (ctx.now ?? Date.now)()) : dedupKey(n);
          await this.post(`${base}/v2/alerts`, JSON.stringify(opsgenieCreate(c, n, alias)), auth, vendor);
          if (n.kind === 'test') await close(alias);
        }
        return;
      }
      case 'teams':
        await this.post((config as TeamsConfig).url, JSON.stringify(teamsCard(n)), {}, { final4xx: true });
        return;
      case 'slack': {
        const c = config as SlackConfig;
        const text = n.search_url ? `${headline(n)}\n<${n.search_url}|Open in Logscope>` : headline(n);
        const samples = n.samples
          .slice(-5)
          .map((s) => `• ${(s.message ?? '').slice(0, 200)}`)
          .join('\n');
        await this.post(c.url, JSON.stringify({ text: samples ? `${text}\n${samples}` : text }), {});
        return;
      }
      case 'email':
        await this.mail(config as EmailConfig, headline(n), bodyText(n));
        return;
    }
  }

  /**
   * POSTs to a webhook. The host is resolved once and the connection made to the very
   * address that was checked against webhookDenyCidrs (every form of it: see
   * deny-cidrs.ts), so a name that resolves elsewhere on a second lookup (DNS rebinding)
   * reaches nothing new. At most ANSWER_BYTES of the answer are read, and none of it is
   * repeated in an error (a channel must not become a way to read internal pages).
   */
  private async post(
    url: string,
    body: string,
    headers: Record<string, string>,
    opts: { contentType?: string; final4xx?: boolean } = {},
  ): Promise<void> {
    const target = new URL(url);
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) this.checkAddress(host, host);
    const client = target.protocol === 'https:' ? https : http;
    const status = await new Promise<number>((resolve, reject) => {
      const fail = (err: unknown) =>
        reject(err instanceof SendError ? err : new SendError(describeFetchError(err, this.timeoutMs)));
      const req = client.request(
        target,
        {
          method: 'POST',
          // A connection of its own: resolved and checked now, not reused from an old check.
          agent: false,
          headers: {
            'user-agent': 'Logscope',
            ...headers,
            'content-type': opts.contentType ?? 'application/json',
            'content-length': Buffer.byteLength(body),
          },
          lookup: (hostname, options, callback) => {
            lookup(hostname, { all: true }).then(
              (all) => {
                try {
                  for (const a of all) this.checkAddress(hostname, a.address);
                } catch (err) {
                  callback(err as Error, '', 0);
                  return;
                }
                const first = all[0];
                if (!first) callback(new SendError(`cannot resolve ${hostname}`), '', 0);
                else if ((options as { all?: boolean }).all)
                  (callback as unknown as (e: null, a: typeof all) => void)(null, [first]);
                else callback(null, first.address, first.family);
              },
              (err: NodeJS.ErrnoException) =>
                callback(new SendError(`cannot resolve ${hostname} (${err.code ?? 'error'})`), '', 0),
            );
          },
          signal: AbortSignal.timeout(this.timeoutMs),
        },
        (res) => {
          // Read a little of the answer (a receiver may wait for its client to read) and go.
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > ANSWER_BYTES) res.destroy();
          });
          res.on('error', () => undefined);
          res.on('close', () => resolve(res.statusCode ?? 0));
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', fail);
      req.end(body);
    });
    if (status < 200 || status >= 300) {
      // A redirect could lead past webhookDenyCidrs: it counts as a failure.
      // A vendor's 4xx (but a timeout or a rate limit) refuses the request itself: no retry.
      const final =
        opts.final4xx === true && status >= 400 && status < 500 && status !== 408 && status !== 429;
      throw new SendError(
        `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`,
        final,
      );
    }
  }

  /** A scheduled report (report-notice.ts): email carries the file, the others its link. */
  private async sendReport(type: ChannelType, config: ChannelConfig, n: ReportNotice): Promise<void> {
    switch (type) {
      case 'webhook': {
        const c = config as WebhookConfig;
        const contentType = c.content_type ?? 'application/json';
        const body = c.body_template
          ? renderTemplate(parseTemplate(c.body_template), reportTemplateVariables(n), contentType)
          : JSON.stringify(reportWebhookBody(n));
        const signed: Record<string, string> = c.secret
          ? { 'x-logscope-signature': signature(c.secret, body) }
          : {};
        await this.post(c.url, body, { ...(c.headers ?? {}), ...signed }, { contentType });
        return;
      }
      case 'slack':
        await this.post((config as SlackConfig).url, JSON.stringify(reportSlack(n)), {});
        return;
      case 'teams':
        await this.post(
          (config as TeamsConfig).url,
          JSON.stringify(reportTeamsCard(n)),
          {},
          { final4xx: true },
        );
        return;
      case 'email': {
        const a = n.attachment;
        await this.mail(config as EmailConfig, reportSubject(n), reportText(n), [
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
        return;
      }
      case 'pagerduty':
      case 'opsgenie':
        throw new SendError(`a ${type} channel does not carry reports`, true);
    }
  }

  /** Refuses an address of `host` in webhookDenyCidrs, in any of its forms. */
  private checkAddress(host: string, address: string): void {
    if (isDenied(this.opts.denyCidrs, address))
      throw new SendError(`${host} (${address}) is in a range webhookDenyCidrs forbids`);
  }

  private async mail(
    c: EmailConfig,
    subject: string,
    text: string,
    attachments: Array<{ filename: string; contentType: string; content: Buffer }> = [],
  ): Promise<void> {
    if (!this.opts.smtpUrl) throw new SendError('no mail server: set smtpUrl (and smtpFrom) to send email');
    if (!this.mailer) {
      const u = new URL(this.opts.smtpUrl);
      const secure = u.protocol === 'smtps:';
      this.mailer = createTransport({
        host: u.hostname.replace(/^\[|\]$/g, ''),
        port: u.port ? Number(u.port) : secure ? 465 : 587,
        secure,
        ...(u.username
          ? { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } }
          : {}),
        connectionTimeout: this.timeoutMs,
        greetingTimeout: this.timeoutMs,
        socketTimeout: this.timeoutMs,
      });
    }
    try {
      await this.mailer.sendMail({
        from: this.opts.smtpFrom || `logscope@${hostname()}`,
        to: c.to,
        subject,
        text,
        ...(attachments.length ? { attachments } : {}),
      });
    } catch (err) {
      const e = err as { response?: string; code?: string; message?: string };
      throw new SendError(`SMTP: ${e.response ?? e.message ?? e.code ?? 'failed'}`);
    }
  }

  close(): void {
    this.mailer?.close();
  }
}

function describeFetchError(err: unknown, timeoutMs: number): string {
  const e = err as {
    name?: string;
    code?: string;
    cause?: { code?: string; message?: string };
    message?: string;
  };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within ${timeoutMs / 1000} s`;
  if (e.code) return `${e.code}${e.message ? `: ${e.message}` : ''}`;
  const cause = e.cause;
  if (cause?.code) return `${cause.code}${cause.message ? `: ${cause.message}` : ''}`;
  return e.message ?? 'request failed';
}
