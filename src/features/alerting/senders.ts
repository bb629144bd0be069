import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { type BlockList, isIP } from 'node:net';
import { hostname } from 'node:os';
import { createTransport, type Transporter } from 'nodemailer';
import { isDenied } from '../../config/deny-cidrs.js';
import {
  type ChannelConfig,
  type MailAttachment,
  type Outbound,
  type SendContext,
  SendError,
  type VendorSettings,
} from './channel-kinds/channel-kind.js';
import { type ChannelKindRegistry, channelKinds } from './channel-kinds/registry.js';
import type { Notification } from './notification.js';
import type { ReportNotice } from './report-notice.js';

export { type ChannelConfig, type SendContext, SendError };

export interface SendersOptions {
  smtpUrl: string;
  smtpFrom: string;
  denyCidrs: BlockList;
  /** Per attempt (ms). */
  timeoutMs?: number;
  /** The vendor bases (PagerDuty's, Opsgenie's) settings may replace. */
  pagerdutyUrl?: string;
  opsgenieUrl?: string;
}

/** Bytes of a receiver's answer read before the connection is closed. */
const ANSWER_BYTES = 4096;

/**
 * Sends a notification on a channel, once: the delivery queue retries. The channel's kind
 * (channel-kinds/) says what it sends; this is how everything leaves (Outbound), under the
 * same rules for every kind. Every failure is a SendError whose message says what went wrong
 * (an HTTP status, a refused connection, a timeout, an SMTP answer), never a stack.
 */
export class Senders implements Outbound {
  private mailer: Transporter | undefined;
  private readonly timeoutMs: number;
  readonly settings: VendorSettings;

  constructor(
    private readonly opts: SendersOptions,
    private readonly kinds: Pick<ChannelKindRegistry, 'kindOf'> = channelKinds,
  ) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.settings = { pagerdutyUrl: opts.pagerdutyUrl, opsgenieUrl: opts.opsgenieUrl };
  }

  async send(
    type: string,
    config: ChannelConfig,
    n: Notification | ReportNotice,
    ctx: SendContext = {},
  ): Promise<void> {
    const kind = this.kinds.kindOf(type);
    // A type no longer listed cannot be sent (it must not count as sent): final.
    if (!kind) throw new SendError(`no sender for a ${type} channel`, true);
    if (n.kind !== 'report') return kind.send(config, n, this, ctx);
    if (!kind.reports) throw new SendError(`a ${type} channel does not carry reports`, true);
    return kind.reports.send(config, n, this);
  }

  /**
   * POSTs to a webhook. The host is resolved once and the connection made to the very
   * address that was checked against webhookDenyCidrs (every form of it: see
   * deny-cidrs.ts), so a name that resolves elsewhere on a second lookup (DNS rebinding)
   * reaches nothing new. At most ANSWER_BYTES of the answer are read, and none of it is
   * repeated in an error (a channel must not become a way to read internal pages).
   */
  async post(
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

  /** Refuses an address of `host` in webhookDenyCidrs, in any of its forms. */
  private checkAddress(host: string, address: string): void {
    if (isDenied(this.opts.denyCidrs, address))
      throw new SendError(`${host} (${address}) is in a range webhookDenyCidrs forbids`);
  }

  async mail(
    to: readonly string[],
    subject: string,
    text: string,
    attachments: MailAttachment[] = [],
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
        to: [...to],
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
