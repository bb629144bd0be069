/**
 * What keeps the audit trail from being a way to fill the disk (issue #54): every record
 * is capped in size whatever recorded it, and records nobody signed in made (failed
 * sign-ins, refused requests) are rate-limited per client address.
 */

/** Longest text kept in a record's field (a username, a detail value), in characters. */
export const FIELD_MAX_CHARS = 256;

/** Largest detail kept, as JSON text (UTF-16 code units, as JavaScript counts them). */
export const DETAIL_MAX_CHARS = 4096;

/** Deepest nesting kept in a detail; below it a value is replaced by a mark. */
const DETAIL_MAX_DEPTH = 6;

/** Most items kept of one array or object in a detail. */
const DETAIL_MAX_ITEMS = 50;

const TRUNCATED_MARK = '…';

/** A text cut to `max` characters (the cut one ends in `…`), and whether it was cut. */
export function capText(text: string, max = FIELD_MAX_CHARS): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  return { text: `${text.slice(0, max - TRUNCATED_MARK.length)}${TRUNCATED_MARK}`, cut: true };
}

/**
 * A detail within the caps: each text cut to `textMax` characters (FIELD_MAX_CHARS unless
 * its recorder keeps more, as an MCP call's arguments, at most 1,000), arrays and objects
 * to DETAIL_MAX_ITEMS entries, nesting to DETAIL_MAX_DEPTH; then, while its JSON is larger
 * than DETAIL_MAX_CHARS, its largest entries are left out (named in `omitted`). A capped
 * detail says so with `truncated: true`.
 */
export function capDetail(
  detail: Record<string, unknown>,
  textMax = FIELD_MAX_CHARS,
): Record<string, unknown> {
  let cut = false;
  const max = Math.min(textMax, 1000);
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') {
      const capped = capText(value, max);
      cut ||= capped.cut;
      return capped.text;
    }
    if (value === null || typeof value !== 'object') return value;
    if (depth >= DETAIL_MAX_DEPTH) {
      cut = true;
      return TRUNCATED_MARK;
    }
    if (Array.isArray(value)) {
      if (value.length > DETAIL_MAX_ITEMS) cut = true;
      return value.slice(0, DETAIL_MAX_ITEMS).map((v) => walk(v, depth + 1));
    }
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length > DETAIL_MAX_ITEMS) cut = true;
    return Object.fromEntries(
      entries.slice(0, DETAIL_MAX_ITEMS).map(([k, v]) => [capText(k).text, walk(v, depth + 1)]),
    );
  };
  const out = walk(detail, 0) as Record<string, unknown>;
  if (JSON.stringify(out).length > DETAIL_MAX_CHARS) {
    cut = true;
    // The largest entries go first, so the small ones (type, via, counts) stay.
    const bySize = Object.keys(out).sort(
      (a, b) => JSON.stringify(out[b]).length - JSON.stringify(out[a]).length,
    );
    const omitted: string[] = [];
    for (const key of bySize) {
      if (JSON.stringify({ ...out, omitted, truncated: true }).length <= DETAIL_MAX_CHARS) break;
      delete out[key];
      omitted.push(key);
    }
    if (omitted.length) out.omitted = omitted;
  }
  if (cut) out.truncated = true;
  return out;
}

export interface AnonymousLimitOptions {
  /** Records a second each address may add, on average. */
  perSecond: number;
  /** Records an address may add at once. */
  burst: number;
  /** Addresses followed at most; beyond it the idle ones are forgotten first. */
  maxAddresses?: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
  /** Records refused since the last one admitted. */
  suppressed: number;
}

/**
 * Whose bucket an address draws from: an IPv4 address, or an IPv6 address's /64 (one
 * host commonly holds a whole /64, so its addresses are one source).
 */
export function sourceOf(address: string): string {
  if (!address.includes(':')) return address;
  const lower = address.toLowerCase().split('%')[0] as string;
  if (lower.startsWith('::ffff:') && lower.includes('.')) return lower.slice('::ffff:'.length);
  const [head = '', tail] = lower.split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * A token bucket per source (sourceOf), for records with no signed-in actor. `admit` says
 * whether a record may be kept and, when it may, how many were refused before it from
 * that source (the record says so, so the trail still shows the flood).
 */
export class AnonymousLimit {
  private readonly buckets = new Map<string, Bucket>();
  private readonly now: () => number;

  constructor(private readonly opts: AnonymousLimitOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Null when refused; otherwise the records refused from that address since the last admitted. */
  admit(address: string): number | null {
    const now = this.now();
    const source = sourceOf(address);
    let bucket = this.buckets.get(source);
    if (!bucket) {
      if (this.buckets.size >= (this.opts.maxAddresses ?? 10_000)) this.forgetIdle(now);
      bucket = { tokens: this.opts.burst, at: now, suppressed: 0 };
      this.buckets.set(source, bucket);
    }
    bucket.tokens = Math.min(
      this.opts.burst,
      bucket.tokens + ((now - bucket.at) / 1000) * this.opts.perSecond,
    );
    bucket.at = now;
    if (bucket.tokens < 1) {
      bucket.suppressed++;
      return null;
    }
    bucket.tokens--;
    const suppressed = bucket.suppressed;
    bucket.suppressed = 0;
    return suppressed;
  }

  /**
   * Forgets the addresses whose bucket has filled again; if none has, the oldest half
   * (their refused counts are lost, as they would be in a full bucket's next record).
   */
  private forgetIdle(now: number) {
    for (const [address, b] of this.buckets)
      if (b.tokens + ((now - b.at) / 1000) * this.opts.perSecond >= this.opts.burst)
        this.buckets.delete(address);
    if (this.buckets.size < (this.opts.maxAddresses ?? 10_000)) return;
    let n = this.buckets.size / 2;
    for (const address of this.buckets.keys()) {
      if (n-- <= 0) break;
      this.buckets.delete(address);
    }
  }
}
