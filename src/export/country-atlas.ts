import { createRequire } from 'node:module';
import { alpha2ToNumeric } from 'i18n-iso-countries/index.js';
import { type AtlasGeometry, atlasId, COUNTRY_MAP_LEFT_OUT } from '../shared/country-map.js';

/**
 * The atlas the report's map draws (world-atlas countries-110m, the web UI's too), read on
 * the first map: every shape that has one carrying its ISO 3166-1 numeric id (atlasId),
 * the shapes neither map draws (COUNTRY_MAP_LEFT_OUT) taken out.
 */
export interface CountryAtlas {
  /** TopoJSON, `objects.countries` the countries */
  topology: { type: 'Topology'; objects: { countries: { geometries: AtlasGeometry[] } } };
  /** The ids of the shapes drawn. */
  ids: ReadonlySet<string>;
}

let atlas: CountryAtlas | undefined;

export function countryAtlas(): CountryAtlas {
  if (atlas) return atlas;
  // Read as a file (not a JSON module: Node 20 warns that those are experimental).
  const raw = createRequire(import.meta.url)('world-atlas/countries-110m.json') as {
    type: 'Topology';
    objects: { countries: { geometries: AtlasGeometry[] } & Record<string, unknown> } & Record<
      string,
      unknown
    >;
  } & Record<string, unknown>;
  // Shapes without an id (N. Cyprus, Somaliland) are drawn, never coloured.
  const geometries = raw.objects.countries.geometries.flatMap((g) => {
    const id = atlasId(g);
    if (id === undefined) return [g];
    return COUNTRY_MAP_LEFT_OUT.has(id) ? [] : [{ ...g, id }];
  });
  const ids = new Set<string>();
  for (const g of geometries) if (typeof g.id === 'string') ids.add(g.id);
  atlas = { topology: { ...raw, objects: { countries: { ...raw.objects.countries, geometries } } }, ids };
  return atlas;
}

/** ISO 3166-1 alpha-2 → numeric ("US" → "840"), from i18n-iso-countries' code table (no locales). */
export const numericCountryCode = (alpha2: string): string | undefined => alpha2ToNumeric(alpha2);
