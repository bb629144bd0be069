/**
 * Opsgenie: Alert API requests, a firing creating an alert whose alias its recovery
 * closes; the API key goes to the channel's region (US or EU). It pages people: it carries
 * no scheduled report.
 */
import { Type } from 'typebox';
import { bodyText, dedupKey, groupText, headline, type Notification, testKey } from '../notification.js';
import type { ChannelKind, ConfigOf } from './channel-kind.js';
import { SEVERITIES, secretText, severityMap } from './config-checks.js';

/** Opsgenie's priorities, and what a trigger's severity is sent as by default. */
export const OPSGENIE_PRIORITIES = ['P1', 'P2', 'P3', 'P4', 'P5'] as const;
const DEFAULT_PRIORITY: Record<string, string> = { critical: 'P1', high: 'P2', medium: 'P3', low: 'P4' };

const settings = {
  api_key: Type.String({
    description: 'The key of an Opsgenie API integration; reads back as "********".',
  }),
  region: Type.Optional(
    Type.Union([Type.Literal('us'), Type.Literal('eu')], {
      description: 'Where the key goes: us (api.opsgenie.com, the default) or eu (api.eu.opsgenie.com).',
    }),
  ),
  priority_map: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: `From trigger severities (${SEVERITIES.join(', ')}) to priorities (${OPSGENIE_PRIORITIES.join(', ')}); default ${SEVERITIES.map((s) => `${s}: ${DEFAULT_PRIORITY[s]}`).join(', ')}.`,
    }),
  ),
};
export type OpsgenieConfig = ConfigOf<typeof settings>;

/** Opsgenie refuses a malformed request or a bad key with a 4xx that a retry does not help. */
const vendor = { final4xx: true };

export const opsgenie: ChannelKind<'opsgenie', typeof settings> = {
  type: 'opsgenie',
  title: 'Opsgenie',
  settings,
  about: 'Alert API requests, a firing creating an alert and its recovery closing it',
  masked: { keys: ['api_key'] },
  check(raw, stored, fail, refused) {
    let region: 'us' | 'eu' | undefined;
    if (raw.region !== undefined && raw.region !== null) {
      if (raw.region !== 'us' && raw.region !== 'eu') fail('region', 'us or eu.');
      else region = raw.region;
    }
    // The region is where the key goes.
    const moved = stored && (stored.region ?? 'us') !== (region ?? 'us') ? 'the region changed' : null;
    const out: OpsgenieConfig = {
      api_key: secretText(raw.api_key, stored?.api_key, 'api_key', fail, refused ?? moved),
    };
    if (region) out.region = region;
    const map = severityMap(raw.priority_map, OPSGENIE_PRIORITIES, 'priority_map', fail);
    if (map) out.priority_map = map;
    return out;
  },
  async send(c, n, out, ctx) {
    const base = (
      out.settings.opsgenieUrl ||
      (c.region === 'eu' ? 'https://api.eu.opsgenie.com' : 'https://api.opsgenie.com')
    ).replace(/\/+$/, '');
    const auth = { authorization: `GenieKey ${c.api_key}` };
    const close = (alias: string) =>
      out.post(
        `${base}/v2/alerts/${encodeURIComponent(alias)}/close?identifierType=alias`,
        JSON.stringify(opsgenieClose(n)),
        auth,
        vendor,
      );
    if (n.kind === 'recover') await close(dedupKey(n));
    else {
      const alias = n.kind === 'test' ? testKey(ctx.channelId ?? 0, (ctx.now ?? Date.now)()) : dedupKey(n);
      await out.post(`${base}/v2/alerts`, JSON.stringify(opsgenieCreate(c, n, alias)), auth, vendor);
      if (n.kind === 'test') await close(alias);
    }
  },
};

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
