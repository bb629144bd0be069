/** A parsed `busUrl`: where Redis is, and the channel prefix this service's nodes share. */
export interface BusUrl {
  /** `redis://host:port[/db]` as node-redis takes it (credentials kept, the query dropped). */
  redisUrl: string;
  /** Prefix of every channel (`<channel>:<topic>`). */
  channel: string;
  /** host:port, for messages (never the password). */
  where: string;
}

/** Parses `redis://[user:password@]host[:port][/db][?channel=name]` (`rediss://` for TLS). */
export function parseBusUrl(text: string): BusUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error('not a URL; use redis://host:6379');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new Error(`only redis:// and rediss:// are supported, not ${url.protocol}//`);
  if (!url.hostname) throw new Error('name the Redis host: redis://host:6379');
  const db = url.pathname.replace(/^\//, '');
  if (db !== '' && !/^(?:[0-9]|1[0-5])$/.test(db))
    throw new Error(`the database must be 0 to 15, not "${db}"`);
  for (const key of url.searchParams.keys())
    if (key !== 'channel') throw new Error(`unknown parameter "${key}"; the only one is channel`);
  const channel = url.searchParams.get('channel') ?? 'logscope';
  if (!/^[\w.-]{1,64}$/.test(channel)) throw new Error('channel is 1 to 64 letters, digits, "_", "." or "-"');
  const where = `${url.hostname}:${url.port || '6379'}`;
  url.search = '';
  return { redisUrl: url.toString(), channel, where };
}
