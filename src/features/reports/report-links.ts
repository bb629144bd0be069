import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { PublicUrl } from '../../config/public-url.js';
import { createError } from '../../errors/errors.js';
import type { Database } from '../../metadata/schema.js';

/** The name of the signing key in `server_secrets`. */
const KEY_NAME = 'report-link-key';
const EXP_TEXT = /^[0-9]{1,12}$/;
const SIG_TEXT = /^[A-Za-z0-9_-]{43}$/;

export interface ReportLinksOptions {
  /** `reportLinkSecret`: replaces the stored key when set. */
  secret: string;
  /** `reportLinkSeconds`: the longest a link lives. */
  maxSeconds: number;
  publicUrl: PublicUrl;
  now?: () => number;
}

/**
 * Links to a report's file that work without a token (docs/api/schedules.md): the path carries its
 * expiry and an HMAC-SHA256 of `"{id}:{exp}"`. The key is made once and kept in the
 * metadata store, so every node of a cluster signs and checks alike; `reportLinkSecret`
 * replaces it. A link is judged before its report is looked up, so a forged one learns
 * nothing of which reports exist.
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

  /** A link to report `id`'s file valid `seconds` (at most `maxSeconds`; default the maximum). */
  async link(id: number, seconds = this.opts.maxSeconds): Promise<{ url: string; expires_at: string }> {
    const exp = Math.floor(this.now() / 1000) + Math.min(seconds, this.opts.maxSeconds);
    const sig = await this.sign(id, exp);
    return {
      url: `${this.opts.publicUrl.get()}/api/reports/${id}/file?exp=${exp}&sig=${sig}`,
      expires_at: new Date(exp * 1000).toISOString(),
    };
  }

  /** Checks a link's `exp` and `sig` for report `id`: a 403 when altered, missing or expired. */
  async check(id: number, exp: string | undefined, sig: string): Promise<void> {
    const invalid = () => createError(403, 'link_invalid', 'This link is not valid: it was altered or cut.');
    if (exp === undefined || !EXP_TEXT.test(exp) || !SIG_TEXT.test(sig)) throw invalid();
    const expected = Buffer.from(await this.sign(id, Number(exp)), 'utf8');
    const given = Buffer.from(sig, 'utf8');
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid();
    if (Number(exp) * 1000 <= this.now())
      throw createError(403, 'link_expired', 'This link has expired; ask for a new one.');
  }
}
