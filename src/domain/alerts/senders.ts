import { createHmac } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { type BlockList, isIP } from 'node:net';
import { hostname } from 'node:os';
import { createTransport, type Transporter } from 'nodemailer';
import type { ChannelType } from '../../metadata/schema.js';
import { isDenied } from './deny-cidrs.js';
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

  private async post(url: string, body: string, headers: Record<string, string>): Promise<void> {
    await this.checkAddress(url);
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'user-agent': 'Logscope', ...headers, 'content-type': 'application/json' },
        body,
        // A redirect could lead past webhookDenyCidrs: it counts as a failure.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new SendError(describeFetchError(err, this.timeoutMs));
    }
    const text = await res.text().catch(() => '');
    if (res.status < 200 || res.status >= 300) {
      throw new SendError(`HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`);
    }
  }

  /** Refuses a URL whose host is, or resolves to, an address in webhookDenyCidrs. */
  private async checkAddress(url: string): Promise<void> {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    const addresses = isIP(host)
      ? [host]
      : await lookup(host, { all: true }).then(
          (all) => all.map((a) => a.address),
          (err: NodeJS.ErrnoException) => {
            throw new SendError(`cannot resolve ${host} (${err.code ?? 'error'})`);
          },
        );
    const denied = addresses.find((a) => isDenied(this.opts.denyCidrs, a));
    if (denied) throw new SendError(`${host} (${denied}) is in a range webhookDenyCidrs forbids`);
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
  const e = err as { name?: string; cause?: { code?: string; message?: string }; message?: string };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within ${timeoutMs / 1000} s`;
  const cause = e.cause;
  if (cause?.code) return `${cause.code}${cause.message ? `: ${cause.message}` : ''}`;
  return e.message ?? 'request failed';
}
