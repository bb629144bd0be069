import { isIP } from 'node:net';

/**
 * A minimal MaxMind DB (MMDB 2.0) writer for tests: an IPv6 tree (IPv4 networks under
 * ::/96, as in GeoLite2), 24-bit records, and a data section of maps, strings, unsigned
 * integers, doubles and arrays. Enough to build a small GeoLite2-City-shaped file that the
 * real `maxmind` reader opens. No overlapping networks.
 */

type Value = string | number | boolean | Value[] | { [key: string]: Value };

const control = (type: number, size: number): Buffer => {
  const head = type <= 7 ? [(type << 5) | 0] : [0, type - 7];
  let ext: number[] = [];
  let bits = size;
  if (size >= 65821) {
    bits = 31;
    const s = size - 65821;
    ext = [(s >> 16) & 255, (s >> 8) & 255, s & 255];
  } else if (size >= 285) {
    bits = 30;
    const s = size - 285;
    ext = [(s >> 8) & 255, s & 255];
  } else if (size >= 29) {
    bits = 29;
    ext = [size - 29];
  }
  head[0] = (head[0] ?? 0) | bits;
  return Buffer.from([...head, ...ext]);
};

function encode(v: Value): Buffer {
  if (typeof v === 'string') {
    const bytes = Buffer.from(v, 'utf8');
    return Buffer.concat([control(2, bytes.length), bytes]);
  }
  if (typeof v === 'boolean') return control(14, v ? 1 : 0);
  if (typeof v === 'number') {
    if (Number.isInteger(v) && v >= 0 && v < 2 ** 32) {
      const bytes: number[] = [];
      for (let n = v; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
      return Buffer.concat([control(6, bytes.length), Buffer.from(bytes)]);
    }
    const b = Buffer.alloc(8);
    b.writeDoubleBE(v);
    return Buffer.concat([control(3, 8), b]);
  }
  if (Array.isArray(v)) return Buffer.concat([control(11, v.length), ...v.map(encode)]);
  const entries = Object.entries(v);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, x]) => [encode(k), encode(x)])]);
}

/** 16 address bytes and the prefix length in the IPv6 tree. */
function network(cidr: string): { bytes: Buffer; bits: number } {
  const [addr = '', len = ''] = cidr.split('/');
  if (isIP(addr) === 4) {
    const bytes = Buffer.alloc(16);
    addr.split('.').forEach((o, i) => {
      bytes[12 + i] = Number(o);
    });
    return { bytes, bits: 96 + Number(len) };
  }
  const [head = '', tail = ''] = addr.split('::');
  const groups = (s: string) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const all = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  const bytes = Buffer.alloc(16);
  all.forEach((g, i) => {
    bytes.writeUInt16BE(Number.parseInt(g, 16), i * 2);
  });
  return { bytes, bits: Number(len) };
}

type Record_ = { node: number } | { data: number } | null;

/** The bytes of an MMDB file holding `records` (CIDR → data). */
export function writeMmdb(
  records: Record<string, Value>,
  meta: { databaseType: string; languages?: string[] } = { databaseType: 'Test' },
): Buffer {
  const nodes: [Record_, Record_][] = [[null, null]];
  const dataParts: Buffer[] = [];
  let dataSize = 0;
  for (const [cidr, value] of Object.entries(records)) {
    const encoded = encode(value);
    const offset = dataSize;
    dataParts.push(encoded);
    dataSize += encoded.length;
    const { bytes, bits } = network(cidr);
    let node = 0;
    for (let depth = 0; depth < bits; depth++) {
      const bit = ((bytes[depth >> 3] ?? 0) >> (7 - (depth & 7))) & 1;
      const pair = nodes[node] as [Record_, Record_];
      if (depth === bits - 1) {
        pair[bit] = { data: offset };
        break;
      }
      const next = pair[bit];
      if (next && 'node' in next) {
        node = next.node;
      } else {
        nodes.push([null, null]);
        pair[bit] = { node: nodes.length - 1 };
        node = nodes.length - 1;
      }
    }
  }
  const nodeCount = nodes.length;
  const tree = Buffer.alloc(nodeCount * 6);
  const value = (r: Record_) => (r === null ? nodeCount : 'node' in r ? r.node : nodeCount + 16 + r.data);
  nodes.forEach(([l, r], i) => {
    tree.writeUIntBE(value(l), i * 6, 3);
    tree.writeUIntBE(value(r), i * 6 + 3, 3);
  });
  const metadata = encode({
    node_count: nodeCount,
    record_size: 24,
    ip_version: 6,
    database_type: meta.databaseType,
    languages: meta.languages ?? ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: Math.floor(Date.now() / 1000),
    description: { en: 'Logscope test database' },
  });
  return Buffer.concat([
    tree,
    Buffer.alloc(16),
    ...dataParts,
    Buffer.from('abcdef4d61784d696e642e636f6d', 'hex'),
    metadata,
  ]);
}

/** A GeoLite2-City-shaped database: London, an IPv6 block in Berlin, one record with an ASN. */
export function cityDb(): Buffer {
  return writeMmdb(
    {
      '81.2.69.0/24': {
        city: { geoname_id: 2643743, names: { en: 'London', de: 'London' } },
        continent: { code: 'EU', geoname_id: 6255148, names: { en: 'Europe' } },
        country: { geoname_id: 2635167, iso_code: 'GB', names: { en: 'United Kingdom' } },
        location: { accuracy_radius: 10, latitude: 51.5142, longitude: -0.0931, time_zone: 'Europe/London' },
      },
      '2a02:8100::/32': {
        city: { geoname_id: 2950159, names: { en: 'Berlin' } },
        country: { geoname_id: 2921044, iso_code: 'DE', names: { en: 'Germany' } },
        location: { accuracy_radius: 100, latitude: 52.5244, longitude: 13.4105 },
      },
      '89.160.20.0/24': {
        country: { geoname_id: 2661886, iso_code: 'SE', names: { en: 'Sweden' } },
        traits: { autonomous_system_number: 29518 },
      },
    },
    { databaseType: 'GeoLite2-City' },
  );
}
