/** PagerDuty: a service's routing key (write-only) and how trigger severities are sent. */
import { mapOf, mapValues, type Severity, type UiChannelKind } from './channel-kind.js';

/** PagerDuty's severities and the API's default map (docs/api/alerting.md). */
export const PAGERDUTY_SEVERITIES = ['critical', 'error', 'warning', 'info'];
export const PAGERDUTY_DEFAULTS: Record<Severity, string> = {
  critical: 'critical',
  high: 'error',
  medium: 'warning',
  low: 'info',
};

export const pagerduty: UiChannelKind<'pagerduty', 'routing_key' | `severity_${Severity}`> = {
  type: 'pagerduty',
  names: { short: 'PagerDuty', long: 'PagerDuty (Events API v2)' },
  carriesReports: false,
  fields: [
    {
      name: 'routing_key',
      label: 'Routing key',
      input: 'secret',
      grow: true,
      mono: true,
      hint: 'The integration key of a PagerDuty service (Events API v2).',
    },
    {
      map: 'severity',
      legend: 'Severity map',
      hint: 'The PagerDuty severity each trigger severity is sent as.',
      choices: PAGERDUTY_SEVERITIES,
    },
  ],
  values: (config) => ({
    routing_key: config.routing_key ?? '',
    ...mapValues('severity', config.severity_map, PAGERDUTY_DEFAULTS),
  }),
  target: (config) => `routing key ${config.routing_key ?? ''}`,
  isComplete: (given) => given('routing_key'),
  configOf: (own, values) => ({ routing_key: own('routing_key'), severity_map: mapOf('severity', values) }),
};
