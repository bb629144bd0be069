import type { Static } from 'typebox';
import { can, type Identity } from '../../core/identity.js';
import type { Page, PageRequest } from '../../core/list.js';
import { notFound, validationError } from '../../errors/errors.js';
import type { ChannelRow } from './alerting-table.js';
import type { ChannelConfig, KeepRefused } from './channel-kinds/channel-kind.js';
import { type ChannelKindRegistry, type ChannelType, channelKinds } from './channel-kinds/registry.js';
import type { ChannelsRepository } from './channels-repository.js';
import type { DeliveriesRepository } from './deliveries-repository.js';
import type { Notification } from './notification.js';
import { SendError, type Senders } from './senders.js';

export type Channel = Static<ChannelKindRegistry['schemas']['ChannelSchema']>;

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

/**
 * A channel as shown: what carries a credential is write-only, to its owner too (a
 * webhook's secret and header values, a Slack URL, a routing key), shown masked as its kind
 * says; sending the mask back keeps the stored value (its kind's check).
 */
const present = (row: ChannelRow): Channel => ({
  id: row.id,
  name: row.name,
  // The API stored it: one of its types (the table holds any text since 0027).
  type: row.type as ChannelType,
  config: channelKinds.present(row.type, JSON.parse(row.config) as ChannelConfig),
  owner: row.owner_id,
  decided_by: row.decided_by,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

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
    const config = channelKinds.checkConfig(input.type, input.config);
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
    // A stored credential stays with its destination: its kind, and whoever set it.
    const refused: KeepRefused =
      type !== row.type
        ? "the channel's kind changed"
        : row.decided_by !== who.userId
          ? 'you did not set where this channel sends'
          : null;
    const config = input.config ? channelKinds.checkConfig(type, input.config, stored, refused) : stored;
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
  async ownersAndTypes(ids: readonly number[]): Promise<Map<number, { type: string; owner_id: number }>> {
    const rows = await this.repo.byIds(ids);
    return new Map(rows.map((r) => [r.id, { type: r.type, owner_id: r.owner_id }]));
  }

  async decidersOf(ids: readonly number[]): Promise<Map<number, number | null>> {
    return new Map((await this.repo.byIds(ids)).map((r) => [r.id, r.decided_by]));
  }

  /**
   * Sends a test notification now and says how it went (bounded by the send timeout). Only
   * administrators are told why it failed: to anyone else a test is "sent" or "failed", so a
   * channel is no way to learn whether an internal address answers, nor with what.
   */
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
    let error: string | null = null;
    try {
      await this.senders.send(row.type, JSON.parse(row.config) as ChannelConfig, n, {
        channelId: row.id,
        now: () => this.now().getTime(),
      });
    } catch (err) {
      error = !who.isAdmin ? 'failed' : err instanceof SendError ? err.message : `failed: ${String(err)}`;
    }
    return { sent: error === null, error, duration_ms: Math.round(performance.now() - started) };
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
