import { tooManyRequests } from '../../errors/errors.js';

/** Failures are counted over this sliding window. */
const WINDOW_MS = 60_000;
/** Most keys (usernames plus addresses) remembered; beyond it expired ones are swept first. */
const MAX_KEYS = 100_000;

export interface LoginThrottleOptions {
  /** Failures per username and minute before that username is refused (0: no limit). */
  perUsername: number;
  /** Failures per client address and minute before its failures answer 429 (0: no limit). */
  perAddress: number;
  now?: () => number;
}

/**
 * Password-guessing brake for `POST /api/auth/login`. Only failed attempts count. A
 * username with too many recent failures is refused before its password is checked (from
 * any address), and so is every attempt from an address with too many recent failures
 * (whatever the username: a spray of distinct names would otherwise cost a password hash
 * each). The address limit (100 a minute by default) is well above what an office behind
 * one proxy fails. Kept in memory per process.
 */
export class LoginThrottle {
  /** Key (`u:<username>` / `a:<address>`) → failure times, oldest first. */
  private readonly failures = new Map<string, number[]>();
  private readonly now: () => number;

  constructor(private readonly opts: LoginThrottleOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Seconds to wait before this username may try again; 0 when it may try now. */
  usernameWait(username: string): number {
    return this.wait(`u:${username}`, this.opts.perUsername);
  }

  /** Seconds before this address's failures stop answering 429; 0 when not throttled. */
  addressWait(address: string): number {
    return this.wait(`a:${address}`, this.opts.perAddress);
  }

  /** Records one failed attempt. */
  fail(username: string, address: string): void {
    const now = this.now();
    if (this.failures.size >= MAX_KEYS) this.sweep(now);
    if (this.opts.perUsername > 0) this.add(`u:${username}`, now, this.opts.perUsername);
    if (this.opts.perAddress > 0) this.add(`a:${address}`, now, this.opts.perAddress);
  }

  private add(key: string, now: number, limit: number) {
    const list = this.recent(key, now) ?? [];
    list.push(now);
    // Only the newest `limit` failures decide anything.
    if (list.length > limit) list.splice(0, list.length - limit);
    this.failures.set(key, list);
  }

  private wait(key: string, limit: number): number {
    if (limit <= 0) return 0;
    const now = this.now();
    const list = this.recent(key, now);
    if (!list || list.length < limit) return 0;
    // Free again when the oldest failure that keeps the count at the limit leaves the window.
    const oldest = list[list.length - limit] as number;
    return Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000));
  }

  /** The key's failures still in the window (expired ones dropped), or undefined. */
  private recent(key: string, now: number): number[] | undefined {
    const list = this.failures.get(key);
    if (!list) return undefined;
    const from = now - WINDOW_MS;
    let i = 0;
    while (i < list.length && (list[i] as number) <= from) i++;
    if (i === list.length) {
      this.failures.delete(key);
      return undefined;
    }
    if (i > 0) list.splice(0, i);
    return list;
  }

  private sweep(now: number) {
    for (const key of [...this.failures.keys()]) this.recent(key, now);
    // Still full (a flood of distinct names): forget the oldest keys.
    const excess = this.failures.size - MAX_KEYS / 2;
    if (excess > 0) {
      let n = 0;
      for (const key of this.failures.keys()) {
        if (n++ >= excess) break;
        this.failures.delete(key);
      }
    }
  }
}

/** Password checks at once (each a scrypt on libuv's pool of four threads). */
const CONCURRENT_CHECKS = 2;
/** Checks waiting their turn; beyond it a login answers 429 at once. */
const WAITING_CHECKS = 64;

/**
 * Bounds the password hashing logins cause, whatever their addresses: the thread pool
 * they share with file and DNS work stays mostly free, and a flood waits or is refused
 * instead of queueing without end.
 */
export class PasswordWork {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= CONCURRENT_CHECKS) {
      if (this.waiting.length >= WAITING_CHECKS)
        throw tooManyRequests(1, 'Too many logins at once; retry in a second.');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
