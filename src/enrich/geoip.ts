import { createRequire } from 'node:module';
import { BlockList, isIP } from 'node:net';
import maxmind, { type Reader, type Response } from 'maxmind';

/**
 * GeoIP at query time: a `maxmind` reader over the bundled CC0
 * country database, or over a GeoLite2-City (or compatible) file named in config. Lookups
 * happen when results are read, so a newer database improves old events too.
 */

/** What the database knows of an address (TopN/LastN `geo`); a key is absent when unknown. */
export interface GeoInfo {
  country_code?: string;
  country?: string;
  city?: string;
  lat?: number;
  lon?: number;
  asn?: number;
}

/** The lookup the query layer uses; `undefined` for private, reserved or unknown addresses. */
export interface GeoIpLookup {
  lookup(ip: string): GeoInfo | undefined;
}

/** The npm package and file of the bundled database (IPv4 and IPv6 in one file). */
const BUNDLED_DB = '@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb';

/** The bundled country database's path, resolved like an import (no node_modules path baked in). */
export function bundledCountryDbPath(): string {
  return createRequire(import.meta.url).resolve(BUNDLED_DB);
}

// Addresses no database can place (RFC 6890 special-purpose blocks, multicast, reserved).
// Checked before any lookup: the bundled database wrongly places some of them
// (192.168.0.0/16 and 203.0.113.0/24 in AU, 2001:db8::/32 in JP).
const NOT_GLOBAL = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NOT_GLOBAL.addSubnet(net, bits, 'ipv4');
}
// IPv6 outside 2000::/3 is never global unicast; inside it these blocks are not either.
const GLOBAL_V6 = new BlockList();
GLOBAL_V6.addSubnet('2000::', 3, 'ipv6');
for (const [net, bits] of [
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['3fff::', 20],
] as const) {
  NOT_GLOBAL.addSubnet(net, bits, 'ipv6');
}

/** `::ffff:a.b.c.d` (as dual-stack sockets report IPv4 peers) as its IPv4 address. */
function unmapIpv4(ip: string): string | undefined {
  let canonical: string;
  try {
    canonical = new URL(`http://[${ip}]/`).hostname;
  } catch {
    return undefined;
  }
  const m = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(canonical);
  if (!m) return undefined;
  const hi = Number.parseInt(m[1] ?? '0', 16);
  const lo = Number.parseInt(m[2] ?? '0', 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * The address to look up when `value` is a globally routable IP address (IPv4-mapped IPv6
 * becomes its IPv4 address), else undefined: not an address, private, loopback,
 * link-local, documentation, multicast or otherwise reserved.
 */
export function globalAddress(value: string): string | undefined {
  const family = isIP(value);
  if (family === 4) return NOT_GLOBAL.check(value, 'ipv4') ? undefined : value;
  if (family !== 6 || value.includes('%')) return undefined;
  const v4 = unmapIpv4(value);
  if (v4 !== undefined) return globalAddress(v4);
  return GLOBAL_V6.check(value, 'ipv6') && !NOT_GLOBAL.check(value, 'ipv6') ? value : undefined;
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

/** The English name of an ISO 3166-1 alpha-2 code, or undefined when ICU has none. */
export function countryName(code: string): string | undefined {
  try {
    const name = regionNames.of(code);
    return name && name !== code ? name : undefined;
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const at = (v: unknown, ...path: string[]): unknown => {
  let cur = v;
  for (const key of path) cur = isObject(cur) ? cur[key] : undefined;
  return cur;
};
const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * A database record as GeoInfo. Reads both layouts in use: MaxMind's GeoIP2/GeoLite2
 * (`country.iso_code`, `city.names.en`, `location.latitude`, `traits.autonomous_system_number`)
 * and the flat one of ip-location-db (`country_code`, `city`, `latitude`,
 * `autonomous_system_number`).
 */
export function geoFromRecord(record: unknown): GeoInfo | undefined {
  if (!isObject(record)) return undefined;
  const geo: GeoInfo = {};
  const code = text(at(record, 'country', 'iso_code')) ?? text(record.country_code);
  // ZZ means "unknown" in ip-location-db's data.
  if (code && /^[A-Z]{2}$/.test(code) && code !== 'ZZ') {
    geo.country_code = code;
    const name = text(at(record, 'country', 'names', 'en')) ?? countryName(code);
    if (name) geo.country = name;
  }
  const city = text(at(record, 'city', 'names', 'en')) ?? text(record.city);
  if (city) geo.city = city;
  const lat = num(at(record, 'location', 'latitude')) ?? num(record.latitude);
  const lon = num(at(record, 'location', 'longitude')) ?? num(record.longitude);
  if (lat !== undefined && lon !== undefined) {
    geo.lat = lat;
    geo.lon = lon;
  }
  const asn = num(record.autonomous_system_number) ?? num(at(record, 'traits', 'autonomous_system_number'));
  if (asn !== undefined) geo.asn = asn;
  return Object.keys(geo).length > 0 ? geo : undefined;
}

export interface GeoIpOptions {
  /** A GeoLite2-City (or compatible) file; empty for the bundled country database. */
  cityPath: string;
  /** Overrides the bundled database's path (tests); null opens none. */
  countryPath?: string | null;
}

/** A reader over one database (see GeoIpLookup). Open it once, at start-up. */
export class GeoIp implements GeoIpLookup {
  private constructor(
    private readonly reader: Reader<Response>,
    /** Which database answers, for logs and docs/api/geoip-actions.md. */
    readonly source: { kind: 'city' | 'country'; path: string; databaseType: string },
  ) {}

  /**
   * Opens the configured city database, falling back to the bundled country database
   * when there is none or it cannot be read. Never throws: what went wrong comes back as
   * warnings for the caller to log once, and `geoip` is null when no database opened.
   */
  static async open(opts: GeoIpOptions): Promise<{ geoip: GeoIp | null; warnings: string[] }> {
    const warnings: string[] = [];
    if (opts.cityPath) {
      try {
        const reader = await maxmind.open<Response>(opts.cityPath);
        const kind = {
          kind: 'city' as const,
          path: opts.cityPath,
          databaseType: reader.metadata.databaseType,
        };
        return { geoip: new GeoIp(reader, kind), warnings };
      } catch (err) {
        warnings.push(
          `GeoIP: cannot read the database in geoipCityPath (${opts.cityPath}): ${(err as Error).message}; ` +
            'using the bundled country database instead (no city or coordinates).',
        );
      }
    }
    let countryPath = opts.countryPath;
    if (countryPath === undefined) {
      try {
        countryPath = bundledCountryDbPath();
      } catch (err) {
        warnings.push(
          `GeoIP: the bundled country database is not installed (${(err as Error).message}); ` +
            'add_geoip_data adds nothing.',
        );
        return { geoip: null, warnings };
      }
    }
    if (countryPath === null) return { geoip: null, warnings };
    try {
      const reader = await maxmind.open<Response>(countryPath);
      const source = {
        kind: 'country' as const,
        path: countryPath,
        databaseType: reader.metadata.databaseType,
      };
      return { geoip: new GeoIp(reader, source), warnings };
    } catch (err) {
      warnings.push(
        `GeoIP: cannot read the bundled country database (${countryPath}): ${(err as Error).message}; ` +
          'add_geoip_data adds nothing.',
      );
      return { geoip: null, warnings };
    }
  }

  lookup(ip: string): GeoInfo | undefined {
    const address = globalAddress(ip);
    if (address === undefined) return undefined;
    // An IPv4-only database would walk an IPv6 address's bits as if they were IPv4.
    if (this.reader.metadata.ipVersion === 4 && isIP(address) === 6) return undefined;
    try {
      return geoFromRecord(this.reader.get(address));
    } catch {
      return undefined;
    }
  }
}

/** Items (TopN, LastN) with `geo` on those whose value is an address the database places. */
export function withGeo<T extends { value: unknown }>(
  items: readonly T[],
  geoip: GeoIpLookup,
): (T & { geo?: GeoInfo })[] {
  return items.map((item) => {
    const geo = typeof item.value === 'string' ? geoip.lookup(item.value) : undefined;
    return geo ? { ...item, geo } : item;
  });
}
