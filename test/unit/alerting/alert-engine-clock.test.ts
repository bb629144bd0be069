/**
 * The alert engine on a clock the test moves (its `now`): threshold windows slide, a group
 * fires when its condition starts to hold and again only after it recovered (and its
 * cooldown passed), `lt`/`lte` fire on silence only after a whole window watched, and a
 * notified firing's recovery is told. Then the notifier's ticker under fake timers: it
 * slides the windows by itself and queues the firing's delivery.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { emptyEvent, type NormalisedEvent } from '../../../src/core/event.js';
import { silentLog } from '../../../src/core/log.js';
import { AlertEngine, type AlertTrigger, type Firing } from '../../../src/features/alerting/alert-engine.js';
import type { ChannelsService } from '../../../src/features/alerting/channels-service.js';
import type { DeliveryQueue } from '../../../src/features/alerting/delivery-queue.js';
import type { ThresholdCondition } from '../../../src/features/alerting/threshold.js';
import { AlertNotifier } from '../../../src/features/triggers/alert-notifier.js';
import type { TriggerRow } from '../../../src/features/triggers/triggers-table.js';
import type { LeasesRepository } from '../../../src/metadata/leases-repository.js';

/** A whole second, so second boundaries are easy to read. */
const T0 = Date.UTC(2024, 0, 1, 12);
const S = 1000;

let seq = 0;
function event(host: string | null = null): NormalisedEvent {
  seq++;
  return emptyEvent({ ev_id: `ev-${seq}`, ts: T0, received_at: T0, host, message: `event ${seq}` });
}

function trigger(condition: Omit<ThresholdCondition, 'type'>, cooldown_seconds = 0): AlertTrigger {
  return {
    id: 7,
    name: 'errors',
    severity: 'high',
    description: '',
    query: 'severity:error',
    condition: { type: 'threshold', ...condition },
    notify: [1],
    cooldown_seconds,
    create_task: false,
    version: 'v1',
    createdAtMs: T0,
  };
}

/** An engine on a moved clock, with what it fired as `kind group count` lines. */
function engineAt(t: AlertTrigger) {
  const clock = { now: T0 };
  const firings: Firing[] = [];
  const engine = new AlertEngine({
    now: () => clock.now,
    linkBase: () => 'http://logscope.test',
    onFiring: (f) => firings.push(f),
  });
  engine.setTriggers([t]);
  const said = () =>
    firings.map(
      (f) => `${f.notification.kind} ${JSON.stringify(f.notification.group)} ${f.notification.count}`,
    );
  const observe = (at: number, events: NormalisedEvent[]) => {
    clock.now = at;
    engine.observe(new Map([[t.id, events]]));
  };
  const tick = (at: number) => {
    clock.now = at;
    engine.tick();
  };
  return { engine, firings, said, observe, tick };
}

describe('alert engine on a moved clock', () => {
  it('slides the window: fires on crossing, recovers when the old seconds leave it', () => {
    const e = engineAt(trigger({ window_seconds: 10, op: 'gt', value: 2, group_by: [] }));
    e.observe(T0, [event(), event()]);
    expect(e.said()).toEqual([]); // 2 is not above 2
    e.observe(T0 + 3 * S, [event()]);
    expect(e.said()).toEqual(['fire {} 3']);
    const n = e.firings[0]!.notification;
    expect(n).toMatchObject({
      kind: 'fire',
      window_seconds: 10,
      fired_at: new Date(T0 + 3 * S).toISOString(),
    });
    expect(n.samples.map((s) => s.ev_id)).toEqual(e.firings[0]!.evIds);
    expect(n.samples).toHaveLength(3);
    // The window holds the seconds (now - 10 s, now]: at +9.999 s the first second is still in.
    e.tick(T0 + 10 * S - 1);
    expect(e.said()).toEqual(['fire {} 3']);
    expect(e.engine.fired).toBe(1);
    // At +10 s it leaves: one event left, 1 is not above 2: the recovery is told.
    e.tick(T0 + 10 * S);
    expect(e.said()).toEqual(['fire {} 3', 'recover {} 1']);
    expect(e.firings[1]!.notification.fired_at).toBe(new Date(T0 + 10 * S).toISOString());
    expect(e.engine.recovered).toBe(1);
    // Nothing more to say as the last event leaves too.
    e.tick(T0 + 13 * S);
    e.tick(T0 + 60 * S);
    expect(e.firings).toHaveLength(2);
  });

  it('fires a group once per crossing: not again while it holds, again after it recovered', () => {
    const e = engineAt(trigger({ window_seconds: 5, op: 'gte', value: 2, group_by: ['host'] }));
    e.observe(T0, [event('a'), event('a'), event('b')]);
    expect(e.said()).toEqual(['fire {"host":"a"} 2']);
    // Still holding (3, then 4 events): no second firing.
    e.observe(T0 + 1 * S, [event('a')]);
    e.observe(T0 + 2 * S, [event('a')]);
    e.tick(T0 + 4 * S);
    expect(e.said()).toEqual(['fire {"host":"a"} 2']);
    // The second T0 leaves the window at +5 s, yet 2 events are left (+1 s, +2 s): holds.
    e.tick(T0 + 5 * S);
    expect(e.firings).toHaveLength(1);
    // At +6 s one is left: recovered.
    e.tick(T0 + 6 * S);
    expect(e.said()).toEqual(['fire {"host":"a"} 2', 'recover {"host":"a"} 1']);
    // A new crossing fires again (the event of +2 s has left; two new ones); b stays below 2.
    e.observe(T0 + 8 * S, [event('a'), event('a'), event('b')]);
    expect(e.said()).toEqual(['fire {"host":"a"} 2', 'recover {"host":"a"} 1', 'fire {"host":"a"} 2']);
    expect(e.engine.fired).toBe(2);
  });

  it('holds back a crossing within the cooldown, and does not tell the recovery of a firing not told', () => {
    const e = engineAt(trigger({ window_seconds: 5, op: 'gt', value: 1, group_by: [] }, 60));
    e.observe(T0, [event(), event()]);
    e.tick(T0 + 5 * S);
    expect(e.said()).toEqual(['fire {} 2', 'recover {} 0']);
    // 20 s after the firing: crosses again, held back by the 60 s cooldown.
    e.observe(T0 + 20 * S, [event(), event()]);
    expect(e.engine.suppressed).toBe(1);
    e.tick(T0 + 25 * S);
    expect(e.firings).toHaveLength(2); // neither that firing nor its recovery
    // 60 s after the firing the cooldown is over.
    e.observe(T0 + 60 * S, [event(), event()]);
    expect(e.said()).toEqual(['fire {} 2', 'recover {} 0', 'fire {} 2']);
  });

  it('lt: fires on silence only once a whole window was watched, and recovers on an event', () => {
    const e = engineAt(trigger({ window_seconds: 10, op: 'lt', value: 1, group_by: [] }));
    // A trigger just set up has not seen the last 10 s: no silence announced.
    e.tick(T0 + 1 * S);
    e.tick(T0 + 10 * S - 1);
    expect(e.said()).toEqual([]);
    e.tick(T0 + 10 * S);
    expect(e.said()).toEqual(['fire {} 0']);
    expect(e.firings[0]!.notification.search_url).toContain('http://logscope.test/search?');
    e.tick(T0 + 11 * S);
    expect(e.firings).toHaveLength(1);
    e.observe(T0 + 12 * S, [event()]);
    expect(e.said()).toEqual(['fire {} 0', 'recover {} 1']);
    // That event leaves the window at +22 s: silent again.
    e.tick(T0 + 22 * S - 1);
    expect(e.firings).toHaveLength(2);
    e.tick(T0 + 22 * S);
    expect(e.said()).toEqual(['fire {} 0', 'recover {} 1', 'fire {} 0']);
  });

  it('lte with group_by: a group is watched from its first event, silence counted from then', () => {
    const e = engineAt(trigger({ window_seconds: 5, op: 'lte', value: 1, group_by: ['host'] }));
    // The first event of `a` comes 3 s after the trigger started: watched from T0 + 3 s.
    e.observe(T0 + 3 * S + 400, [event('a')]);
    // 1 <= 1 holds, but `a` has not been watched for 5 s yet.
    e.tick(T0 + 8 * S - 1);
    expect(e.said()).toEqual([]);
    e.tick(T0 + 8 * S);
    expect(e.said()).toEqual(['fire {"host":"a"} 0']);
    e.observe(T0 + 9 * S, [event('a'), event('a')]);
    expect(e.said()).toEqual(['fire {"host":"a"} 0', 'recover {"host":"a"} 2']);
  });
});

/** A trigger as stored: silence of `app:beat` for 30 s, with a task, told to channels 4 and 5. */
const heartbeat = (
  condition: object = { type: 'threshold', window_seconds: 30, op: 'lt', value: 1, group_by: [] },
): TriggerRow => ({
  id: 3,
  name: 'heartbeat',
  description: '',
  severity: 'medium',
  query: 'app:beat',
  filter: '[]',
  enabled: 1,
  create_task: 1,
  assign_to: null,
  condition: JSON.stringify(condition),
  notify: '[4, 5]',
  cooldown_seconds: 0,
  owner_id: 1,
  run_as: 1,
  created_at: new Date(T0).toISOString(),
  updated_at: new Date(T0).toISOString(),
});

describe('alert notifier clock (fake timers)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('slides the windows once a second by itself and queues a delivery of the firing', async () => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
    const enqueue = vi.fn(async () => undefined);
    const taskOf = vi.fn(async () => undefined);
    const notifier = new AlertNotifier(
      {
        channels: {} as ChannelsService,
        queue: { enqueue } as unknown as DeliveryQueue,
        linkBase: () => 'http://logscope.test',
      },
      { log: silentLog },
      () => new Date(),
      taskOf,
    );
    const row = heartbeat();
    notifier.setTriggers([row], () => '');
    await notifier.start();
    await vi.advanceTimersByTimeAsync(29 * S);
    expect(enqueue).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1 * S);
    expect(enqueue).toHaveBeenCalledTimes(1);
    expect(enqueue).toHaveBeenCalledWith(
      expect.objectContaining({ kind: 'fire', count: 0, fired_at: new Date(T0 + 30 * S).toISOString() }),
      3,
      [4, 5],
      1,
    );
    // A threshold with create_task opens a task of its (here no) samples, at the firing.
    expect(taskOf).toHaveBeenCalledWith(3, [], T0 + 30 * S);
    await notifier.stop();
    // Stopped: the clock no longer slides anything.
    await vi.advanceTimersByTimeAsync(120 * S);
    expect(enqueue).toHaveBeenCalledTimes(1);
  });

  it('cluster: sends while it holds the lease, publishes its matches every 250 ms, releases on stop', async () => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
    const enqueue = vi.fn(async () => undefined);
    const publish = vi.fn();
    const leases = { hold: vi.fn(async () => true), release: vi.fn(async () => undefined) };
    const notifier = new AlertNotifier(
      { channels: {} as ChannelsService, queue: { enqueue } as unknown as DeliveryQueue, linkBase: () => '' },
      {
        log: silentLog,
        cluster: { node: 'n1', leases: leases as unknown as LeasesRepository, leaseMs: 10_000, publish },
      },
      () => new Date(),
      async () => undefined,
    );
    notifier.setTriggers([heartbeat({ type: 'match' })], () => 'streams:k');
    await notifier.start();
    expect(leases.hold).toHaveBeenCalledWith('alert-notifier', 'n1', T0, 10_000);
    expect(notifier.engine.sending()).toBe(true);
    const e = event();
    notifier.engine.observe(new Map([[3, [e]]]));
    expect(enqueue).toHaveBeenCalledTimes(1);
    expect(publish).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(250);
    expect(publish).toHaveBeenCalledTimes(1);
    expect(publish).toHaveBeenCalledWith({
      counts: [
        {
          s: T0 / 1000,
          trigger: 3,
          version: `${new Date(T0).toISOString()} streams:k`,
          groups: [['[]', 1, [{ ev_id: e.ev_id, ts: T0 / 1000, message: e.message }]]],
        },
      ],
    });
    // Nothing new: nothing published. The lease is renewed every third of it (3.5 s here).
    await vi.advanceTimersByTimeAsync(3250);
    expect(publish).toHaveBeenCalledTimes(1);
    expect(leases.hold).toHaveBeenCalledTimes(2);
    await notifier.stop();
    expect(leases.release).toHaveBeenCalledWith('alert-notifier', 'n1');
  });

  it('cluster: renews the lease every third of it and stops sending once a renewal is refused', async () => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
    let held = true;
    const leases = { hold: vi.fn(async () => held), release: vi.fn(async () => undefined) };
    const notifier = new AlertNotifier(
      { channels: {} as ChannelsService, queue: {} as DeliveryQueue, linkBase: () => '' },
      {
        log: silentLog,
        cluster: {
          node: 'n2',
          leases: leases as unknown as LeasesRepository,
          leaseMs: 30_000,
          publish: vi.fn(),
        },
      },
      () => new Date(),
      async () => undefined,
    );
    await notifier.start();
    expect(notifier.engine.sending()).toBe(true);
    // Renewed every 10 s; another node holds it from now on.
    held = false;
    await vi.advanceTimersByTimeAsync(9_750);
    expect(leases.hold).toHaveBeenCalledTimes(1);
    expect(notifier.engine.sending()).toBe(true);
    await vi.advanceTimersByTimeAsync(250);
    expect(leases.hold).toHaveBeenCalledTimes(2);
    expect(notifier.engine.sending()).toBe(false);
    await notifier.stop();
    // Not held: nothing to release.
    expect(leases.release).not.toHaveBeenCalled();
  });
});
