import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bundledCountryDbPath,
  countryName,
  GeoIp,
  geoFromRecord,
  globalAddress,
  withGeo,
} from '../../../src/enrich/geoip.js';
import { cityDb } from './mmdb-writer.js';

describe('GeoIP with the bundled CC0 country database', () => {
  let geoip: GeoIp;
  beforeAll(async () => {
    const opened = await GeoIp.open({ cityPath: '' });
    expect(opened.warnings).toEqual([]);
    geoip = opened.geoip as GeoIp;
  });

  it('resolves the database from the npm package', () => {
    const file = bundledCountryDbPath();
    expect(file).toMatch(/@ip-location-db[\\/]geo-whois-asn-country-mmdb[\\/]geo-whois-asn-country\.mmdb$/);
    expect(existsSync(file)).toBe(true);
    expect(geoip.source).toMatchObject({ kind: 'country', path: file });
  });

  // What this database says (it places 1.1.1.1, APNIC's research block, in AU).
  it.each([
    ['8.8.8.8', 'US', 'United States'],
    ['9.9.9.9', 'US', 'United States'],
    ['208.67.222.222', 'US', 'United States'],
    ['1.1.1.1', 'AU', 'Australia'],
    ['81.2.69.142', 'GB', 'United Kingdom'],
    ['193.0.6.139', 'NL', 'Netherlands'],
    ['77.88.8.8', 'RU', 'Russia'],
    ['133.242.0.3', 'JP', 'Japan'],
    ['200.160.2.3', 'BR', 'Brazil'],
    ['196.25.1.1', 'ZA', 'South Africa'],
    ['2001:4860:4860::8888', 'US', 'United States'],
    ['::ffff:8.8.8.8', 'US', 'United States'],
    ['::ffff:808:808', 'US', 'United States'],
  ])('%s is in %s', (ip, code, name) => {
    // Country only: no city, coordinates or ASN keys at all.
    expect(geoip.lookup(ip)).toEqual({ country_code: code, country: name });
  });

  it.each([
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1', // the database wrongly says AU
    '203.0.113.5', // documentation; the database says AU
    '127.0.0.1',
    '100.64.0.1',
    '169.254.1.1',
    '0.0.0.0',
    '224.0.0.251',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd12:3456::1',
    '2001:db8::1', // documentation; the database says JP
    'ff02::1',
    '::ffff:10.0.0.1',
    'not-an-ip',
    '8.8.8.8:53',
    '',
  ])('%s gets no geo', (ip) => {
    expect(geoip.lookup(ip)).toBeUndefined();
  });

  it('adds geo only to items whose value is an address it places', () => {
    const items = [
      { value: '8.8.8.8', count: 3 },
      { value: '10.0.0.1', count: 2 },
      { value: 'web-1', count: 1 },
      { value: 404, count: 1 },
      { value: null, count: 1 },
    ];
    expect(withGeo(items, geoip)).toEqual([
      { value: '8.8.8.8', count: 3, geo: { country_code: 'US', country: 'United States' } },
      { value: '10.0.0.1', count: 2 },
      { value: 'web-1', count: 1 },
      { value: 404, count: 1 },
      { value: null, count: 1 },
    ]);
  });
});

describe('GeoIP helpers', () => {
  it('tells global addresses from the rest', () => {
    expect(globalAddress('8.8.8.8')).toBe('8.8.8.8');
    expect(globalAddress('::ffff:1.1.1.1')).toBe('1.1.1.1');
    expect(globalAddress('2a00:1450:4001::1')).toBe('2a00:1450:4001::1');
    expect(globalAddress('2002:c000:204::1')).toBeUndefined(); // 6to4
    expect(globalAddress('3fff::1')).toBeUndefined(); // documentation (RFC 9637)
    expect(globalAddress('1.2.3')).toBeUndefined();
  });

  it('names countries in English from their code', () => {
    expect(countryName('DE')).toBe('Germany');
    expect(countryName('US')).toBe('United States');
    expect(countryName('XX')).toBeUndefined();
  });

  it('reads both record layouts and leaves unknown keys out', () => {
    expect(geoFromRecord({ country_code: 'FR' })).toEqual({ country_code: 'FR', country: 'France' });
    expect(
      geoFromRecord({
        country_code: 'FR',
        city: 'Paris',
        latitude: 48.85,
        longitude: 2.35,
        autonomous_system_number: 3215,
      }),
    ).toEqual({ country_code: 'FR', country: 'France', city: 'Paris', lat: 48.85, lon: 2.35, asn: 3215 });
    expect(
      geoFromRecord({ autonomous_system_number: 15169, autonomous_system_organization: 'GOOGLE' }),
    ).toEqual({ asn: 15169 });
    expect(geoFromRecord({ country_code: 'ZZ' })).toBeUndefined();
    expect(geoFromRecord({ continent: { code: 'EU' } })).toBeUndefined();
    expect(geoFromRecord(null)).toBeUndefined();
  });
});

describe('GeoIP with a configured city database', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'logscope-geoip-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('uses a GeoLite2-City file for city, coordinates and ASN', async () => {
    const file = path.join(dir, 'GeoLite2-City.mmdb');
    writeFileSync(file, cityDb());
    const { geoip, warnings } = await GeoIp.open({ cityPath: file });
    expect(warnings).toEqual([]);
    expect(geoip?.source).toEqual({ kind: 'city', path: file, databaseType: 'GeoLite2-City' });
    expect(geoip?.lookup('81.2.69.142')).toEqual({
      country_code: 'GB',
      country: 'United Kingdom',
      city: 'London',
      lat: 51.5142,
      lon: -0.0931,
    });
    expect(geoip?.lookup('::ffff:81.2.69.1')).toMatchObject({ city: 'London' });
    expect(geoip?.lookup('2a02:8100:1::5')).toEqual({
      country_code: 'DE',
      country: 'Germany',
      city: 'Berlin',
      lat: 52.5244,
      lon: 13.4105,
    });
    expect(geoip?.lookup('89.160.20.112')).toEqual({ country_code: 'SE', country: 'Sweden', asn: 29518 });
    // The city database replaces the bundled one: what it does not know gets no geo.
    expect(geoip?.lookup('8.8.8.8')).toBeUndefined();
    expect(geoip?.lookup('10.0.0.1')).toBeUndefined();
  });

  it('warns about a missing file and falls back to the bundled database', async () => {
    const file = path.join(dir, 'nope', 'GeoLite2-City.mmdb');
    const { geoip, warnings } = await GeoIp.open({ cityPath: file });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`geoipCityPath (${file})`);
    expect(warnings[0]).toMatch(/ENOENT/);
    expect(geoip?.source.kind).toBe('country');
    expect(geoip?.lookup('8.8.8.8')).toEqual({ country_code: 'US', country: 'United States' });
  });

  it.each([
    ['text', Buffer.from('this is not a MaxMind database\n')],
    ['empty', Buffer.alloc(0)],
    ['truncated', cityDb().subarray(0, 40)],
  ])('warns about a corrupt (%s) file and falls back to the bundled database', async (name, bytes) => {
    const file = path.join(dir, `${name}.mmdb`);
    writeFileSync(file, bytes);
    const { geoip, warnings } = await GeoIp.open({ cityPath: file });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(file);
    expect(geoip?.lookup('1.1.1.1')).toEqual({ country_code: 'AU', country: 'Australia' });
  });

  it('opens no database at all without a crash', async () => {
    const { geoip, warnings } = await GeoIp.open({
      cityPath: path.join(dir, 'missing.mmdb'),
      countryPath: path.join(dir, 'also-missing.mmdb'),
    });
    expect(geoip).toBeNull();
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatch(/add_geoip_data adds nothing/);
  });
});
