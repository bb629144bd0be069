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

export const isDenied = (list: BlockList, address: string): boolean => {
  const family = isIP(address);
  if (!family) return false;
  if (list.check(address, family === 6 ? 'ipv6' : 'ipv4')) return true;
  // An IPv4-mapped IPv6 address is checked as the IPv4 address it is.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  return mapped !== undefined && list.check(mapped, 'ipv4');
};
