import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { PublicUrl } from '../../config/public-url.js';
import { createError, notFound } from '../../errors/errors.js';
import type { Database } from '../../metadata/schema.js';
import type { AuditTrail } from '../audit/index.js';
import type { ReleaseGate } from '../streams/index.js';
import type { ReportLinkRow } from './report-links-table.js';

/** The name of the signing key in `server_secrets`. */
const KEY_NAME = 'report-link-key';
const EXP_TEXT = /^[0-9]{1,12}$/;
const SIG_TEXT = /^[A-Za-z0-9_-]{43}$/;
/** Tries at another expiry second when one report's link already has this one. */
const EXP_TRIES = 20;

export interface ReportLinksOptions {
  /** `reportLinkSecret`: replaces the stored key when set. */
  secret: string;
  /** `reportLinkSeconds`: the longest a link lives. */
  maxSeconds: number;
  publicUrl: PublicUrl;
  gate: Pick<ReleaseGate, 'refusal'>;
  audit: Pick<AuditTrail, 'record'>;
  now?: () => number;
}

/** A link as its report's owner and admins see it: never its URL, which only its maker got. */
export interface ReportLink {
  id: number;
  report_id: number;
  expires_at: string;
  created_at: string;
  created_by: number | null;
  delivery_id: number | null;
  revoked_at: string | null;
}

const present = (r: ReportLinkRow): ReportLink => ({
  id: r.id,
  report_id: r.report_id,
  expires_at: new Date(r.exp * 1000).toISOString(),
  created_at: r.created_at,
  created_by: r.created_by,
  delivery_id: r.delivery_id,
  revoked_at: r.revoked_at,
});

/**
 * Links to a report's file that work without a token (docs/api/schedules.md): the path carries
 * its expiry and an HMAC-SHA256 of `"{id}:{exp}"`. The key is made once and kept in the
 * metadata store, so every node of a cluster signs and checks alike; `reportLinkSecret`
 * replaces it. Each link handed out is recorded (ADR 0034): minted when asked for or when a
 * delivery is sent, audited, revocable one by one, and followed only while the release gate
 * lets its report's owner share it. A link is judged before its report is looked up, so a
 * forged one learns nothing of which reports exist.
 */
export class ReportLinks {
  private key: Promise<Buffer> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly opts: ReportLinksOptions,
  ) {}

  get maxSeconds(): number {
    return this.opts.maxSeconds;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private signingKey(): Promise<Buffer> {
    this.key ??= this.loadKey().catch((err: unknown) => {
      this.key = undefined;
      throw err;
    });
    return this.key;
  }

  private async loadKey(): Promise<Buffer> {
    if (this.opts.secret) return Buffer.from(this.opts.secret, 'utf8');
    // Two nodes starting at once: the first insert wins and both read it back.
    await this.db
      .insertInto('server_secrets')
      .values({ name: KEY_NAME, value: randomBytes(32).toString('base64url') })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const row = await this.db
      .selectFrom('server_secrets')
      .select('value')
      .where('name', '=', KEY_NAME)
      .executeTakeFirstOrThrow();
    return Buffer.from(row.value, 'base64url');
  }

  private async sign(id: number, exp: number): Promise<string> {
    return createHmac('sha256', await this.signingKey())
      .update(`${id}:${exp}`)
      .digest('base64url');
  }

  private async urlOf(row: { report_id: number; exp: number }) {
    const sig = await this.sign(row.report_id, row.exp);
    return {
      url: `${this.opts.publicUrl.get()}/api/reports/${row.report_id}/file?exp=${row.exp}&sig=${sig}`,
      expires_at: new Date(row.exp * 1000).toISOString(),
    };
  }

  /**
   * Mints and records a link to report `id`'s file valid `seconds` (at most `maxSeconds`;
   * default the maximum). The caller audits a link asked for over the API (audit-hook.ts).
   */
  async link(
    id: number,
    seconds = this.opts.maxSeconds,
    by: { userId: number | null; deliveryId?: number } = { userId: null },
  ): Promise<{ id: number; url: string; expires_at: string }> {
    const latest = Math.floor(this.now() / 1000) + Math.min(seconds, this.opts.maxSeconds);
    for (let exp = latest; exp > latest - EXP_TRIES; exp--) {
      const made = await this.db
        .insertInto('report_links')
        .values({
          report_id: id,
          exp,
          created_at: new Date(this.now()).toISOString(),
          created_by: by.userId,
          delivery_id: by.deliveryId ?? null,
          revoked_at: null,
        })
        .onConflict((oc) => oc.columns(['report_id', 'exp']).doNothing())
        .returning('id')
        .executeTakeFirst();
      if (made) return { id: made.id, ...(await this.urlOf({ report_id: id, exp })) };
    }
    throw createError(409, 'conflict', 'Too many links to this report at once: try again in a second.');
  }

  /**
   * A scheduled report's delivery's link: made at its first attempt (audited as its owner's,
   * `via: delivery`), the same on every later one; null once revoked.
   */
  async forDelivery(
    reportId: number,
    delivery: { id: number; runAs: number | null },
  ): Promise<{ link: string; link_expires_at: string } | null> {
    const kept = await this.db
      .selectFrom('report_links')
      .selectAll()
      .where('delivery_id', '=', delivery.id)
      .executeTakeFirst();
    if (kept) {
      if (kept.revoked_at !== null) return null;
      const { url, expires_at } = await this.urlOf(kept);
      return { link: url, link_expires_at: expires_at };
    }
    const made = await this.link(reportId, this.opts.maxSeconds, { userId: null, deliveryId: delivery.id });
    this.opts.audit.record({
      at: new Date(this.now()),
      actor: { user_id: delivery.runAs, username: null, token_key_id: null, address: null },
      action: 'report.link',
      target: { kind: 'report', id: String(reportId) },
      detail: { via: 'delivery', delivery_id: delivery.id, link_id: made.id, expires_at: made.expires_at },
      outcome: 'ok',
    });
    return { link: made.url, link_expires_at: made.expires_at };
  }

  /** Report `id`'s links, newest first. */
  async list(id: number): Promise<ReportLink[]> {
    const rows = await this.db
      .selectFrom('report_links')
      .selectAll()
      .where('report_id', '=', id)
      .orderBy('id', 'desc')
      .execute();
    return rows.map(present);
  }

  /** Revokes one link of report `id` (404 when it has no such link); revoking twice is no change. */
  async revoke(id: number, linkId: number): Promise<void> {
    const row = await this.db
      .selectFrom('report_links')
      .select(['id', 'revoked_at'])
      .where('id', '=', linkId)
      .where('report_id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('No such link.');
    if (row.revoked_at === null)
      await this.db
        .updateTable('report_links')
        .set({ revoked_at: new Date(this.now()).toISOString() })
        .where('id', '=', linkId)
        .execute();
  }

  /**
   * Checks a link's `exp` and `sig` for report `id`: a 403 when altered, missing, expired or
   * revoked, or when the report's owner may no longer share it (disabled); a 404 when the
   * report is gone.
   */
  async check(id: number, exp: string | undefined, sig: string): Promise<void> {
    const invalid = () => createError(403, 'link_invalid', 'This link is not valid: it was altered or cut.');
    if (exp === undefined || !EXP_TEXT.test(exp) || !SIG_TEXT.test(sig)) throw invalid();
    const expected = Buffer.from(await this.sign(id, Number(exp)), 'utf8');
    const given = Buffer.from(sig, 'utf8');
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid();
    if (Number(exp) * 1000 <= this.now())
      throw createError(403, 'link_expired', 'This link has expired; ask for a new one.');
    const report = await this.db
      .selectFrom('reports')
      .select('owner_id')
      .where('id', '=', id)
      .executeTakeFirst();
    if (!report) throw notFound('No such report.');
    const record = await this.db
      .selectFrom('report_links')
      .select('revoked_at')
      .where('report_id', '=', id)
      .where('exp', '=', Number(exp))
      .executeTakeFirst();
    if (!record) throw invalid();
    const revoked = () => createError(403, 'link_revoked', 'This link was revoked; ask for a new one.');
    if (record.revoked_at !== null) throw revoked();
    if (await this.opts.gate.refusal({ principal: report.owner_id })) throw revoked();
  }
}
