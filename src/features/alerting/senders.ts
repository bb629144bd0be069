import { createHmac } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { type BlockList, isIP } from 'node:net';
import { hostname } from 'node:os';
import { createTransport, type Transporter } from 'nodemailer';
import { isDenied } from '../../config/deny-cidrs.js';
import type { ChannelType } from './alerting-table.js';
import { bodyText, headline, type Notification } from './notification.js';

export interface WebhookConfig {
  url: string;
  headers?: Record<string, string>;
  secret?: string;
}
export interface SlackConfig {
  url: string;
}
export interface EmailConfig {
  to: string[];
}
export type ChannelConfig = WebhookConfig | SlackConfig | EmailConfig;

/** A failed attempt, with what a person reading the deliveries list needs to know. */
export class SendError extends Error {}

export interface SendersOptions {
  smtpUrl: string;
  smtpFrom: string;
  denyCidrs: BlockList;
  /** Per attempt (ms). */
  timeoutMs?: number;
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

  async send(type: ChannelType, config: ChannelConfig, n: Notification): Promise<void> {
    switch (type) {
      case 'webhook': {
        const c = config as WebhookConfig;
        const body = JSON.stringify(n);
        await this.post(c.url, body, {
          ...(c.headers ?? {}),
          ...(c.secret ? { 'x-logscope-signature': signature(c.secret, body) } : {}),
        });
        return;
      }
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
        await this.mail(config as EmailConfig, n);
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
  private async post(url: string, body: string, headers: Record<string, string>): Promise<void> {
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
            'content-type': 'application/json',
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
      throw new SendError(
        `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`,
      );
    }
  }

  /** Refuses an address of `host` in webhookDenyCidrs, in any of its forms. */
  private checkAddress(host: string, address: string): void {
    if (isDenied(this.opts.denyCidrs, address))
      throw new SendError(`${host} (${address}) is in a range webhookDenyCidrs forbids`);
  }

  private async mail(c: EmailConfig, n: Notification): Promise<void> {
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
        subject: headline(n),
        text: bodyText(n),
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
