/**
 * The `map` visualization: countries coloured by their events, as src/shared/country-map.ts
 * defines it for this map and the report's. Loaded on demand (map.tsx imports it
 * lazily): the atlas and d3-geo stay out of the initial JavaScript.
 */

import {
  atlasId,
  COUNTRY_MAP_BORDER,
  COUNTRY_MAP_COLORS,
  COUNTRY_MAP_LEFT_OUT,
  COUNTRY_MAP_NO_DATA,
  type CountryMapData,
  type CountryMapTheme,
  countryMapNotes,
  countryMapSummary,
  countryTitle,
  layoutCountryMap,
} from '@shared/country-map';
import { geoEqualEarth, geoPath } from 'd3-geo';
import type { Feature, FeatureCollection, Geometry } from 'geojson';
import { alpha2ToNumeric } from 'i18n-iso-countries/index.js';
import { useSyncExternalStore } from 'react';
import { feature } from 'topojson-client';
import atlas from 'world-atlas/countries-110m.json';
import { formatCount } from '../../../format';

/** Width of the map's coordinate space; the SVG scales to its widget (its height follows the projection). */
const WIDTH = 960;

interface Shape {
  /** ISO 3166-1 numeric, when the atlas has it */
  id: string | undefined;
  name: string;
  d: string;
}

interface Atlas {
  shapes: Shape[];
  ids: ReadonlySet<string>;
  height: number;
}

let projected: Atlas | undefined;

/** The atlas's countries as SVG paths (projected once, on the first map). */
function atlasShapes(): Atlas {
  if (projected) return projected;
  const all = feature(atlas, atlas.objects.countries) as FeatureCollection<Geometry, { name: string }>;
  const kept: Array<Feature<Geometry, { name: string }> & { code: string | undefined }> = [];
  for (const f of all.features) {
    const code = atlasId({ id: f.id, properties: f.properties });
    if (code === undefined || !COUNTRY_MAP_LEFT_OUT.has(code)) kept.push({ ...f, code });
  }
  const collection: FeatureCollection = { type: 'FeatureCollection', features: kept };
  const projection = geoEqualEarth().fitWidth(WIDTH, collection);
  const path = geoPath(projection).digits(1);
  const [[, y0], [, y1]] = path.bounds(collection);
  const shapes = kept.map((f) => ({ id: f.code, name: f.properties?.name ?? '', d: path(f) ?? '' }));
  projected = {
    shapes,
    ids: new Set(shapes.flatMap((s) => (s.id ? [s.id] : []))),
    height: Math.ceil(y1 - Math.min(0, y0)),
  };
  return projected;
}

const DARK = '(prefers-color-scheme: dark)';
function onSchemeChange(notify: () => void): () => void {
  const media = window.matchMedia?.(DARK);
  media?.addEventListener('change', notify);
  return () => media?.removeEventListener('change', notify);
}
const scheme = (): CountryMapTheme => (window.matchMedia?.(DARK).matches ? 'dark' : 'light');

export default function CountryMap({ data, title }: { data: CountryMapData; title: string }) {
  const theme = useSyncExternalStore(onSchemeChange, scheme);
  const { shapes, ids, height } = atlasShapes();
  const layout = layoutCountryMap(data, alpha2ToNumeric, ids);
  const colors = COUNTRY_MAP_COLORS[theme];
  const steps = layout.scale.steps;
  const notes = countryMapNotes(data, layout.offMap);
  return (
    <figure className="dash-map">
      <svg
        viewBox={`0 0 ${WIDTH} ${height}`}
        preserveAspectRatio="xMidYMid meet"
        role="img"
        aria-label={countryMapSummary(title, data)}
      >
        {shapes.map((s, i) => {
          const c = s.id ? layout.drawn.get(s.id) : undefined;
          const step = c ? steps[c.step] : undefined;
          return (
            <path
              // Shapes without an id (N. Cyprus, Somaliland) have only their place in the atlas.
              key={s.id ?? `shape-${i}`}
              d={s.d}
              fill={step ? colors[step.shade] : COUNTRY_MAP_NO_DATA[theme]}
              stroke={COUNTRY_MAP_BORDER[theme]}
              data-country={c?.code}
              data-count={c?.count ?? 0}
            >
              <title>{countryTitle(c?.name ?? s.name, c?.count ?? 0)}</title>
            </path>
          );
        })}
      </svg>
      <figcaption className="dash-map-foot">
        {steps.length > 0 && (
          <ul className="dash-legend" aria-label="Events per country">
            {steps.map((s) => (
              <li key={s.label}>
                <svg width="10" height="10" aria-hidden="true">
                  <rect width="10" height="10" fill={colors[s.shade]} />
                </svg>
                {s.label}
              </li>
            ))}
          </ul>
        )}
        {notes.map((n) => (
          <p key={n} className="muted dash-map-note">
            {n}
          </p>
        ))}
      </figcaption>
      <details className="dash-map-table">
        <summary>Table</summary>
        <table className="list dash-table">
          <caption className="visually-hidden">{title}: events by country</caption>
          <thead>
            <tr>
              <th scope="col">country</th>
              <th scope="col">events</th>
            </tr>
          </thead>
          <tbody>
            {data.countries.map((c) => (
              <tr key={c.code}>
                <td>{c.name}</td>
                <td>{formatCount(c.count)}</td>
              </tr>
            ))}
            {data.unplaced > 0 && (
              <tr>
                <td>(not placed)</td>
                <td>{formatCount(data.unplaced)}</td>
              </tr>
            )}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
