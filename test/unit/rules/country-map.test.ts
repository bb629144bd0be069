import { createRequire } from 'node:module';
import { geoEqualEarth, geoPath } from 'd3-geo';
import type { FeatureCollection } from 'geojson';
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import { describe, expect, it } from 'vitest';
import { chartSpec, chartSvg } from '../../../src/export/charts.js';
import { countryAtlas, numericCountryCode } from '../../../src/export/country-atlas.js';
import { chartFor, mapChart, noMapNotes } from '../../../src/features/reports/report-charts.js';
import { widgetTable } from '../../../src/features/reports/report-widgets.js';
import {
  atlasId,
  COUNTRY_MAP_ASPECT,
  COUNTRY_MAP_COLORS,
  COUNTRY_MAP_LEFT_OUT,
  COUNTRY_MAP_STEPS,
  countryMapData,
  countryMapNotes,
  countryMapSummary,
  countryScale,
  countryTitle,
  layoutCountryMap,
} from '../../../src/shared/country-map.js';

// The map visualization's one definition (src/shared/country-map.ts), shared by the web
// UI's map and the report's: per-country events from GeoIP'd items, the colour steps, the
// join with the atlas, and the report's vega-lite map built from them.

const US = { country_code: 'US', country: 'United States' };
const GB = { country_code: 'GB', country: 'United Kingdom' };
const AU = { country_code: 'AU', country: 'Australia' };
const SG = { country_code: 'SG', country: 'Singapore' };

const items = [
  { value: '8.8.8.8', count: 30, share: 0.5, geo: US },
  { value: '8.8.4.4', count: 10, share: 0.1, geo: US },
  { value: '81.2.69.142', count: 12, share: 0.2, geo: GB },
  { value: '1.1.1.1', count: 5, share: 0.1, geo: AU },
  { value: '10.0.0.5', count: 4, share: 0.05 },
  { value: '192.168.1.9', count: 2, share: 0.03 },
  { value: '203.116.1.1', count: 1, share: 0.02, geo: SG },
];

describe('countryMapData', () => {
  it('adds up events per country, most first, and counts the unplaced', () => {
    const d = countryMapData({ items, total: 64, other: 0 });
    expect(d.hasGeo).toBe(true);
    expect(d.countries).toEqual([
      { code: 'US', name: 'United States', count: 40, values: 2 },
      { code: 'GB', name: 'United Kingdom', count: 12, values: 1 },
      { code: 'AU', name: 'Australia', count: 5, values: 1 },
      { code: 'SG', name: 'Singapore', count: 1, values: 1 },
    ]);
    expect(d.unplaced).toBe(6);
    expect(d.unplacedValues).toBe(2);
    expect(d.total).toBe(64);
  });

  it('tells results without GeoIP data (a TopN of host names) from a map', () => {
    const d = countryMapData({ items: [{ value: 'web-1', count: 3 }] });
    expect(d.hasGeo).toBe(false);
    expect(d.countries).toEqual([]);
    expect(d.unplaced).toBe(3);
    for (const r of [undefined, null, {}, { items: 'x' }, { events: [] }])
      expect(countryMapData(r)).toMatchObject({ hasGeo: false, countries: [], total: 0 });
  });

  it('places by the alpha-2 code, naming by the code when GeoIP has no name; a geo without a code is unplaced', () => {
    const d = countryMapData({
      items: [
        { value: 'a', count: 2, geo: { country_code: 'de' } },
        { value: 'b', count: 1, geo: { city: 'Nowhere' } },
        { value: 'c', count: 7, geo: { country_code: 'ZZZ' } },
      ],
    });
    expect(d.hasGeo).toBe(true);
    expect(d.countries).toEqual([{ code: 'DE', name: 'DE', count: 2, values: 1 }]);
    expect(d.unplaced).toBe(8);
  });
});

describe('countryScale', () => {
  it('has at most COUNTRY_MAP_STEPS steps with round lower bounds, log-spaced, covering 1..max', () => {
    const s = countryScale(1200);
    expect(s.steps).toHaveLength(COUNTRY_MAP_STEPS);
    expect(s.steps.map((x) => x.from)).toEqual([1, 5, 20, 50, 200]);
    expect(s.steps.map((x) => x.label)).toEqual(['1–4', '5–19', '20–49', '50–199', '200–1,200']);
    expect(s.steps.map((x) => x.shade)).toEqual([0, 1, 2, 3, 4]);
    for (const [i, step] of s.steps.entries()) {
      expect(step.to).toBeGreaterThanOrEqual(step.from);
      if (i > 0) expect(step.from).toBe((s.steps[i - 1]?.to ?? 0) + 1);
    }
    expect(s.stepOf(0)).toBe(-1);
    expect(s.stepOf(1)).toBe(0);
    expect(s.stepOf(4)).toBe(0);
    expect(s.stepOf(5)).toBe(1);
    expect(s.stepOf(1200)).toBe(4);
  });

  it('a step per count up to five; fewer steps spread over the ramp, the largest the darkest', () => {
    expect(countryScale(3).steps.map((x) => [x.label, x.shade])).toEqual([
      ['1', 1],
      ['2', 2],
      ['3', 4],
    ]);
    expect(countryScale(5).steps.map((x) => x.label)).toEqual(['1', '2', '3', '4', '5']);
    expect(countryScale(1).steps).toEqual([{ from: 1, to: 1, label: '1', shade: 4 }]);
    expect(countryScale(0).steps).toEqual([]);
    const twelve = countryScale(12).steps;
    expect(twelve.map((x) => x.label)).toEqual(['1', '2–4', '5–9', '10–12']);
    expect(twelve.at(-1)?.shade).toBe(COUNTRY_MAP_STEPS - 1);
    for (const max of [6, 7, 9, 13, 99, 100, 101, 999, 12_345, 1e6]) {
      const steps = countryScale(max).steps;
      expect(steps.length, String(max)).toBeGreaterThanOrEqual(3);
      expect(steps.length).toBeLessThanOrEqual(COUNTRY_MAP_STEPS);
      expect(steps[0]?.from).toBe(1);
      expect(steps.at(-1)?.to).toBe(max);
      expect(new Set(steps.map((x) => x.shade)).size).toBe(steps.length);
    }
  });

  it('has a colour for each shade in both themes', () => {
    expect(COUNTRY_MAP_COLORS.light).toHaveLength(COUNTRY_MAP_STEPS);
    expect(COUNTRY_MAP_COLORS.dark).toHaveLength(COUNTRY_MAP_STEPS);
  });
});

describe('the map joined with the atlas', () => {
  const atlas = countryAtlas();

  it('numbers the atlas shapes as ISO 3166-1 numeric, Kosovo too, and leaves Antarctica out', () => {
    expect(atlasId({ id: '840' })).toBe('840');
    expect(atlasId({ id: 36 })).toBe('036');
    expect(atlasId({ properties: { name: 'Kosovo' } })).toBe('983');
    expect(atlasId({ properties: { name: 'Somaliland' } })).toBeUndefined();
    expect(atlas.ids.has('840')).toBe(true);
    expect(atlas.ids.has('983')).toBe(true);
    expect(atlas.ids.has('010')).toBe(false);
    expect(COUNTRY_MAP_LEFT_OUT.has('010')).toBe(true);
    expect(numericCountryCode('US')).toBe('840');
    expect(numericCountryCode('AU')).toBe('036');
    expect(numericCountryCode('XK')).toBe('983');
  });

  it('colours the countries the atlas has and lists the ones too small for it', () => {
    const data = countryMapData({ items });
    const layout = layoutCountryMap(data, numericCountryCode, atlas.ids);
    expect([...layout.drawn.keys()]).toEqual(['840', '826', '036']);
    expect(layout.scale.steps.map((s) => s.label)).toEqual(['1', '2–4', '5–9', '10–19', '20–40']);
    expect([...layout.drawn.values()].map((c) => c.step)).toEqual([4, 3, 2]);
    expect(layout.drawn.get('840')).toMatchObject({ code: 'US', count: 40, step: 4 });
    expect(layout.offMap.map((c) => c.code)).toEqual(['SG']);
    expect(countryMapNotes(data, layout.offMap)).toEqual([
      'Not placed: 6 events (2 values) with no country (private or unknown addresses).',
      'Too small for the map: Singapore (1).',
    ]);
    expect(countryTitle('United States', 1204)).toBe('United States: 1,204');
    expect(countryMapSummary('Sources', data)).toBe(
      'Sources: map of events by country, 4 countries; most events: United States 40, United Kingdom 12, Australia 5, Singapore 1; 6 events not placed',
    );
  });

  it('keeps COUNTRY_MAP_ASPECT the shape of the projected atlas', () => {
    const require = createRequire(import.meta.url);
    const topo = require('world-atlas/countries-110m.json') as Topology<{ countries: GeometryCollection }>;
    const all = feature(topo, topo.objects.countries) as FeatureCollection;
    const kept: FeatureCollection = {
      type: 'FeatureCollection',
      features: all.features.filter((f) => !COUNTRY_MAP_LEFT_OUT.has(String(f.id))),
    };
    const [[x0, y0], [x1, y1]] = geoPath(geoEqualEarth().fitWidth(960, kept)).bounds(kept);
    expect((y1 - y0) / (x1 - x0)).toBeCloseTo(COUNTRY_MAP_ASPECT, 2);
  });
});

describe('the report map', () => {
  it('is a vega-lite geoshape over the inline atlas, in the same projection and steps', async () => {
    const c = mapChart('TopN', { items }, 'Sources');
    expect(c?.chart.kind).toBe('map');
    expect(c?.chart.points).toEqual([
      { x: 'United States', y: 40 },
      { x: 'United Kingdom', y: 12 },
      { x: 'Australia', y: 5 },
    ]);
    expect(c?.notes).toHaveLength(2);
    const spec = chartSpec(c!.chart) as unknown as {
      projection: unknown;
      mark: { type: string };
      data: { format: unknown; values: { type: string } };
      encoding: { color: { condition: { scale: { domain: string[]; range: string[] } } } };
    };
    expect(spec.projection).toEqual({ type: 'equalEarth' });
    expect(spec.mark.type).toBe('geoshape');
    expect(spec.data.format).toEqual({ type: 'topojson', feature: 'countries' });
    expect(spec.data.values.type).toBe('Topology');
    const scale = spec.encoding.color.condition.scale;
    expect(scale.domain).toEqual(countryScale(40).steps.map((s) => s.label));
    expect(scale.range).toEqual(countryScale(40).steps.map((s) => COUNTRY_MAP_COLORS.light[s.shade]));
    const svg = await chartSvg(c!.chart);
    // A path per shape of the atlas (less Antarctica), the three countries in their colours.
    expect((svg.match(/<path /g) ?? []).length).toBeGreaterThan(170);
    for (const s of countryScale(40).steps.slice(2)) expect(svg).toContain(COUNTRY_MAP_COLORS.light[s.shade]);
    expect(svg).toContain('events per country');
  });

  it('is no map for values without GeoIP data, nor for other query types', () => {
    expect(mapChart('TopN', { items: [{ value: 'web-1', count: 3 }] }, 'Hosts')).toBeNull();
    expect(mapChart('Timeline', { buckets: [] }, 'Rate')).toBeNull();
    expect(noMapNotes('TopN', { items: [{ value: 'web-1', count: 3 }] }, 'map')).toEqual([
      'No map: none of these values is an address GeoIP places (a map counts IP addresses by country).',
    ]);
    expect(noMapNotes('TopN', { items: [] }, 'map')).toEqual([]);
    expect(noMapNotes('TopN', { items: [{ value: 'web-1', count: 3 }] }, 'bar')).toEqual([]);
    expect(chartFor('TopN', { items }, 'Sources', 'map')?.chart.kind).toBe('map');
    expect(mapChart('LastN', { items: [{ value: '8.8.8.8', count: 1, geo: US }] }, 'Last')?.chart.kind).toBe(
      'map',
    );
  });

  it('has a country column in the table under it, when the values carry GeoIP data', () => {
    const t = widgetTable('TopN', { items, total: 64, other: 0 }, { field: 'src_ip' });
    expect(t?.columns.map((c) => c.title)).toEqual(['src_ip', 'country', 'events', 'share']);
    expect(t?.rows.map((r) => r.country)).toEqual([
      'United States',
      'United States',
      'United Kingdom',
      'Australia',
      '(none)',
      '(none)',
      'Singapore',
    ]);
    const plain = widgetTable('TopN', { items: [{ value: 'web-1', count: 3, share: 1 }], total: 3 }, {});
    expect(plain?.columns.map((c) => c.key)).toEqual(['value', 'count', 'share']);
  });
});
