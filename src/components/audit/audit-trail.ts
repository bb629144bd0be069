import { counter, gauge, type MetricDecl, type MetricsSource } from '../../core/metrics.js';
import type { Identity } from '../../domain/auth/identity.js';
import { permissionDenied } from '../../errors/errors.js';
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
  /** Most records waiting to be written; beyond it new ones are dropped and counted. */
  maxQueued?: number;
  /** How often the queue is written (ms). */
  flushMs?: number;
}

/**
 * The audit trail (API §18). Recording never blocks or fails the request it records: a
 * record goes into a queue, written in batches every `flushMs`; a failed write (a full
 * disk) or a full queue is counted in /metrics, never thrown. Records are read by admins
 * and never changed through the API; only age removes them (`auditRetentionDays`).
 */
export class AuditTrail implements MetricsSource {
  private queue: NewAuditRow[] = [];
  private flushing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private readonly counts = { written: 0, dropped: 0, failed: 0 };

  constructor(
    private readonly repo: AuditRepository,
    private readonly opts: AuditOptions,
  ) {
    this.timer = setInterval(() => void this.flush(), opts.flushMs ?? 200).unref();
  }

  record(entry: AuditEntry): void {
    if (this.queue.length >= (this.opts.maxQueued ?? 100_000)) {
      this.counts.dropped++;
      return;
    }
    this.queue.push({
      at: entry.at.toISOString(),
      user_id: entry.actor.user_id,
      username: entry.actor.username,
      token_key_id: entry.actor.token_key_id,
      address: entry.actor.address,
      action: entry.action,
      target_kind: entry.target?.kind ?? null,
      target_id: entry.target?.id ?? null,
      detail: JSON.stringify(entry.detail),
      outcome: entry.outcome,
    });
  }

  /** Writes what is queued (one batch at a time); what fails to write is counted and let go. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (!this.queue.length) return Promise.resolve();
    const batch = this.queue;
    this.queue = [];
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
    return this.flushing;
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
  async sweep(now = Date.now()): Promise<number> {
    if (this.opts.retentionDays <= 0) return 0;
    return this.repo.deleteBefore(new Date(now - this.opts.retentionDays * 86_400_000).toISOString());
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
        'Audit records lost, by reason: the queue was full, or the store refused the write (a full disk).',
        () => ({ queue_full: this.counts.dropped, write_failed: this.counts.failed }),
        'reason',
      ),
      gauge('logscope_audit_queued', 'Audit records waiting to be written.', () => this.queue.length),
    ];
  }
}

function requireAdmin(who: Identity) {
  if (!who.isAdmin) throw permissionDenied('Only administrators read the audit trail.');
}
