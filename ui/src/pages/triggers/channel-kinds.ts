import type { components } from '../../api-types.generated.js';

/** The kinds of channel. */
export const CHANNEL_TYPES = ['webhook', 'slack', 'teams', 'email', 'pagerduty', 'opsgenie'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Compiles only while the API's kinds are these (the generated types tell a new one). */
export type KindsAreTheApis =
  Same<ChannelType, components['schemas']['Channel']['type']> extends true ? true : never;
export const KINDS_ARE_THE_APIS: KindsAreTheApis = true;

/** A channel, its `config` (an open object in the document) as each kind has it. */
export type Channel = Omit<components['schemas']['Channel'], 'config' | 'type'> & {
  type: ChannelType;
  config: {
    url?: string;
    to?: string[];
    secret?: string;
    headers?: Record<string, string>;
    body_template?: string;
    content_type?: string;
    routing_key?: string;
    severity_map?: Record<string, string>;
    api_key?: string;
    region?: 'us' | 'eu';
    priority_map?: Record<string, string>;
  };
};

/** What the API answers for a kept secret; sent back unchanged, it keeps the stored value. */
export const KEPT_SECRET = '********';

/** Each kind's name in a list, and in the form's Type. */
export const TYPE_NAMES: Record<ChannelType, { short: string; long: string }> = {
  webhook: { short: 'Webhook', long: 'Webhook (HTTP POST)' },
  slack: { short: 'Slack', long: 'Slack incoming webhook' },
  teams: { short: 'Teams', long: 'Microsoft Teams (Workflows)' },
  email: { short: 'Email', long: 'Email' },
  pagerduty: { short: 'PagerDuty', long: 'PagerDuty (Events API v2)' },
  opsgenie: { short: 'Opsgenie', long: 'Opsgenie (Alert API)' },
};

export const TYPES = CHANNEL_TYPES.map((value) => ({
  value,
  label: TYPE_NAMES[value].long,
}));

/** A trigger's severities, the keys of PagerDuty's and Opsgenie's maps. */
export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** PagerDuty's severities and the API's default map (docs/api/alerting.md). */
export const PAGERDUTY_SEVERITIES = ['critical', 'error', 'warning', 'info'];
export const PAGERDUTY_DEFAULTS: Record<Severity, string> = {
  critical: 'critical',
  high: 'error',
  medium: 'warning',
  low: 'info',
};

/** Opsgenie's priorities and the API's default map. */
export const OPSGENIE_PRIORITIES = ['P1', 'P2', 'P3', 'P4', 'P5'];
export const OPSGENIE_DEFAULTS: Record<Severity, string> = {
  critical: 'P1',
  high: 'P2',
  medium: 'P3',
  low: 'P4',
};

export const REGIONS = [
  { value: 'us', label: 'US (api.opsgenie.com)' },
  { value: 'eu', label: 'EU (api.eu.opsgenie.com)' },
];

/** Content types offered for a body template (any media type may be typed). */
export const CONTENT_TYPES = [
  'application/json',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'application/xml',
];

/** The variables a body template may use (docs/api/alerting.md, webhook body templates). */
export const TEMPLATE_VARIABLES: ReadonlyArray<{ title: string; names: readonly string[]; note?: string }> = [
  {
    title: 'Every notification',
    names: ['kind', 'is_fire', 'is_recover', 'is_test', 'is_report', 'headline', 'text'],
  },
  {
    title: 'Triggers',
    names: [
      'trigger.id',
      'trigger.name',
      'trigger.severity',
      'trigger.description',
      'condition.type',
      'group',
      'group.<field>',
      'group_text',
      'count',
      'window_seconds',
      'fired_at',
      'search_url',
      'samples',
      'pattern.pattern_id',
      'pattern.template',
    ],
    note: 'Each of samples: ev_id, ts, message.',
  },
  {
    title: 'Scheduled reports',
    names: [
      'schedule.id',
      'schedule.name',
      'report.id',
      'report.title',
      'report.ftype',
      'report.filename',
      'report.size',
      'link',
      'link_expires_at',
      'time_range.ts_from',
      'time_range.ts_to',
      'run.at',
      'run.trigger',
    ],
  },
];

/** Where a channel sends, as its list shows it. */
export function target(c: Channel): string {
  switch (c.type) {
    case 'email':
      return (c.config.to ?? []).join(', ');
    case 'pagerduty':
      return `routing key ${c.config.routing_key ?? ''}`;
    case 'opsgenie':
      return `${(c.config.region ?? 'us').toUpperCase()} region, API key ${c.config.api_key ?? ''}`;
    case 'webhook':
    case 'slack':
    case 'teams':
      return c.config.url ?? '';
    default:
      return c.type satisfies never;
  }
}

/** The form's values: one text a setting, a map's entries one each. */
export type ChannelValues = {
  name: string;
  type: ChannelType;
  url: string;
  to: string;
  secret: string;
  body_template: string;
  content_type: string;
  routing_key: string;
  api_key: string;
  region: string;
} & Record<`severity_${Severity}` | `priority_${Severity}`, string>;

const mapValues = <P extends string>(
  prefix: P,
  stored: Record<string, string> | undefined,
  defaults: Record<Severity, string>,
) =>
  Object.fromEntries(SEVERITIES.map((s) => [`${prefix}_${s}`, stored?.[s] ?? defaults[s]])) as Record<
    `${P}_${Severity}`,
    string
  >;

/** The form's first values: a new channel's, or those of the one edited (secrets as masked). */
export function initialValues(editing?: Channel): ChannelValues {
  const config = editing?.config ?? {};
  return {
    name: editing?.name ?? '',
    type: editing?.type ?? 'webhook',
    url: config.url ?? '',
    to: (config.to ?? []).join(', '),
    secret: config.secret ?? '',
    body_template: config.body_template ?? '',
    content_type: config.content_type ?? '',
    routing_key: config.routing_key ?? '',
    api_key: config.api_key ?? '',
    region: config.region ?? 'us',
    ...mapValues('severity', config.severity_map, PAGERDUTY_DEFAULTS),
    ...mapValues('priority', config.priority_map, OPSGENIE_DEFAULTS),
  };
}

/**
 * A value as sent: a masked one (a key, a Teams or Slack URL) stands for the stored value
 * only for the kind it was read from; once the kind changes it is no value.
 */
function own(value: string, values: ChannelValues, editing: Channel | undefined): string {
  const masked = value === KEPT_SECRET || value.endsWith(`/${KEPT_SECRET}`);
  return masked && editing?.type !== values.type ? '' : value.trim();
}

/** The settings the form gives, filled enough to save (the API checks the rest). */
export function isComplete(values: ChannelValues, editing?: Channel): boolean {
  const given = (v: string) => own(v, values, editing) !== '';
  if (!values.name.trim()) return false;
  switch (values.type) {
    case 'email':
      return given(values.to);
    case 'pagerduty':
      return given(values.routing_key);
    case 'opsgenie':
      return given(values.api_key);
    case 'webhook':
    case 'slack':
    case 'teams':
      return given(values.url);
    default:
      return values.type satisfies never;
  }
}

/** The `config` to send for the form's kind; masks sent back as read keep the stored values. */
export function configOf(values: ChannelValues, editing?: Channel): Record<string, unknown> {
  const v = (name: keyof ChannelValues) => own(values[name], values, editing);
  switch (values.type) {
    case 'email':
      return {
        to: values.to
          .split(/[,\s]+/)
          .map((a) => a.trim())
          .filter(Boolean),
      };
    case 'pagerduty':
      return {
        routing_key: v('routing_key'),
        severity_map: Object.fromEntries(SEVERITIES.map((s) => [s, values[`severity_${s}`]])),
      };
    case 'opsgenie':
      return {
        api_key: v('api_key'),
        region: values.region,
        priority_map: Object.fromEntries(SEVERITIES.map((s) => [s, values[`priority_${s}`]])),
      };
    case 'slack':
    case 'teams':
      return { url: v('url') };
    case 'webhook': {
      // Headers have no field here: an edited webhook keeps the ones it has (masked, so kept).
      const headers = editing?.type === 'webhook' && editing.config.headers;
      const secret = v('secret');
      return {
        url: v('url'),
        ...(headers ? { headers } : {}),
        ...(secret ? { secret } : {}),
        ...(values.body_template.trim() ? { body_template: values.body_template } : {}),
        ...(values.content_type.trim() ? { content_type: values.content_type.trim() } : {}),
      };
    }
    default:
      return values.type satisfies never;
  }
}
