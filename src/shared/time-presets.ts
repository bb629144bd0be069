/**
 * The time range presets, one vocabulary for the query API, the web UI's pickers,
 * reports' labels and the CLI: each preset's key, its label, its short name (xlsx sheet
 * names) and its span. `today` and `yesterday` are UTC calendar days, not spans (0).
 * Beyond these the API also reads `last_<n>_<minutes|hours|days>`.
 */
export const TIME_PRESETS = [
  { value: 'last_5_minutes', label: 'Last 5 minutes', short: '5m', ms: 5 * 60_000 },
  { value: 'last_15_minutes', label: 'Last 15 minutes', short: '15m', ms: 15 * 60_000 },
  { value: 'last_hour', label: 'Last hour', short: '1h', ms: 3_600_000 },
  { value: 'last_4_hours', label: 'Last 4 hours', short: '4h', ms: 4 * 3_600_000 },
  { value: 'last_24_hours', label: 'Last 24 hours', short: '24h', ms: 86_400_000 },
  { value: 'last_7_days', label: 'Last 7 days', short: '7d', ms: 7 * 86_400_000 },
  { value: 'last_30_days', label: 'Last 30 days', short: '30d', ms: 30 * 86_400_000 },
  { value: 'today', label: 'Today (UTC)', short: 'today', ms: 0 },
  { value: 'yesterday', label: 'Yesterday (UTC)', short: 'yesterday', ms: 0 },
] as const;

export type TimePreset = (typeof TIME_PRESETS)[number];

/** A query's range when it names none. */
export const DEFAULT_PRESET = 'last_hour';

/** What a live tail (the web UI's and the CLI's) keeps in view. */
export const TAIL_WINDOW = 'last_15_minutes';

/** The preset named `value`, if it is one of the table's. */
export const presetNamed = (value: string): TimePreset | undefined =>
  TIME_PRESETS.find((p) => p.value === value);
