import type { Static } from 'typebox';
import { can, type Identity } from '../../core/identity.js';
import type { Page, PageRequest } from '../../core/list.js';
import { type FieldErrors, notFound, validationError } from '../../errors/errors.js';
import type { ChannelSchema } from './alert-schema.js';
import type { ChannelRow, ChannelType } from './alerting-table.js';
import type { ChannelsRepository } from './channels-repository.js';
import type { DeliveriesRepository } from './deliveries-repository.js';
import type { Notification } from './notification.js';
import { checkOpsgenie, checkPagerduty, checkTemplate, SECRET_MASK } from './oncall-config.js';
import type { OpsgenieConfig, PagerdutyConfig } from './oncall-payloads.js';
import { type ChannelConfig, SendError, type Senders } from './senders.js';

export { SECRET_MASK };

export type Channel = Static<typeof ChannelSchema>;

export interface ChannelInput {
  name?: string | undefined;
  type?: ChannelType | undefined;
  config?: object | undefined;
}

export interface TestOutcome {
  sent: boolean;
  error: string | null;
  duration_ms: number;
}

const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers a channel may not set: the request's own framing and the signature. */
const RESERVED_HEADERS = new Set([
  'content-type',
  'content-length',
  'host',
  'transfer-encoding',
  'x-logscope-signature',
]);

/** The settings of each kind. */
const ALLOWED: Record<ChannelType, readonly string[]> = {
  webhook: ['url', 'headers', 'secret', 'body_template', 'content_type'],
  slack: ['url'],
  email: ['to'],
  teams: ['url'],
  pagerduty: ['routing_key', 'severity_map'],
  opsgenie: ['api_key', 'region', 'priority_map'],
};

/** Kinds whose URL is the credential (a Slack incoming webhook, a Teams workflow's signed URL). */
const URL_IS_SECRET: ReadonlySet<ChannelType> = new Set(['slack', 'teams']);

/** Checks a channel's config for its type; returns it as stored. */
export function checkConfig(type: ChannelType, body: object, stored?: ChannelConfig): ChannelConfig {
  const raw = body as Record<string, unknown>;
  const errors: FieldErrors = {};
  const fail = (key: string, message: string) => {
    errors[`config.${key}`] = [message];
  };
  const allowed = ALLOWED[type];
  for (const key of Object.keys(raw))
    if (!allowed.includes(key)) fail(key, `Not a ${type} setting (allowed: ${allowed.join(', ')}).`);
  let out: ChannelConfig;
  if (type === 'pagerduty') out = checkPagerduty(raw, stored as Partial<PagerdutyConfig> | undefined, fail);
  else if (type === 'opsgenie') out = checkOpsgenie(raw, stored as Partial<OpsgenieConfig> | undefined, fail);
  else if (type === 'email') {
    const to = raw.to;
    if (!Array.isArray(to) || to.length === 0 || to.length > 50) fail('to', 'A list of 1 to 50 addresses.');
    else
      to.forEach((a, i) => {
        if (typeof a !== 'string' || a.length > 320 || !EMAIL.test(a))
          fail(`to[${i}]`, 'Not an email address.');
      });
    out = { to: Array.isArray(to) ? (to as string[]) : [] };
  } else {
    const url = raw.url;
    let parsed: URL | undefined;
    try {
      parsed = typeof url === 'string' && url.length <= 2000 ? new URL(url) : undefined;
    } catch {
      parsed = undefined;
    }
    const storedUrl = (stored as { url?: string } | undefined)?.url;
    // A Slack or Teams URL is shown masked: sent back as shown, it keeps the stored one.
    const keptUrl =
      URL_IS_SECRET.has(type) && storedUrl && url === maskedUrl(storedUrl) ? storedUrl : undefined;
    if (keptUrl) parsed = new URL(keptUrl);
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.username || parsed.password)
      fail('url', 'An http:// or https:// URL (without user:password; use headers).');
    out = { url: keptUrl ?? String(url) };
    if (type === 'webhook') {
      const headers = raw.headers ?? {};
      if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
        fail('headers', 'An object of header names to values.');
      else {
        const entries = Object.entries(headers as Record<string, unknown>);
        if (entries.length > 20) fail('headers', 'At most 20 headers.');
        const storedHeaders = (stored as { headers?: Record<string, string> } | undefined)?.headers ?? {};
        const kept: Array<[string, string]> = [];
        for (const [name, value] of entries) {
          if (!HEADER_NAME.test(name) || RESERVED_HEADERS.has(name.toLowerCase()))
            fail(`headers.${name}`, 'Not a header name a channel may set.');
          else if (value === SECRET_MASK) {
            // Values are shown masked (they carry credentials): sent back, the stored one stays.
            if (Object.hasOwn(storedHeaders, name)) kept.push([name, storedHeaders[name] as string]);
            else fail(`headers.${name}`, 'No stored value to keep: give the value.');
          } else if (typeof value !== 'string' || value.length > 4000 || /[\r\n\0]/.test(value))
            fail(`headers.${name}`, 'A header value: text on one line.');
          else kept.push([name, value]);
        }
        if (kept.length) (out as { headers?: Record<string, string> }).headers = Object.fromEntries(kept);
      }
      const secret = raw.secret;
      if (secret !== undefined && secret !== null) {
        if (secret === SECRET_MASK) {
          const kept = (stored as { secret?: string } | undefined)?.secret;
          if (kept) (out as { secret?: string }).secret = kept;
        } else if (typeof secret !== 'string' || secret.length < 1 || secret.length > 500)
          fail('secret', 'Text of 1 to 500 characters.');
        else (out as { secret?: string }).secret = secret;
      }
      Object.assign(out, checkTemplate(raw, fail));
    }
  }
  if (Object.keys(errors).length)
    throw validationError(errors, `Invalid ${type} channel: ${Object.keys(errors).join(', ')}`);
  return out;
}

/**
 * A Slack incoming-webhook URL as shown: its path is the credential, so only the
 * origin is shown (`https://hooks.slack.com/********`).
 */
export function maskedUrl(url: string): string {
  try {
    return `${new URL(url).origin}/${SECRET_MASK}`;
  } catch {
    return SECRET_MASK;
  }
}

/**
 * A channel as shown: what carries a credential is write-only, to its owner too (a
 * webhook's secret and header values, a Slack URL), shown as SECRET_MASK; sending the
 * mask back keeps the stored value (checkConfig).
 */
const present = (row: ChannelRow): Channel => {
  const config = JSON.parse(row.config) as Record<string, unknown>;
  if (typeof config.secret === 'string') config.secret = SECRET_MASK;
  if (config.headers && typeof config.headers === 'object')
    config.headers = Object.fromEntries(Object.keys(config.headers).map((name) => [name, SECRET_MASK]));
  if (URL_IS_SECRET.has(row.type) && typeof config.url === 'string') config.url = maskedUrl(config.url);
  for (const key of ['routing_key', 'api_key'])
    if (typeof config[key] === 'string') config[key] = SECRET_MASK;
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    config,
    owner: row.owner_id,
    decided_by: row.decided_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
};

/**
 * Notification channels, owned like triggers: the owner's, and every one for admins and
 * `manage_triggers` holders. A webhook's secret is write-only.
 */
export class ChannelsService {
  private readonly now: () => Date;

  constructor(
    private readonly repo: ChannelsRepository,
    private readonly deliveries: DeliveriesRepository,
    private readonly senders: Senders,
    private readonly opts: {
      /**
       * Told when where a channel sends was set (by whom: `decided_by`) or a channel went:
       * the triggers that notify it run within that user's rights too (triggers-service.ts).
       */
      onDestinationChanged?: () => void;
      now?: () => Date;
    } = {},
  ) {
    this.now = opts.now ?? (() => new Date());
  }

  async list(
    who: Identity,
    opts: { showAll: boolean; type?: string | undefined },
    page: PageRequest,
  ): Promise<Page<Channel>> {
    const all = opts.showAll && can(who, 'manage_triggers');
    const res = await this.repo.list(
      { ...(all ? {} : { visibleTo: who.userId }), ...(opts.type ? { type: opts.type } : {}) },
      page,
    );
    return { count: res.count, rows: res.rows.map(present) };
  }

  async get(who: Identity, id: number): Promise<Channel> {
    return present(await this.visible(who, id));
  }

  async create(who: Identity, input: { name: string; type: ChannelType; config: object }): Promise<Channel> {
    const config = checkConfig(input.type, input.config);
    const now = this.now().toISOString();
    return present(
      await this.repo.insert({
        name: input.name,
        type: input.type,
        config: JSON.stringify(config),
        owner_id: who.userId,
        decided_by: who.userId,
        created_at: now,
        updated_at: now,
      }),
    );
  }

  async update(who: Identity, id: number, input: ChannelInput): Promise<Channel> {
    const row = await this.visible(who, id);
    const type = input.type ?? row.type;
    const stored = JSON.parse(row.config) as ChannelConfig;
    if (input.type && input.type !== row.type && !input.config)
      throw validationError(
        { config: ['A new type needs its config.'] },
        'config: A new type needs its config.',
      );
    const config = input.config ? checkConfig(type, input.config, stored) : stored;
    // Whoever sets where it sends decides who receives the samples of the triggers that
    // notify it: those then run within the editor's rights too (docs/api/alerting.md).
    const decides = input.type !== undefined || input.config !== undefined;
    const newDecider = decides && row.decided_by !== who.userId;
    // What waits to be sent was read with someone else's rights: not to the editor's address
    // (given up first, so no send in between reads the new one).
    if (newDecider && !who.isAdmin)
      await this.deliveries.giveUpPending(
        id,
        who.userId,
        'not sent: another user changed where the channel sends',
      );
    const updated = await this.repo.update(id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      type,
      config: JSON.stringify(config),
      ...(decides ? { decided_by: who.userId } : {}),
      updated_at: this.now().toISOString(),
    });
    if (!updated) throw notFound('No such channel.');
    if (newDecider) this.opts.onDestinationChanged?.();
    return present(updated);
  }

  async delete(who: Identity, id: number): Promise<void> {
    await this.visible(who, id);
    if (!(await this.repo.delete(id))) throw notFound('No such channel.');
    this.opts.onDestinationChanged?.();
  }

  /** Who last set where each of these channels sends (null: a deleted user); gone ones are left out. */
  /** The type and owner of each of these channels that exists (a schedule's `deliver_to`). */
  async ownersAndTypes(
    ids: readonly number[],
  ): Promise<Map<number, { type: ChannelType; owner_id: number }>> {
    const rows = await this.repo.byIds(ids);
    return new Map(rows.map((r) => [r.id, { type: r.type, owner_id: r.owner_id }]));
  }

  async decidersOf(ids: readonly number[]): Promise<Map<number, number | null>> {
    return new Map((await this.repo.byIds(ids)).map((r) => [r.id, r.decided_by]));
  }

  /** Sends a test notification now and says how it went (bounded by the send timeout). */
  async test(who: Identity, id: number, linkBase: string): Promise<TestOutcome> {
    const row = await this.visible(who, id);
    const n: Notification = {
      kind: 'test',
      trigger: null,
      condition: null,
      group: {},
      count: 0,
      window_seconds: null,
      fired_at: this.now().toISOString(),
      samples: [],
      search_url: `${linkBase}/search`,
    };
    const started = performance.now();
    try {
      await this.senders.send(row.type, JSON.parse(row.config) as ChannelConfig, n, {
        channelId: row.id,
        now: () => this.now().getTime(),
      });
      return { sent: true, error: null, duration_ms: Math.round(performance.now() - started) };
    } catch (err) {
      return {
        sent: false,
        error: err instanceof SendError ? err.message : `failed: ${String(err)}`,
        duration_ms: Math.round(performance.now() - started),
      };
    }
  }

  /** The channels among `ids` that `who` may not use (missing or someone else's). */
  async unusable(who: Identity, ids: readonly number[]): Promise<number[]> {
    const rows = await this.repo.byIds(ids);
    const usable = new Set(
      rows.filter((r) => r.owner_id === who.userId || can(who, 'manage_triggers')).map((r) => r.id),
    );
    return ids.filter((id) => !usable.has(id));
  }

  private async visible(who: Identity, id: number): Promise<ChannelRow> {
    const row = await this.repo.byId(id);
    if (!row || (row.owner_id !== who.userId && !can(who, 'manage_triggers')))
      throw notFound('No such channel.');
    return row;
  }
}
