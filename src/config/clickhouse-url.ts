/**
 * `eventStoreUrl` for ClickHouse (docs/operations/clickhouse.md):
 * `clickhouse://user:password@host:8123/db`, or for a sharded cluster every shard's HTTP
 * endpoint and the cluster's name, `clickhouse://user:password@h1:8123,h2:8123/db?cluster=name`.
 * `clickhouses://` speaks HTTPS. The database defaults to `logscope`, the port to 8123
 * (8443 with TLS), the user to `default`.
 */
export interface ClickHouseTarget {
  /** HTTP(S) origins of the listed servers, in the order given. */
  hosts: string[];
  username: string;
  password: string;
  database: string;
  /** The `remote_servers` cluster for a Distributed table, when given. */
  cluster: string | undefined;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Reads the URL; throws an Error whose message says what is wrong (never echoing the password). */
export function parseClickHouseUrl(url: string): ClickHouseTarget {
  const m = /^(clickhouses?):\/\/(?:([^@/]*)@)?([^/?#]+)(?:\/([^?#]*))?(?:\?([^#]*))?$/.exec(url);
  if (!m)
    throw new Error(
      'expected clickhouse://[user[:password]@]host[:port][,host[:port]...]/database[?cluster=name]',
    );
  const [, scheme, auth = '', hostList = '', path = '', query = ''] = m;
  const tls = scheme === 'clickhouses';
  const [user = '', ...rest] = auth.split(':');
  const hosts = hostList.split(',').map((h) => {
    const hm = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(h);
    if (!hm) throw new Error(`"${h}" is not a host[:port]`);
    const port = Number(hm[2] ?? (tls ? 8443 : 8123));
    if (port < 1 || port > 65535) throw new Error(`port ${port} is out of range`);
    return `${tls ? 'https' : 'http'}://${hm[1]}:${port}`;
  });
  const database = decodeURIComponent(path) || 'logscope';
  if (!NAME.test(database)) throw new Error(`database "${database}" must be letters, digits and _`);
  const params = new URLSearchParams(query);
  for (const key of params.keys())
    if (key !== 'cluster') throw new Error(`unknown parameter "${key}" (only cluster is read)`);
  const cluster = params.get('cluster') ?? undefined;
  if (cluster !== undefined && !NAME.test(cluster))
    throw new Error(`cluster "${cluster}" must be letters, digits and _`);
  if (hosts.length > 1 && cluster === undefined)
    throw new Error('several hosts need ?cluster=<name>, the cluster they form in remote_servers');
  return {
    hosts,
    username: decodeURIComponent(user) || 'default',
    password: decodeURIComponent(rest.join(':')),
    database,
    cluster,
  };
}
