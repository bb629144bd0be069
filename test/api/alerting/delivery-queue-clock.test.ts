/**
 * The delivery queue's retry schedule on a clock the test moves (the queue's `now`), over a
 * real SQLite metadata store: the first retry 4 s after a failure, then doubling, at most
 * 1 h apart, and given up once the next retry would come more than 24 h after the
 * notification was made. Nothing waits on the wall clock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChannelsRepository } from '../../../src/features/alerting/channels-repository.js';
import { DeliveriesRepository } from '../../../src/features/alerting/deliveries-repository.js';
import { DeliveryQueue } from '../../../src/features/alerting/delivery-queue.js';
import type { Notification } from '../../../src/features/alerting/notification.js';
import { SendError, type Senders } from '../../../src/features/alerting/senders.js';
import { UsersRepository } from '../../../src/features/identity/users-repository.js';
import { COMPONENTS } from '../../../src/features/index.js';
import { migrationsOf } from '../../../src/features/root.js';
import { type MetadataDb, openMetadataDb } from '../../../src/metadata/database.js';

const T0 = Date.UTC(2024, 0, 1, 12);
const SECOND = 1000;
const HOUR = 3_600_000;

const notification: Notification = {
  kind: 'fire',
  trigger: { id: 1, name: 'errors', severity: 'high', description: '' },
  condition: { type: 'match' },
  group: {},
  count: 1,
  window_seconds: null,
  fired_at: new Date(T0).toISOString(),
  samples: [],
  search_url: null,
};

/** This file is about the queue's clock: whoever decided a delivery may send it. */
const everyRelease = { refusal: async () => null };

describe('delivery queue retries (moved clock, SQLite)', () => {
  let dir: string;
  let meta: MetadataDb;
  let deliveries: DeliveriesRepository;
  let channels: ChannelsRepository;
  let channelId: number;
  let clock: number;
  /** The clock at each send attempt. */
  let attempts: number[];
  let receiverUp: boolean;
  let queue: DeliveryQueue;

  const senders = {
    send: async () => {
      attempts.push(clock);
      if (!receiverUp) throw new SendError('HTTP 503 from the receiver');
    },
  } as unknown as Senders;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'logscope-delivery-clock-'));
    meta = await openMetadataDb({ databaseUrl: '', dataDir: dir, migrations: migrationsOf(COMPONENTS) });
    deliveries = new DeliveriesRepository(meta.db);
    channels = new ChannelsRepository(meta.db);
    const at = new Date(T0).toISOString();
    const owner = await new UsersRepository(meta.db).insert({
      username: 'owner',
      password_hash: null,
      is_admin: 1,
      permissions: '[]',
      created_at: at,
    });
    const channel = await channels.insert({
      name: 'hook',
      type: 'webhook',
      config: JSON.stringify({ url: 'http://127.0.0.1:9/' }),
      owner_id: owner.id,
      created_at: at,
      updated_at: at,
    });
    channelId = channel.id;
    clock = T0;
    attempts = [];
    receiverUp = false;
    queue = new DeliveryQueue(deliveries, channels, senders, everyRelease, { now: () => clock });
  });

  afterEach(async () => {
    vi.useRealTimers();
    await queue.close();
    await meta.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Moves the clock to `at` and lets the queue send whatever is due then. */
  async function at(ms: number): Promise<void> {
    clock = ms;
    queue.wake();
    await queue.idle();
  }

  async function onlyDelivery() {
    const page = await deliveries.list({}, { limit: 10, offset: 0, ordering: [] });
    expect(page.rows).toHaveLength(1);
    return page.rows[0]!;
  }

  it('retries 4 s after the first failure, then 8 s, 16 s, 32 s, and marks it sent once through', async () => {
    await queue.enqueue(notification, null, [channelId]);
    await queue.idle();
    expect(attempts).toEqual([T0]);
    let row = await onlyDelivery();
    expect(row).toMatchObject({ status: 'pending', attempts: 1, last_error: 'HTTP 503 from the receiver' });
    expect(row.next_attempt_at).toBe(T0 + 4 * SECOND);

    // Not a millisecond early.
    await at(T0 + 4 * SECOND - 1);
    expect(attempts).toHaveLength(1);
    await at(T0 + 4 * SECOND);
    expect(attempts).toEqual([T0, T0 + 4 * SECOND]);
    expect((await onlyDelivery()).next_attempt_at).toBe(T0 + 12 * SECOND);

    await at(T0 + 12 * SECOND - 1);
    expect(attempts).toHaveLength(2);
    await at(T0 + 12 * SECOND);
    await at(T0 + 28 * SECOND);
    expect(attempts).toEqual([T0, T0 + 4 * SECOND, T0 + 12 * SECOND, T0 + 28 * SECOND]);
    row = await onlyDelivery();
    expect(row).toMatchObject({ status: 'pending', attempts: 4 });
    expect(row.next_attempt_at).toBe(T0 + 60 * SECOND);
    expect(queue.failedAttempts).toBe(4);

    receiverUp = true;
    await at(T0 + 60 * SECOND);
    row = await onlyDelivery();
    expect(row).toMatchObject({ status: 'sent', attempts: 5, last_error: null });
    expect(row.sent_at).toBe(new Date(T0 + 60 * SECOND).toISOString());
    expect(queue.sentCount).toBe(1);
    // Sent is final: no attempt however late.
    await at(T0 + 48 * HOUR);
    expect(attempts).toHaveLength(5);
  });

  it('caps the gap at 1 h and gives up once the next retry would pass 24 h after it was made', async () => {
    await queue.enqueue(notification, null, [channelId]);
    await queue.idle();
    // Follow the schedule: each time, the clock goes to the row's next attempt.
    for (let i = 0; i < 100; i++) {
      const row = await onlyDelivery();
      if (row.status !== 'pending') break;
      await at(row.next_attempt_at);
    }
    const gaps = attempts.slice(1).map((t, i) => t - (attempts[i] as number));
    // 4 s doubling: 4, 8, …, 2048 s (ten gaps), then 4096 s is capped at 3600 s.
    expect(gaps.slice(0, 10)).toEqual([4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048].map((s) => s * SECOND));
    expect(new Set(gaps.slice(10))).toEqual(new Set([HOUR]));
    // The 10 doubling gaps take 4092 s; attempt 33 comes at 4092 s + 22 h = 83,292 s, and a
    // retry an hour later (86,892 s) would pass 24 h (86,400 s): given up there.
    expect(attempts).toHaveLength(33);
    expect(attempts.at(-1)).toBe(T0 + 4092 * SECOND + 22 * HOUR);
    const row = await onlyDelivery();
    expect(row).toMatchObject({ status: 'failed', attempts: 33, last_error: 'HTTP 503 from the receiver' });
    expect(queue.failedAttempts).toBe(33);
    // Failed is final, even once the receiver is back.
    receiverUp = true;
    await at(T0 + 48 * HOUR);
    expect(attempts).toHaveLength(33);
    expect((await onlyDelivery()).status).toBe('failed');
  });

  it('sends a due retry on its own poll, without an enqueue or a wake (fake timers)', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    queue = new DeliveryQueue(deliveries, channels, senders, everyRelease, {
      now: () => clock,
      pollMs: 1000,
    });
    await queue.start(true);
    await queue.enqueue(notification, null, [channelId]);
    await queue.idle();
    expect(attempts).toEqual([T0]);
    receiverUp = true;
    clock = T0 + 4 * SECOND;
    await queue.idle();
    expect(attempts).toHaveLength(1);
    vi.advanceTimersByTime(1000);
    await queue.idle();
    expect(attempts).toEqual([T0, T0 + 4 * SECOND]);
    expect((await onlyDelivery()).status).toBe('sent');
  });
});
