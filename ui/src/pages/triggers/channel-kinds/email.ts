/** Email: its recipients, typed as one text (commas, spaces or lines between addresses). */
import type { UiChannelKind } from './channel-kind.js';

export const email: UiChannelKind<'email', 'to'> = {
  type: 'email',
  names: { short: 'Email', long: 'Email' },
  carriesReports: true,
  fields: [
    { name: 'to', label: 'Recipients', grow: true, placeholder: 'oncall@example.com, ops@example.com' },
  ],
  values: (config) => ({ to: (config.to ?? []).join(', ') }),
  target: (config) => (config.to ?? []).join(', '),
  isComplete: (given) => given('to'),
  configOf: (_own, values) => ({
    to: values.to
      .split(/[,\s]+/)
      .map((a) => a.trim())
      .filter(Boolean),
  }),
};
