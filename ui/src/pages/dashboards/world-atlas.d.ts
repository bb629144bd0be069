// world-atlas ships its TopoJSON without types; Vite imports the file as a module.
declare module 'world-atlas/countries-110m.json' {
  import type { GeometryCollection, Topology } from 'topojson-specification';

  const atlas: Topology<{ countries: GeometryCollection<{ name: string }>; land: GeometryCollection }>;
  export default atlas;
}
