import { type Log, silentLog } from '../../core/log.js';
import { counter, type MetricDecl } from '../../core/metrics.js';
import type { Release, ReleaseGate } from '../streams/index.js';
import type { ChannelRow, DeliveryRow } from './alerting-table.js';
import type { ChannelsRepository } from './channels-repository.js';
import type { DeliveriesRepository } from './deliveries-repository.js';
import { dedupKey, type Notification } from './notification.js';
import type { ReportNotice, StoredReportNotice } from './report-notice.js';
import { type ChannelConfig, SendError, type Senders } from './senders.js';

export interface DeliveryQueueOptions {
  /** How long a process holds a delivery it is sending (ms); longer than a send may take. */
  leaseMs?: number;
  /** The first retry comes this long after the first failure (ms); then doubling. */
  firstRetryMs?: number;
  /** Retries at most this far apart (ms). */
  maxRetryMs?: number;
  /** A delivery still failing this long after it was made is given up (ms). */
  giveUpAfterMs?: number;
  /** How often due deliveries are looked for when nothing wakes the queue (ms). */
  pollMs?: number;
  /** Most sends under way at once. */
  maxInFlight?: number;
  now?: () => number;
  /** Where a failing store is told (sending failures are the deliveries' own record). */
  log?: Log;
}

/**
 * Gives a scheduled report's delivery its link when it is sent (reports' link records):
 * the same link on every attempt of one delivery; null when it was revoked.
 */
export type ReportLinker = (
  n: StoredReportNotice,
  delivery: { id: number; runAs: number | null },
) => Promise<{ link: string; link_expires_at: string } | null>;

/**
 * What a delivery releases, for the gate (release-gate.ts): a report holds all its owner may
 * read; a notification names its samples. A test names nothing.
 */
function releaseOf(row: DeliveryRow, channel: ChannelRow, n: Notification | StoredReportNotice): Release {
  const base = { principal: row.run_as, deciders: [channel.decided_by] };
  return n.kind === 'report'
    ? { ...base, wholeScope: true }
    : { ...base, events: n.samples.map((s) => s.ev_id) };
}

/**
 * The durable queue of notifications. `enqueue` writes a pending row per channel and
 * wakes the sender; the sender takes due rows under a lease (so a cluster's nodes share
 * the work and a dead node's rows are taken over when its lease ends), sends each once,
 * and marks it sent, or schedules the next attempt (exponential backoff: 4 s, 8 s, …, at
 * most 1 h apart), or after 24 h marks it failed. Sending never blocks the caller: a
 * slow receiver slows only its own delivery.
 */
export class DeliveryQueue {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  /** Sends under way: each runs on its own, so a receiver that hangs holds up no other. */
  private readonly inFlight = new Set<Promise<void>>();
  private again = false;
  private closed = false;
  private readonly o: Required<Omit<DeliveryQueueOptions, 'log'>>;
  private readonly log: Log;
  private linker: ReportLinker | undefined;
  /** Attempts that failed (each is retried or given up). */
  failedAttempts = 0;
  sentCount = 0;

  metrics(): MetricDecl[] {
    return [
      counter(
        'logscope_deliveries_sent_total',
        'Notifications delivered by this process.',
        () => this.sentCount,
      ),
      counter(
        'logscope_delivery_failed_attempts_total',
        'Delivery attempts that failed (each is retried, or given up after 24 h).',
        () => this.failedAttempts,
      ),
    ];
  }

  constructor(
    private readonly repo: DeliveriesRepository,
    private readonly channels: ChannelsRepository,
    private readonly senders: Senders,
    private readonly gate: Pick<ReleaseGate, 'refusal'>,
    opts: DeliveryQueueOptions = {},
  ) {
    this.o = {
      leaseMs: opts.leaseMs ?? 60_000,
      firstRetryMs: opts.firstRetryMs ?? 4_000,
      maxRetryMs: opts.maxRetryMs ?? 3_600_000,
      giveUpAfterMs: opts.giveUpAfterMs ?? 24 * 3_600_000,
      pollMs: opts.pollMs ?? 1_000,
      maxInFlight: opts.maxInFlight ?? 100,
      now: opts.now ?? Date.now,
    };
    this.log = opts.log ?? silentLog;
  }

  /** Who gives reports' deliveries their links (the reports feature, built after this one). */
  linkReportsWith(linker: ReportLinker): void {
    this.linker = linker;
  }

  /**
   * Starts sending. `alone`: no other process shares this store, so leases left by an
   * earlier run (killed mid-send) are let go at once instead of waiting for them to end.
   */
  async start(alone: boolean): Promise<void> {
    if (alone) await this.repo.releaseAll();
    this.timer = setInterval(() => this.wake(), this.o.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Writes a pending delivery per channel (durable once this resolves) and wakes the sender. */
  /** `runAs`: the user whose rights made the notification (who may see its samples). */
  async enqueue(
    n: Notification,
    triggerId: number | null,
    channelIds: readonly number[],
    runAs: number | null = null,
  ): Promise<void> {
    if (!channelIds.length) return;
    // A channel deleted since the trigger named it is left out; the others still get theirs.
    const existing = new Set((await this.channels.byIds(channelIds)).map((c) => c.id));
    channelIds = channelIds.filter((id) => existing.has(id));
    if (!channelIds.length) return;
    const at = this.o.now();
    const payload = JSON.stringify(n);
    // Conditions that recover: a trigger and group's notifications go out in order.
    const recovers = n.condition?.type === 'threshold' || n.condition?.type === 'pattern_rate';
    const sequenceKey = recovers && n.kind !== 'test' ? dedupKey(n) : null;
    await this.repo.insert(
      channelIds.map((channel_id) => ({
        trigger_id: triggerId,
        channel_id,
        status: 'pending' as const,
        attempts: 0,
        last_error: null,
        created_at: new Date(at).toISOString(),
        sent_at: null,
        next_attempt_at: at,
        lease_until: 0,
        payload,
        run_as: runAs,
        sequence_key: sequenceKey,
      })),
    );
    this.wake();
  }

  /**
   * Writes a pending delivery of a scheduled report per channel (report-notice.ts) and wakes
   * the sender; answers each channel's delivery id. The caller checked the channels.
   */
  async enqueueReport(
    n: StoredReportNotice,
    channelIds: readonly number[],
    runAs: number,
  ): Promise<Array<{ channel_id: number; delivery_id: number }>> {
    const at = this.o.now();
    const payload = JSON.stringify(n);
    const made: Array<{ channel_id: number; delivery_id: number }> = [];
    for (const channel_id of channelIds) {
      const delivery_id = await this.repo.insertOne({
        trigger_id: null,
        channel_id,
        status: 'pending',
        attempts: 0,
        last_error: null,
        created_at: new Date(at).toISOString(),
        sent_at: null,
        next_attempt_at: at,
        lease_until: 0,
        payload,
        run_as: runAs,
        schedule_id: n.schedule.id,
        report_id: n.report.id,
      });
      made.push({ channel_id, delivery_id });
    }
    this.wake();
    return made;
  }

  /** Where these deliveries stand (a scheduled run waits for each one's first attempt). */
  statusOf(ids: readonly number[]) {
    return this.repo.statusOf(ids);
  }

  /** Looks for due deliveries now (at most one pass at a time; a wake during a pass runs another). */
  wake(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((err: unknown) => this.log.error({ err: String(err) }, 'deliveries not sent'))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Claims what is due, as far as there is room, and starts sending each without waiting. */
  private async pass(): Promise<void> {
    for (;;) {
      const room = this.o.maxInFlight - this.inFlight.size;
      if (room <= 0 || this.closed) return;
      const rows = await this.repo.claimDue(this.o.now(), this.o.leaseMs, Math.min(room, 50));
      if (!rows.length) return;
      for (const row of rows) {
        const sending: Promise<void> = this.deliver(row)
          .catch((err: unknown) =>
            this.log.error({ err: String(err), delivery: row.id }, 'delivery not recorded'),
          )
          .finally(() => {
            this.inFlight.delete(sending);
            // Room for another: look again (a pass is cheap when nothing is due).
            this.wake();
          });
        this.inFlight.add(sending);
      }
    }
  }

  private async deliver(row: DeliveryRow): Promise<void> {
    const attempts = row.attempts + 1;
    const channel = await this.channels.byId(row.channel_id);
    let error: string | null = null;
    let final = false;
    if (!channel) error = 'the channel was deleted';
    else {
      try {
        await this.senders.send(
          channel.type,
          JSON.parse(channel.config) as ChannelConfig,
          await this.released(row, channel),
        );
      } catch (err) {
        error = err instanceof SendError ? err.message : `failed: ${String(err)}`;
        final = err instanceof SendError && err.final;
      }
    }
    const now = this.o.now();
    if (error === null) {
      this.sentCount++;
      await this.repo.sent(row.id, attempts, new Date(now).toISOString());
      return;
    }
    this.failedAttempts++;
    const delay = Math.min(this.o.firstRetryMs * 2 ** (attempts - 1), this.o.maxRetryMs);
    const age = now - Date.parse(row.created_at);
    if (!channel || final || age + delay > this.o.giveUpAfterMs)
      await this.repo.failed(row.id, attempts, error);
    else await this.repo.retry(row.id, attempts, error, now + delay);
  }

  /**
   * The payload as it may leave now, or a final SendError saying why not: the gate is asked
   * at every attempt (rights, owners and destinations change between attempts), and a report
   * gets its link only now, so no stored payload opens anything by itself.
   */
  private async released(row: DeliveryRow, channel: ChannelRow): Promise<Notification | ReportNotice> {
    const n = JSON.parse(row.payload) as Notification | StoredReportNotice;
    if (n.kind === 'test') return n;
    const refused = await this.gate.refusal(releaseOf(row, channel, n));
    if (refused) throw new SendError(refused, true);
    if (n.kind !== 'report') return n;
    const link = this.linker ? await this.linker(n, { id: row.id, runAs: row.run_as }) : null;
    if (!link) throw new SendError('not sent: its link was revoked', true);
    return { ...n, ...link };
  }

  /**
   * Stops sending: waits for the pass under way, and for sends under way for at most
   * `graceMs` (a receiver that hangs must not hold up a shutdown; its delivery keeps its
   * lease and is sent again after the restart).
   */
  async close(graceMs = 2000): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.running;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.inFlight),
      new Promise((r) => {
        timer = setTimeout(r, graceMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Resolves once nothing is being sent (tests). */
  async idle(): Promise<void> {
    while (this.running || this.inFlight.size) await (this.running ?? Promise.all(this.inFlight));
  }
}
