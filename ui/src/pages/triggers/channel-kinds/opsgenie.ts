/** Opsgenie: an API integration's key (write-only), its region, and how trigger severities are sent. */
import { mapOf, mapValues, type Severity, type UiChannelKind } from './channel-kind.js';

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

export const opsgenie: UiChannelKind<'opsgenie', 'api_key' | 'region' | `priority_${Severity}`> = {
  type: 'opsgenie',
  names: { short: 'Opsgenie', long: 'Opsgenie (Alert API)' },
  carriesReports: false,
  fields: [
    {
      name: 'api_key',
      label: 'API key',
      input: 'secret',
      grow: true,
      mono: true,
      hint: 'The key of an Opsgenie API integration.',
    },
    { name: 'region', label: 'Region', options: REGIONS },
    {
      map: 'priority',
      legend: 'Priority map',
      hint: 'The Opsgenie priority each trigger severity is sent as.',
      choices: OPSGENIE_PRIORITIES,
    },
  ],
  values: (config) => ({
    api_key: config.api_key ?? '',
    region: config.region ?? 'us',
    ...mapValues('priority', config.priority_map, OPSGENIE_DEFAULTS),
  }),
  target: (config) => `${(config.region ?? 'us').toUpperCase()} region, API key ${config.api_key ?? ''}`,
  isComplete: (given) => given('api_key'),
  configOf: (own, values) => ({
    api_key: own('api_key'),
    region: values.region,
    priority_map: mapOf('priority', values),
  }),
};
