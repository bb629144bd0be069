/**
 * The colours of charts, shared by the report charts (src/export/charts.ts) and the web
 * UI's charts (ui/src/pages/dashboards/charts/) so a report looks like the dashboard it
 * came from. No imports: the UI's bundle takes it as is.
 *
 * Colours that mean what they say: the worse the severity, the hotter the colour
 * (emergency, alert, critical red; error dark orange; warning amber), notice blue, info a
 * neutral grey and debug a light one.
 */
export const SEVERITY_COLORS: Readonly<Record<string, string>> = {
  emergency: '#7f0000',
  alert: '#b71c1c',
  critical: '#d32f2f',
  error: '#e65100',
  warning: '#ffb300',
  notice: '#1e88e5',
  info: '#9e9e9e',
  debug: '#d9d9d9',
};

/** The colour of what is not one of the named values (other, none). */
export const OTHER_COLOR = '#8d6e63';

/** One series or category that has no colour of its own. */
export const PLAIN_COLOR = '#4c78a8';

/** Categories without meaningful colours, in turn (Tableau 10, as vega names it). */
export const CATEGORY_PALETTE: readonly string[] = [
  '#4c78a8',
  '#f58518',
  '#e45756',
  '#72b7b2',
  '#54a24b',
  '#eeca3b',
  '#b279a2',
  '#ff9da6',
  '#9d755d',
  '#bab0ac',
];

// HTTP status classes: success green, redirects blue, client errors amber, server errors red.
const STATUS_SHADES: Readonly<Record<string, readonly string[]>> = {
  '1': ['#78909c', '#b0bec5'],
  '2': ['#2e7d32', '#66bb6a', '#a5d6a7', '#1b5e20'],
  '3': ['#1565c0', '#64b5f6', '#90caf9', '#0d47a1'],
  '4': ['#ef6c00', '#ffa726', '#ffcc80', '#e65100'],
  '5': ['#c62828', '#e57373', '#ef9a9a', '#8e0000'],
};

/** Whether a series or category name stands for the rest (other, none). */
export const isOtherName = (name: string): boolean =>
  ['other', '(other)', '(none)'].includes(name.toLowerCase());

/**
 * The fixed colour of each name when the names are severities or HTTP status codes
 * (with perhaps an "other"), else null (the category palette then).
 */
export function fixedColors(names: readonly string[]): string[] | null {
  const real = names.filter((n) => !isOtherName(n));
  if (real.length === 0) return null;
  if (real.every((n) => Object.hasOwn(SEVERITY_COLORS, n.toLowerCase()))) {
    return names.map((n) => SEVERITY_COLORS[n.toLowerCase()] ?? OTHER_COLOR);
  }
  if (real.every((n) => /^[1-5]\d\d$/.test(n))) {
    const used = new Map<string, number>();
    return names.map((n) => {
      if (isOtherName(n)) return OTHER_COLOR;
      const cls = n[0] as string;
      const shades = STATUS_SHADES[cls] ?? [OTHER_COLOR];
      const i = used.get(cls) ?? 0;
      used.set(cls, i + 1);
      return shades[i % shades.length] as string;
    });
  }
  return null;
}

/** A colour per name: fixed ones where the names have them, else the palette in turn. */
export function colorsFor(names: readonly string[]): string[] {
  return fixedColors(names) ?? names.map((_, i) => CATEGORY_PALETTE[i % CATEGORY_PALETTE.length] as string);
}
