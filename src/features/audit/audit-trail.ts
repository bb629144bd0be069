import type { Identity } from '../../core/identity.js';
import { counter, gauge, type MetricDecl, type MetricsSource } from '../../core/metrics.js';
import { permissionDenied } from '../../errors/errors.js';
import type { ReadAudit, ReadRecord } from '../../query/read-audit.js';
import { AnonymousLimit, capDetail, capText } from './audit-limits.js';
import type { AuditFilter, AuditRepository, AuditRow, NewAuditRow } from './audit-repository.js';
import type { AuditRecord } from './audit-schema.js';

export type AuditOutcome = AuditRecord['outcome'];

/** What a request did, as the audit hook (audit-hook.ts) sees it: a record before it is stored. */
export type AuditEntry = Omit<AuditRecord, 'id' | 'at'> & { at: Date };

export const presentAudit = (r: AuditRow): AuditRecord => ({
  id: r.id,
  at: r.at,
  actor: { user_id: r.user_id, username: r.username, token_key_id: r.token_key_id, address: r.address },
  action: r.action,
  target: r.target_kind === null ? null : { kind: r.target_kind, id: r.target_id },
  detail: JSON.parse(r.detail) as Record<string, unknown>,
  outcome: r.outcome as AuditOutcome,
});

export interface AuditOptions {
  /** Records kept this many days (0: forever). */
  retentionDays: number;
  /** Most records with no signed-in actor kept; the sweep removes the oldest beyond it (0: no bound). */
  anonymousMax?: number;
  /** Most records waiting to be written; beyond it new ones are dropped and counted. */
  maxQueued?: number;
  /** Most bytes of records waiting to be written (default 16 MiB); beyond it likewise. */
  maxQueuedBytes?: number;
  /**
   * Records with no signed-in actor (failed sign-ins, refused requests), per client
   * address (an IPv6 address's /64): on average (default 10 a second) and at once
   * (default 50); beyond it they are dropped and counted, and the next one kept says how
   * many went before it.
   */
  anonymousPerSecond?: number;
  anonymousBurst?: number;
  /** The same for all addresses together (default 50 a second, 500 at once): many addresses are no way around it. */
  anonymousTotalPerSecond?: number;
  anonymousTotalBurst?: number;
  /** How often the queue is written (ms). */
  flushMs?: number;
}

/** A row's size in the queue, near enough: its texts (UTF-16, two bytes a unit) and a fixed part. */
const rowBytes = (row: NewAuditRow) =>
  128 +
  2 *
    [row.username, row.token_key_id, row.address, row.action, row.target_kind, row.target_id, row.detail]
      .map((v) => v?.length ?? 0)
      .reduce((a, b) => a + b, 0);

/**
 * The audit trail (docs/api/audit.md). Recording never blocks or fails the request it records: a
 * record goes into a queue, written in batches every `flushMs`; a failed write (a full
 * disk), a full queue or a rate-limited anonymous record is counted in /metrics, never
 * thrown. Whatever records (the HTTP hook, a service's read), each record is capped in
 * size here (audit-limits.ts). Records are read by admins and never changed through the
 * API; only age removes them (`auditRetentionDays`).
 */
export class AuditTrail implements MetricsSource, ReadAudit {
  private queue: NewAuditRow[] = [];
  private queuedBytes = 0;
  private flushing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private readonly counts = { written: 0, dropped: 0, failed: 0, rateLimited: 0 };
  private readonly anonymous: AnonymousLimit;
  private readonly anonymousTotal: AnonymousLimit;

  constructor(
    private readonly repo: AuditRepository,
    private readonly opts: AuditOptions,
  ) {
    this.timer = setInterval(() => void this.flush(), opts.flushMs ?? 200).unref();
    this.anonymous = new AnonymousLimit({
      perSecond: opts.anonymousPerSecond ?? 10,
      burst: opts.anonymousBurst ?? 50,
    });
    this.anonymousTotal = new AnonymousLimit({
      perSecond: opts.anonymousTotalPerSecond ?? 50,
      burst: opts.anonymousTotalBurst ?? 500,
    });
  }

  /** `detailTextMax`: the longest text kept in the detail (FIELD_MAX_CHARS unless more, up to 1,000). */
  record(entry: AuditEntry, detailTextMax?: number): void {
    let detail = entry.detail as Record<string, unknown>;
    if (entry.actor.user_id === null) {
      // The address's share first, so one flooding address does not use up everyone's.
      const suppressed = this.anonymous.admit(entry.actor.address ?? '');
      if (suppressed === null || this.anonymousTotal.admit('') === null) {
        this.counts.rateLimited++;
        return;
      }
      if (suppressed > 0) detail = { ...detail, suppressed };
    }
    const capped = capDetail(detail, detailTextMax);
    const text = (v: string | null) => {
      if (v === null) return null;
      const c = capText(v);
      if (c.cut) capped.truncated = true;
      return c.text;
    };
    const row: NewAuditRow = {
      at: entry.at.toISOString(),
      user_id: entry.actor.user_id,
      username: text(entry.actor.username),
      token_key_id: text(entry.actor.token_key_id),
      address: text(entry.actor.address),
      action: text(entry.action) ?? '',
      target_kind: text(entry.target?.kind ?? null),
      target_id: text(entry.target?.id ?? null),
      detail: '',
      outcome: entry.outcome,
    };
    row.detail = JSON.stringify(capped);
    const bytes = rowBytes(row);
    if (
      this.queue.length >= (this.opts.maxQueued ?? 100_000) ||
      this.queuedBytes + bytes > (this.opts.maxQueuedBytes ?? 16 * 1048576)
    ) {
      this.counts.dropped++;
      return;
    }
    this.queue.push(row);
    this.queuedBytes += bytes;
  }

  /**
   * A read a service began (QueriesService, EventsService, widget queries): recorded with
   * its reader, the door it came through (`detail.via`) and how it ended.
   */
  read(r: ReadRecord): void {
    this.record({
      at: new Date(),
      actor: {
        user_id: r.who.userId,
        username: r.who.username,
        token_key_id: r.who.keyId,
        address: r.origin.address,
      },
      action: r.action,
      target: r.target,
      detail: { ...r.detail, via: r.origin.via },
      outcome: r.outcome,
    });
  }

  /** Writes what is queued (one batch at a time); what fails to write is counted and let go. */
  async flush(): Promise<void> {
    // What was queued while a batch was being written goes in the next one, so a reader
    // that awaits flush() sees everything recorded before it asked.
    while (this.flushing) await this.flushing;
    if (!this.queue.length) return;
    const batch = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    this.flushing = this.repo
      .insert(batch)
      .then(() => {
        this.counts.written += batch.length;
      })
      .catch(() => {
        // A full store (or any other refusal) loses these records, counted; requests go on.
        this.counts.failed += batch.length;
      })
      .finally(() => {
        this.flushing = null;
      });
    await this.flushing;
  }

  async list(who: Identity, filter: AuditFilter, page: { limit: number; offset: number }) {
    requireAdmin(who);
    await this.flush();
    const res = await this.repo.list(filter, page);
    return { count: res.count, rows: res.rows.map(presentAudit) };
  }

  async *export(who: Identity, filter: AuditFilter): AsyncGenerator<AuditRecord> {
    requireAdmin(who);
    await this.flush();
    for await (const r of this.repo.each(filter)) yield presentAudit(r);
  }

  /** Removes the records older than the retention. */
  /**
   * Removes the records older than the retention, then the anonymous ones beyond
   * `anonymousMax` (oldest first): what nobody signed in wrote is bounded in count, not
   * only in rate, so it cannot grow the disk for the whole retention.
   */
  async sweep(now = Date.now()): Promise<number> {
    let removed = 0;
    if (this.opts.retentionDays > 0)
      removed += await this.repo.deleteBefore(
        new Date(now - this.opts.retentionDays * 86_400_000).toISOString(),
      );
    if (this.opts.anonymousMax !== undefined && this.opts.anonymousMax > 0) {
      await this.flush();
      removed += await this.repo.deleteAnonymousBeyond(this.opts.anonymousMax);
    }
    return removed;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    await this.flush();
  }

  metrics(): MetricDecl[] {
    return [
      counter('logscope_audit_records_total', 'Audit records written.', () => this.counts.written),
      counter(
        'logscope_audit_lost_total',
        "Audit records lost, by reason: the queue was full (records or bytes), the store refused the write (a full disk), or a record with no signed-in actor came past its address's rate.",
        () => ({
          queue_full: this.counts.dropped,
          write_failed: this.counts.failed,
          rate_limited: this.counts.rateLimited,
        }),
        'reason',
      ),
      gauge('logscope_audit_queued', 'Audit records waiting to be written.', () => this.queue.length),
    ];
  }
}

function requireAdmin(who: Identity) {
  if (!who.isAdmin) throw permissionDenied('Only administrators read the audit trail.');
}
