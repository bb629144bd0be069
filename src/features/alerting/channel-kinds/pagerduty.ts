/**
 * PagerDuty: Events API v2 events, a firing and its recovery sharing one dedup_key (an
 * incident opened, then resolved). It pages people: it carries no scheduled report.
 */
import { Type } from 'typebox';
import { dedupKey, groupText, headline, type Notification, testKey } from '../notification.js';
import type { ChannelKind, ConfigOf } from './channel-kind.js';
import { SEVERITIES, secretText, severityMap } from './config-checks.js';

/** PagerDuty's severities, and what a trigger's severity is sent as by default. */
export const PAGERDUTY_SEVERITIES = ['critical', 'error', 'warning', 'info'] as const;
const DEFAULT_SEVERITY: Record<string, string> = {
  critical: 'critical',
  high: 'error',
  medium: 'warning',
  low: 'info',
};

const settings = {
  routing_key: Type.String({
    description: 'The integration key of a PagerDuty service (Events API v2); reads back as "********".',
  }),
  severity_map: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: `From trigger severities (${SEVERITIES.join(', ')}) to PagerDuty's (${PAGERDUTY_SEVERITIES.join(', ')}); default ${SEVERITIES.map((s) => `${s}: ${DEFAULT_SEVERITY[s]}`).join(', ')}.`,
    }),
  ),
};
export type PagerdutyConfig = ConfigOf<typeof settings>;

/** PagerDuty refuses a malformed event or a bad key with a 4xx that a retry does not help. */
const vendor = { final4xx: true };

export const pagerduty: ChannelKind<'pagerduty', typeof settings> = {
  type: 'pagerduty',
  title: 'PagerDuty',
  settings,
  about: 'Events API v2 events, a firing opening an incident and its recovery resolving it',
  masked: { keys: ['routing_key'] },
  check(raw, stored, fail, refused) {
    const out: PagerdutyConfig = {
      routing_key: secretText(raw.routing_key, stored?.routing_key, 'routing_key', fail, refused),
    };
    const map = severityMap(raw.severity_map, PAGERDUTY_SEVERITIES, 'severity_map', fail);
    if (map) out.severity_map = map;
    return out;
  },
  async send(c, n, out, ctx) {
    const url = `${(out.settings.pagerdutyUrl || 'https://events.pagerduty.com').replace(/\/+$/, '')}/v2/enqueue`;
    if (n.kind === 'test') {
      // A test opens and at once resolves an incident of its own key.
      const key = testKey(ctx.channelId ?? 0, (ctx.now ?? Date.now)());
      await out.post(url, JSON.stringify(pagerdutyEvent(c, n, key)), {}, vendor);
      await out.post(url, JSON.stringify(pagerdutyResolve(c, key)), {}, vendor);
    } else await out.post(url, JSON.stringify(pagerdutyEvent(c, n, dedupKey(n))), {}, vendor);
  },
};

/** The web UI's address, read off the Search link (built on publicUrl). */
function publicBase(n: Notification): string | null {
  if (!n.search_url) return null;
  const at = n.search_url.lastIndexOf('/search');
  return at >= 0 ? n.search_url.slice(0, at) : n.search_url;
}

function publicHost(n: Notification): string {
  const base = publicBase(n);
  try {
    return base ? new URL(base).host : 'logscope';
  } catch {
    return 'logscope';
  }
}

/** The body of a PagerDuty event for a notification (`key`: its dedup_key). */
export function pagerdutyEvent(c: PagerdutyConfig, n: Notification, key: string): object {
  if (n.kind === 'recover') return { routing_key: c.routing_key, event_action: 'resolve', dedup_key: key };
  const severity =
    n.kind === 'test' || !n.trigger
      ? 'info'
      : (c.severity_map?.[n.trigger.severity] ?? DEFAULT_SEVERITY[n.trigger.severity] ?? 'error');
  const base = publicBase(n);
  return {
    routing_key: c.routing_key,
    event_action: 'trigger',
    dedup_key: key,
    payload: {
      summary: headline(n).slice(0, 1024),
      source: groupText(n.group) || publicHost(n),
      severity,
      timestamp: n.fired_at,
      component: n.trigger?.name ?? 'Logscope',
      class: n.condition?.type ?? n.kind,
      custom_details: {
        trigger: n.trigger ? { id: n.trigger.id, name: n.trigger.name, severity: n.trigger.severity } : null,
        condition: n.condition,
        group: n.group,
        count: n.count,
        window_seconds: n.window_seconds,
        samples: n.samples,
        search_url: n.search_url,
      },
    },
    links: n.search_url ? [{ href: n.search_url, text: 'Open in Logscope' }] : [],
    client: 'Logscope',
    ...(base ? { client_url: base } : {}),
  };
}

/** The resolve event that ends a PagerDuty test (or any) key. */
export const pagerdutyResolve = (c: PagerdutyConfig, key: string): object => ({
  routing_key: c.routing_key,
  event_action: 'resolve',
  dedup_key: key,
});
