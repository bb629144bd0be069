/** Microsoft Teams: a Workflows webhook's URL (read back masked: the URL is the credential). */
import type { UiChannelKind } from './channel-kind.js';

export const teams: UiChannelKind<'teams', 'url'> = {
  type: 'teams',
  names: { short: 'Teams', long: 'Microsoft Teams (Workflows)' },
  carriesReports: true,
  fields: [
    {
      name: 'url',
      label: 'Workflow URL',
      input: 'url',
      grow: true,
      mono: true,
      hint: 'The URL of a Teams workflow “When a Teams webhook request is received”; shown masked once saved.',
      placeholder: 'https://prod-00.westeurope.logic.azure.com/…',
    },
  ],
  values: (config) => ({ url: config.url ?? '' }),
  target: (config) => config.url ?? '',
  isComplete: (given) => given('url'),
  configOf: (own) => ({ url: own('url') }),
};
