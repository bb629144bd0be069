import { BlockList, isIP } from 'node:net';

/**
 * The address ranges webhooks may not reach (setting `webhookDenyCidrs`, comma-separated
 * CIDRs such as `169.254.0.0/16,10.0.0.0/8`). Empty: every address is allowed, loopback
 * and private ones included (internal chat servers are the common case).
 */
export function parseDenyCidrs(text: string): BlockList {
  const list = new BlockList();
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [address, bits, extra] = part.split('/');
    const family = isIP(address ?? '');
    const prefix = Number(bits);
    const max = family === 6 ? 128 : 32;
    if (!family || extra !== undefined || bits === undefined || !/^\d+$/.test(bits) || prefix > max)
      throw new Error(`"${part}" is not a CIDR range (as 10.0.0.0/8 or fd00::/8)`);
    list.addSubnet(address as string, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad included). */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase().split('%')[0] ?? '';
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const part = (s: string) => (s === '' ? [] : s.split(':').map((h) => Number.parseInt(h, 16)));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}

/**
 * Every form an address reaches: itself; the IPv4 address inside an IPv4-mapped or
 * -compatible IPv6 address (`::ffff:7f00:1` is 127.0.0.1); and for an unspecified
 * address (`0.0.0.0/8`, `::`), which connects to this machine, the loopback addresses.
 */
export function reachedAddresses(address: string): Reached[] {
  const family = isIP(address);
  if (family === 4) return [{ address, family: 'ipv4' }, ...(address.startsWith('0.') ? LOOPBACK : [])];
  if (family !== 6) return [];
  const groups = ipv6Groups(address);
  const out: Reached[] = [{ address, family: 'ipv6' }];
  if (!groups) return out;
  const [hi, lo] = [groups[6] as number, groups[7] as number];
  const mapped = groups[5] === 0xffff;
  // `::a.b.c.d` (IPv4-compatible) too, but not `::` and `::1`, which are IPv6's own.
  const compatible = groups[5] === 0 && (hi !== 0 || lo > 1);
  if (groups.slice(0, 5).every((g) => g === 0) && (mapped || compatible))
    out.push(...reachedAddresses(`${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`));
  if (groups.every((g) => g === 0)) out.push(...LOOPBACK);
  return out;
}

type Reached = { address: string; family: 'ipv4' | 'ipv6' };
const LOOPBACK: readonly Reached[] = [
  { address: '127.0.0.1', family: 'ipv4' },
  { address: '::1', family: 'ipv6' },
];

/** Whether any form of the address (see reachedAddresses) is in a denied range. */
export const isDenied = (list: BlockList, address: string): boolean =>
  reachedAddresses(address).some((a) => list.check(a.address, a.family));
