/** Slack: an incoming webhook's URL (read back masked: the URL is the credential). */
import type { UiChannelKind } from './channel-kind.js';

export const slack: UiChannelKind<'slack', 'url'> = {
  type: 'slack',
  names: { short: 'Slack', long: 'Slack incoming webhook' },
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
  ],
  values: (config) => ({ url: config.url ?? '' }),
  target: (config) => config.url ?? '',
  isComplete: (given) => given('url'),
  configOf: (own) => ({ url: own('url') }),
};
