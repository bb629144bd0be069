/**
 * A webhook: its URL, a secret that signs each body (write-only), and a body template with
 * its content type, the template's variables beside it.
 */
import type { ConfigOf, UiChannelKind } from './channel-kind.js';

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

export const webhook: UiChannelKind<'webhook', 'url' | 'secret' | 'body_template' | 'content_type'> = {
  type: 'webhook',
  names: { short: 'Webhook', long: 'Webhook (HTTP POST)' },
  carriesReports: true,
  fields: [
    {
      name: 'url',
      label: 'URL',
      input: 'url',
      grow: true,
      mono: true,
      placeholder: 'https://hooks.example.com/…',
    },
    {
      name: 'secret',
      label: 'Secret',
      input: 'secret',
      hint: 'Optional: signs each body (X-Logscope-Signature: sha256=…).',
    },
    { template: { variables: TEMPLATE_VARIABLES, contentTypes: CONTENT_TYPES } },
  ],
  values: (config) => ({
    url: config.url ?? '',
    secret: config.secret ?? '',
    body_template: config.body_template ?? '',
    content_type: config.content_type ?? '',
  }),
  target: (config) => config.url ?? '',
  isComplete: (given) => given('url'),
  configOf(own, values, editing) {
    // Headers have no field here: an edited webhook keeps the ones it has (masked, so kept).
    const headers = editing?.type === 'webhook' && (editing.config as Partial<ConfigOf<'webhook'>>).headers;
    const secret = own('secret');
    return {
      url: own('url'),
      ...(headers ? { headers } : {}),
      ...(secret ? { secret } : {}),
      ...(values.body_template.trim() ? { body_template: values.body_template } : {}),
      ...(values.content_type.trim() ? { content_type: values.content_type.trim() } : {}),
    };
  },
};
