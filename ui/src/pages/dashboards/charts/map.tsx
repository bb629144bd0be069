import { COUNTRY_MAP_NO_GEO, type CountryMapData, countryMapData } from '@shared/country-map';
import { lazy, Suspense } from 'react';
import { type QueryData, table } from './data';
import { DataTable } from './table';

/**
 * The map of countries, with the atlas and d3-geo: a chunk of its own, loaded on the first
 * map. Should the chunk not load (a deploy replaced it), the countries are a table.
 */
const CountryMap = lazy(() =>
  import('./CountryMap').catch(() => ({
    default: ({ data, title }: { data: CountryMapData; title: string }) => (
      <>
        <p className="muted dash-map-note">The map could not be loaded; reload the page to see it.</p>
        <DataTable
          t={{ columns: ['country', 'events'], rows: data.countries.map((c) => [c.name, c.count]) }}
          caption={title}
        />
      </>
    ),
  })),
);

/**
 * The `map` kind: TopN/LastN values placed by GeoIP (the dashboard asks for it on map
 * widgets) as countries on a map; values GeoIP does not place stay a table, saying why.
 */
export function MapChart({ data, title, fields }: { data: QueryData; title: string; fields?: unknown }) {
  const countries = countryMapData(data.results);
  if (countries.hasGeo)
    return (
      <Suspense fallback={<p className="muted">Loading the map…</p>}>
        <CountryMap data={countries} title={title} />
      </Suspense>
    );
  const t = table(data, fields);
  return (
    <>
      {t.rows.length > 0 && <p className="muted dash-map-note">{COUNTRY_MAP_NO_GEO}</p>}
      <DataTable t={t} caption={title} />
    </>
  );
}
