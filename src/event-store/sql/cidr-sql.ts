import type { Cidr } from '../../filter/values.js';

/**
 * CIDR blocks as the filter compiler needs them: addresses as integers, and the IPv4
 * addresses of a block as the RE2 pattern of exactly the dotted quads Node's `isIP`
 * accepts inside it (a text column holds addresses as written).
 */

/** One IPv4 octet as Node's `isIPv4` accepts it: decimal, no leading zero. */
const OCTET_RE2 = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])';

/** The 128-bit value of an IPv6 address that `isIP` accepted (zone id ignored, as libuv does). */
export function ipv6ToBigInt(address: string): bigint {
  const text = address.split('%', 1)[0] ?? '';
  const groups = (part: string): bigint[] =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [BigInt(Number.parseInt(g, 16))];
          const [a = 0, b = 0, c = 0, d = 0] = g.split('.').map(Number);
          return [BigInt(a * 256 + b), BigInt(c * 256 + d)];
        });
  const gap = text.indexOf('::');
  const head = groups(gap === -1 ? text : text.slice(0, gap));
  const tail = gap === -1 ? [] : groups(text.slice(gap + 2));
  const all = [...head, ...Array<bigint>(8 - head.length - tail.length).fill(0n), ...tail];
  return all.reduce((acc, g) => (acc << 16n) | g, 0n);
}

export const ipv4ToInt = (address: string): bigint =>
  address.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);

const IPV4_MAPPED = 0xffffn << 32n;

/**
 * The IPv4 addresses inside a block, as an IPv4 block: for an IPv6 block, those whose
 * IPv4-mapped form (::ffff:a.b.c.d) it contains, as Node's BlockList matches them.
 */
export function ipv4Part(block: Cidr): { base: bigint; prefix: number } | undefined {
  if (block.family === 4) return { base: ipv4ToInt(block.address), prefix: block.prefix };
  const net = ipv6ToBigInt(block.address);
  if (block.prefix <= 96) {
    const shift = BigInt(128 - block.prefix);
    return net >> shift === IPV4_MAPPED >> shift ? { base: 0n, prefix: 0 } : undefined;
  }
  return net >> 32n === 0xffffn ? { base: net & 0xffffffffn, prefix: block.prefix - 96 } : undefined;
}

/** RE2 pattern matching exactly the dotted quads `isIP` accepts inside base/prefix. */
export function ipv4BlockPattern(base: bigint, prefix: number): string {
  const octets = [24n, 16n, 8n, 0n].map((s) => Number((base >> s) & 0xffn));
  return octets
    .map((octet, i) => {
      const fixedBits = Math.min(8, Math.max(0, prefix - i * 8));
      if (fixedBits === 8) return String(octet);
      if (fixedBits === 0) return OCTET_RE2;
      const span = 2 ** (8 - fixedBits);
      const first = octet - (octet % span);
      return `(?:${Array.from({ length: span }, (_, k) => String(first + k)).join('|')})`;
    })
    .join('\\.');
}
