/**
 * The `map` visualization, defined once for the web UI's map (ui/src/pages/dashboards/
 * charts/CountryMap.tsx, d3-geo) and the report's map image (src/export/charts.ts, vega-lite), so
 * a report looks like the dashboard it came from: which events a widget's results place in
 * which country, the colour steps and their legend, the projection, what the map leaves
 * out. No imports: the UI's bundle takes it as is (the atlas and the ISO code tables are
 * passed in by the drawing code, which loads them when it draws a map).
 *
 * The data are TopN or LastN items read with GeoIP (`add_geoip_data`): an item whose
 * `geo.country_code` is set is placed in that country; any other (a private or unknown
 * address, a value that is no address) is unplaced.
 */

/** The projection of both maps: d3-geo's `geoEqualEarth`, vega-lite's `equalEarth`. */
export const COUNTRY_MAP_PROJECTION = 'equalEarth';

/** Height over width of the atlas in that projection, without the countries left out. */
export const COUNTRY_MAP_ASPECT = 0.439;

/** Atlas ids (ISO 3166-1 numeric) neither map draws: Antarctica, where no logs come from. */
export const COUNTRY_MAP_LEFT_OUT: ReadonlySet<string> = new Set(['010']);

/**
 * Shapes of world-atlas's countries-110m that carry no numeric id, by their name, with the
 * id the ISO tables give the country (Kosovo's user-assigned XK is 983 there).
 */
const UNNUMBERED: Readonly<Record<string, string>> = { Kosovo: '983' };

/** How many colour steps the scale has at most. */
export const COUNTRY_MAP_STEPS = 5;

/**
 * The colours: a sequential blue ramp from few to many events, per theme. On a light
 * ground (the web UI's light theme, every report) few events are pale and many dark; on a
 * dark ground the other way round, so that many events always stand out most.
 */
export const COUNTRY_MAP_COLORS = {
  light: ['#b9d5ee', '#8abbe0', '#4f93cc', '#2166ac', '#08306b'],
  dark: ['#1f3a60', '#2a5a9c', '#4682d2', '#7fb0ef', '#cfe3ff'],
} as const;

/** Countries without events, and the borders between countries, per theme. */
export const COUNTRY_MAP_NO_DATA = { light: '#e3e6ea', dark: '#2c333d' } as const;
export const COUNTRY_MAP_BORDER = { light: '#ffffff', dark: '#171b21' } as const;

export type CountryMapTheme = keyof typeof COUNTRY_MAP_COLORS;

/** Why a map widget is a table: its values carry no GeoIP data (the UI and the report say it). */
export const COUNTRY_MAP_NO_GEO =
  'No map: none of these values is an address GeoIP places (a map counts IP addresses by country).';

/** What an item of a TopN or LastN result holds that the map reads. */
interface Item {
  value?: unknown;
  count?: unknown;
  geo?: { country_code?: unknown; country?: unknown } | null;
}

/** The events of one country. */
export interface CountryCount {
  /** ISO 3166-1 alpha-2, as GeoIP gives it ("US") */
  code: string;
  /** its English name as GeoIP gives it, else the code */
  name: string;
  count: number;
  /** how many listed values (addresses) it holds */
  values: number;
}

/** A map widget's results as the map reads them. */
export interface CountryMapData {
  /** Countries with events, most events first (then by name). */
  countries: CountryCount[];
  /** Events of listed values that no country holds (private, unknown, not an address). */
  unplaced: number;
  /** How many listed values those are. */
  unplacedValues: number;
  /** Events of all listed values. */
  total: number;
  /** Whether any item carries GeoIP data at all: without, the results are no map. */
  hasGeo: boolean;
}

const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** The per-country events of a map widget's results (TopN or LastN items, with `geo`). */
export function countryMapData(results: unknown): CountryMapData {
  const items = (results as { items?: unknown } | null | undefined)?.items;
  const list: Item[] = Array.isArray(items) ? (items as Item[]) : [];
  const byCode = new Map<string, CountryCount>();
  let unplaced = 0;
  let unplacedValues = 0;
  let total = 0;
  let hasGeo = false;
  for (const item of list) {
    const n = count(item?.count);
    total += n;
    const geo = item?.geo;
    if (geo && typeof geo === 'object') hasGeo = true;
    const code = text(geo?.country_code)?.toUpperCase();
    if (!code || !/^[A-Z]{2}$/.test(code)) {
      unplaced += n;
      unplacedValues += 1;
      continue;
    }
    const c = byCode.get(code) ?? { code, name: text(geo?.country) ?? code, count: 0, values: 0 };
    c.count += n;
    c.values += 1;
    byCode.set(code, c);
  }
  const countries = [...byCode.values()].sort((a, b) => b.count - a.count || a.name.localeCompare(b.name));
  return { countries, unplaced, unplacedValues, total, hasGeo };
}

/** One colour step: the counts from..to (inclusive), its legend label, its place in the ramp. */
export interface ScaleStep {
  from: number;
  to: number;
  label: string;
  /** index into COUNTRY_MAP_COLORS[theme] */
  shade: number;
}

export interface CountryScale {
  steps: ScaleStep[];
  /** The step of a count (-1 for none: no events). */
  stepOf(count: number): number;
}

const numberText = (n: number) => n.toLocaleString('en-US');

/** 1, 2, 5, 10, 20, 50, …: round bounds up to `max`. */
function ladder(max: number): number[] {
  const out: number[] = [];
  for (let p = 1; p <= max; p *= 10) for (const m of [1, 2, 5]) if (m * p <= max) out.push(m * p);
  return out;
}

/**
 * The steps of the colour scale for counts up to `max`: at most COUNTRY_MAP_STEPS, their
 * lower bounds round numbers spaced evenly on a logarithmic scale (counts of events by
 * country span orders of magnitude: an even split would leave all but the largest
 * country in the first step); up to 5 events, a step per count. Fewer steps take colours
 * spread over the ramp, the last step always the darkest.
 */
export function countryScale(max: number): CountryScale {
  const top = Math.max(0, Math.floor(max));
  let lows: number[];
  if (top <= 0) lows = [];
  else if (top <= COUNTRY_MAP_STEPS) lows = Array.from({ length: top }, (_, i) => i + 1);
  else {
    lows = [1];
    const candidates = ladder(top);
    for (let k = 1; k < COUNTRY_MAP_STEPS; k++) {
      const target = Math.log(top ** (k / COUNTRY_MAP_STEPS));
      const prev = lows[lows.length - 1] as number;
      const next = candidates.filter((c) => c > prev);
      if (!next.length) break;
      let best = next[0] as number;
      for (const c of next) if (Math.abs(Math.log(c) - target) < Math.abs(Math.log(best) - target)) best = c;
      lows.push(best);
    }
  }
  const n = lows.length;
  const steps = lows.map((from, i) => {
    const to = i + 1 < n ? (lows[i + 1] as number) - 1 : top;
    return {
      from,
      to,
      label: from === to ? numberText(from) : `${numberText(from)}–${numberText(to)}`,
      shade: Math.round(((i + 1) * COUNTRY_MAP_STEPS) / n) - 1,
    };
  });
  return {
    steps,
    stepOf(c: number) {
      if (!(c >= 1)) return -1;
      for (let i = n - 1; i >= 0; i--) if (c >= (steps[i] as ScaleStep).from) return i;
      return -1;
    },
  };
}

/** A shape of the atlas (world-atlas countries-110m) as far as the map reads it. */
export interface AtlasGeometry {
  id?: string | number;
  properties?: { name?: string } | null;
}

/** The ISO 3166-1 numeric id of an atlas shape ("840"), or undefined. */
export function atlasId(g: AtlasGeometry): string | undefined {
  if (g.id !== undefined && g.id !== null && g.id !== '') return String(g.id).padStart(3, '0');
  const name = g.properties?.name;
  return name ? UNNUMBERED[name] : undefined;
}

/** A country the map colours: its counts, its atlas id, its step of the scale. */
export interface PlacedCountry extends CountryCount {
  id: string;
  step: number;
}

/** What a map draws of its data: the countries it colours, those too small for the atlas, the scale. */
export interface CountryMapLayout {
  /** By atlas id. */
  drawn: Map<string, PlacedCountry>;
  /** Countries the atlas has no shape for (Singapore, Malta, … at 1:110m), most events first. */
  offMap: CountryCount[];
  scale: CountryScale;
}

/**
 * Joins the data with the atlas: `numericOf` maps an alpha-2 code to its ISO 3166-1
 * numeric code (i18n-iso-countries' alpha2ToNumeric), `shapes` holds the atlas ids drawn.
 */
export function layoutCountryMap(
  data: CountryMapData,
  numericOf: (alpha2: string) => string | undefined,
  shapes: ReadonlySet<string>,
): CountryMapLayout {
  const scale = countryScale(data.countries[0]?.count ?? 0);
  const drawn = new Map<string, PlacedCountry>();
  const offMap: CountryCount[] = [];
  for (const c of data.countries) {
    const id = numericOf(c.code);
    if (id && shapes.has(id)) drawn.set(id, { ...c, id, step: scale.stepOf(c.count) });
    else offMap.push(c);
  }
  return { drawn, offMap, scale };
}

const eventsText = (n: number) => `${numberText(n)} event${n === 1 ? '' : 's'}`;

/** "United States: 1,204": a country's tooltip. */
export const countryTitle = (name: string, n: number) => `${name}: ${numberText(n)}`;

/**
 * What the map cannot show, a line each (beside the UI's map, under the report's): the
 * events no country holds, and the countries too small for the atlas.
 */
export function countryMapNotes(data: CountryMapData, offMap: readonly CountryCount[]): string[] {
  const notes: string[] = [];
  if (data.unplaced > 0)
    notes.push(
      `Not placed: ${eventsText(data.unplaced)} (${numberText(data.unplacedValues)} value${data.unplacedValues === 1 ? '' : 's'}) with no country (private or unknown addresses).`,
    );
  if (offMap.length > 0) {
    const shown = offMap.slice(0, 5).map((c) => `${c.name} (${numberText(c.count)})`);
    const more = offMap.length > shown.length ? `, and ${offMap.length - shown.length} more` : '';
    notes.push(`Too small for the map: ${shown.join(', ')}${more}.`);
  }
  return notes;
}

/** A sentence for the map's accessible name: the countries with the most events, and what is not placed. */
export function countryMapSummary(title: string, data: CountryMapData, top = 5): string {
  if (!data.countries.length) return `${title}: map of events by country, no country placed`;
  const shown = data.countries.slice(0, top).map((c) => `${c.name} ${numberText(c.count)}`);
  const rest = data.countries.length - shown.length;
  const parts = [
    `${title}: map of events by country, ${data.countries.length} ${data.countries.length === 1 ? 'country' : 'countries'}`,
    `most events: ${shown.join(', ')}${rest > 0 ? `, and ${rest} more` : ''}`,
  ];
  if (data.unplaced > 0) parts.push(`${eventsText(data.unplaced)} not placed`);
  return parts.join('; ');
}
