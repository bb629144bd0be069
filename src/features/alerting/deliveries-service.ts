import type { Static } from 'typebox';
import { can, type Identity } from '../../core/identity.js';
import type { Page, PageRequest } from '../../core/list.js';
import type { DeliveryRow, DeliveryStatus } from './alerting-table.js';
import type { ChannelKindRegistry, ChannelType } from './channel-kinds/registry.js';
import type { DeliveriesRepository } from './deliveries-repository.js';

export type Delivery = Static<ChannelKindRegistry['schemas']['DeliverySchema']>;

/**
 * A notification as someone shows it who may not see what it tells of events: whoever
 * decided the trigger chose its destination, not this reader (docs/api/alerting.md).
 */
const withheld = (payload: Record<string, unknown>): Record<string, unknown> => {
  const { pattern: _pattern, ...rest } = payload;
  // pattern_rate: what the pattern did and its baseline are counts of the same events.
  const rate = 'change' in payload ? { change: null, baseline_count: null, ratio: null } : {};
  return { ...rest, ...rate, group: {}, count: null, samples: [], search_url: null, withheld: true };
};

/** A report's attachment is shown by its name and size, never its bytes. */
const withoutBytes = (payload: Record<string, unknown>): Record<string, unknown> => {
  const a = payload.attachment as { filename: string; media_type: string; content_base64: string } | null;
  if (!a) return payload;
  const size = Math.floor((a.content_base64.length * 3) / 4);
  return { ...payload, attachment: { filename: a.filename, media_type: a.media_type, size } };
};

const present = (row: DeliveryRow & { channel_type: string }, who: Identity): Delivery => {
  const payload = withoutBytes(JSON.parse(row.payload) as Record<string, unknown>);
  const whole = who.isAdmin || (row.run_as !== null && row.run_as === who.userId);
  return {
    id: row.id,
    trigger_id: row.trigger_id,
    schedule_id: row.schedule_id,
    report_id: row.report_id,
    channel_id: row.channel_id,
    // Its channel's type, which the API stored: one of its types.
    channel_type: row.channel_type as ChannelType,
    status: row.status,
    attempts: row.attempts,
    last_error: row.last_error,
    created_at: row.created_at,
    sent_at: row.sent_at,
    next_attempt_at: row.status === 'pending' ? new Date(row.next_attempt_at).toISOString() : null,
    run_as: row.run_as,
    payload: whole ? payload : withheld(payload),
  };
};

/**
 * The deliveries list: yours (of your triggers or channels); everyone's for manage_triggers
 * holders. A payload's samples, group, count and pattern are shown to administrators and
 * to the user whose rights made it (`run_as`), to nobody else: they may not read them.
 */
export class DeliveriesService {
  constructor(private readonly repo: DeliveriesRepository) {}

  async list(
    who: Identity,
    filter: {
      triggerId?: number | undefined;
      scheduleId?: number | undefined;
      channelId?: number | undefined;
      status?: DeliveryStatus | undefined;
    },
    page: PageRequest,
  ): Promise<Page<Delivery>> {
    const res = await this.repo.list(
      {
        ...(filter.triggerId !== undefined ? { triggerId: filter.triggerId } : {}),
        ...(filter.scheduleId !== undefined ? { scheduleId: filter.scheduleId } : {}),
        ...(filter.channelId !== undefined ? { channelId: filter.channelId } : {}),
        ...(filter.status !== undefined ? { status: filter.status } : {}),
        ...(can(who, 'manage_triggers') ? {} : { visibleTo: who.userId }),
      },
      page,
    );
    return { count: res.count, rows: res.rows.map((row) => present(row, who)) };
  }
}
