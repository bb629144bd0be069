import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { opsgenieCreate } from '../../../src/features/alerting/channel-kinds/opsgenie.js';
import { pagerdutyEvent } from '../../../src/features/alerting/channel-kinds/pagerduty.js';
import { teamsCard } from '../../../src/features/alerting/channel-kinds/teams.js';
import { dedupKey, type Notification } from '../../../src/features/alerting/notification.js';

const n = (over: Partial<Notification> = {}): Notification => ({
  kind: 'fire',
  trigger: { id: 12, name: 'Errors', severity: 'medium', description: '' },
  condition: { type: 'threshold', window_seconds: 60, op: 'gt', value: 2, group_by: ['host', 'app'] },
  group: { host: 'web-1', app: 'api' },
  count: 3,
  window_seconds: 60,
  fired_at: '2026-11-27T10:00:00.000Z',
  samples: [],
  search_url: 'https://logs.example.com/base/search?q=x',
  ...over,
});

describe('on-call payloads', () => {
  it('keys a trigger and group the same whatever the order of its fields, and groups apart', () => {
    const hash = createHash('sha256').update('{"app":"api","host":"web-1"}').digest('hex').slice(0, 32);
    expect(dedupKey(n())).toBe(`logscope-12-${hash}`);
    expect(dedupKey(n({ group: { app: 'api', host: 'web-1' } }))).toBe(`logscope-12-${hash}`);
    expect(dedupKey(n({ kind: 'recover' }))).toBe(`logscope-12-${hash}`);
    expect(dedupKey(n({ group: { host: 'web-2', app: 'api' } }))).not.toBe(`logscope-12-${hash}`);
    expect(dedupKey(n({ group: {} }))).toBe('logscope-12');
    // pattern_rate: the pattern is the group; its recovery resolves what its firing opened.
    const rate = n({
      condition: {
        type: 'pattern_rate',
        window_seconds: 300,
        baseline: 'previous',
        direction: 'both',
        min_ratio: 3,
        min_count: 20,
        steady_windows: 3,
      },
      group: { pattern_id: 'p1' },
    });
    const key = dedupKey(rate);
    expect(pagerdutyEvent({ routing_key: 'k' }, rate, key)).toMatchObject({
      event_action: 'trigger',
      dedup_key: key,
    });
    expect(
      pagerdutyEvent(
        { routing_key: 'k' },
        { ...rate, kind: 'recover' },
        dedupKey({ ...rate, kind: 'recover' }),
      ),
    ).toEqual({
      routing_key: 'k',
      event_action: 'resolve',
      dedup_key: key,
    });
  });

  it('maps severities and priorities, and keeps texts within the vendors’ limits', () => {
    const long = n({
      trigger: { id: 1, name: 'x'.repeat(3000), severity: 'low', description: 'd'.repeat(20_000) },
    });
    const event = pagerdutyEvent({ routing_key: 'k' }, long, 'key') as {
      payload: Record<string, unknown>;
      client_url: string;
    };
    expect((event.payload.summary as string).length).toBe(1024);
    expect(event.payload).toMatchObject({
      severity: 'info',
      source: 'host=web-1, app=api',
      class: 'threshold',
    });
    expect(event.client_url).toBe('https://logs.example.com/base');
    expect(pagerdutyEvent({ routing_key: 'k', severity_map: { low: 'error' } }, long, 'key')).toMatchObject({
      payload: { severity: 'error' },
    });
    const alert = opsgenieCreate({ api_key: 'k' }, long, 'alias') as Record<string, string>;
    expect(alert.message?.length).toBe(130);
    expect(alert.description?.length).toBe(15_000);
    expect(alert.priority).toBe('P4');
    expect(opsgenieCreate({ api_key: 'k', priority_map: { medium: 'P1' } }, n(), 'a')).toMatchObject({
      priority: 'P1',
    });
    expect(JSON.stringify(teamsCard(n({ kind: 'recover' })))).toContain('Resolved: ');
  });
});
