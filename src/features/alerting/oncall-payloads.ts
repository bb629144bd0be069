/**
 * What the on-call channel kinds send (docs/api/alerting.md): PagerDuty Events API v2
 * events, Opsgenie Alert API requests and a Microsoft Teams Adaptive Card. Pure builders:
 * senders.ts posts them.
 */
import { createHash } from 'node:crypto';
import { bodyText, groupText, headline, type Notification } from './notification.js';

export interface PagerdutyConfig {
  routing_key: string;
  severity_map?: Record<string, string>;
}
export interface OpsgenieConfig {
  api_key: string;
  region?: 'us' | 'eu';
  priority_map?: Record<string, string>;
}
export interface TeamsConfig {
  url: string;
}

/** Trigger severities, and what PagerDuty and Opsgenie call them by default. */
export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export const PAGERDUTY_SEVERITIES = ['critical', 'error', 'warning', 'info'] as const;
export const OPSGENIE_PRIORITIES = ['P1', 'P2', 'P3', 'P4', 'P5'] as const;
const DEFAULT_SEVERITY: Record<string, string> = {
  critical: 'critical',
  high: 'error',
  medium: 'warning',
  low: 'info',
};
const DEFAULT_PRIORITY: Record<string, string> = { critical: 'P1', high: 'P2', medium: 'P3', low: 'P4' };

/** JSON with every object's keys sorted: the same group gives the same text on every node. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value ?? null);
}

/**
 * One key per trigger and group: a firing and its recovery share it, two groups never do,
 * and it is the same across restarts and nodes. PagerDuty's `dedup_key`, Opsgenie's `alias`.
 */
export function dedupKey(n: Notification): string {
  const id = n.trigger?.id ?? 0;
  if (Object.keys(n.group).length === 0) return `logscope-${id}`;
  const hash = createHash('sha256').update(canonicalJson(n.group)).digest('hex').slice(0, 32);
  return `logscope-${id}-${hash}`;
}

/** The key of a test notification of a channel. */
export const testKey = (channelId: number, atMs: number) => `logscope-test-${channelId}-${atMs}`;

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

/** The body of an Opsgenie alert create for a firing (`alias`: its dedup key). */
export function opsgenieCreate(c: OpsgenieConfig, n: Notification, alias: string): object {
  const priority =
    n.kind === 'test' || !n.trigger
      ? 'P5'
      : (c.priority_map?.[n.trigger.severity] ?? DEFAULT_PRIORITY[n.trigger.severity] ?? 'P3');
  const details: Record<string, string> = {};
  for (const [field, value] of Object.entries(n.group))
    details[field] = value === null ? '(none)' : String(value);
  if (n.trigger) details.trigger = n.trigger.name;
  details.count = String(n.count);
  if (n.window_seconds !== null) details.window_seconds = String(n.window_seconds);
  if (n.search_url) details.search_url = n.search_url;
  const entity = groupText(n.group);
  return {
    message: headline(n).slice(0, 130),
    alias,
    description: bodyText(n).slice(0, 15_000),
    priority,
    source: 'Logscope',
    tags: ['logscope'],
    ...(entity ? { entity } : {}),
    details,
  };
}

/** The body of an Opsgenie close by alias. */
export const opsgenieClose = (n: Notification): object => ({
  source: 'Logscope',
  note: n.kind === 'test' ? 'Logscope test notification: closed.' : `Resolved: ${headline(n)}`,
});

/** A Teams message carrying an Adaptive Card (a recovery's headline says Resolved). */
export function teamsCard(n: Notification): object {
  const recovered = n.kind === 'recover';
  const facts = [
    { title: 'Count', value: String(n.count) },
    ...(n.window_seconds !== null ? [{ title: 'Window', value: `${n.window_seconds} s` }] : []),
    ...(Object.keys(n.group).length ? [{ title: 'Group', value: groupText(n.group) }] : []),
    { title: 'Fired at', value: n.fired_at },
  ];
  const samples = n.samples.slice(-5).map((s) => ({
    type: 'TextBlock',
    text: (s.message ?? '').slice(0, 200),
    isSubtle: true,
    wrap: true,
    fontType: 'Monospace',
  }));
  const description = n.trigger?.description || (n.kind === 'test' ? 'Sent from Logscope.' : '');
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            {
              type: 'TextBlock',
              text: recovered ? `Resolved: ${headline(n)}` : headline(n),
              weight: 'Bolder',
              size: 'Medium',
              wrap: true,
              color: recovered ? 'Good' : n.kind === 'test' ? 'Default' : 'Attention',
            },
            ...(description ? [{ type: 'TextBlock', text: description, wrap: true }] : []),
            { type: 'FactSet', facts },
            ...samples,
          ],
          actions: n.search_url
            ? [{ type: 'Action.OpenUrl', title: 'Open in Logscope', url: n.search_url }]
            : [],
        },
      },
    ],
  };
}
