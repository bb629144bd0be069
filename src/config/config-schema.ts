/**
 * The one configuration schema: every setting with its type, bounds, default and
 * description (the table in docs/configuration.md is written from it). config.ts loads,
 * checks and freezes a Config from it.
 */
import { type Static, Type } from 'typebox';
import { PERMISSIONS } from '../shared/permissions.js';

/** The `oidc` block: one OpenID provider (docs/sign-on.md). */
export const OidcSchema = Type.Object(
  {
    issuer: Type.String({ minLength: 1, pattern: '^https?://' }),
    clientId: Type.String({ minLength: 1 }),
    clientSecret: Type.String({ minLength: 1 }),
    scopes: Type.String({ minLength: 1, default: 'openid profile email' }),
    usernameClaim: Type.String({ minLength: 1, default: 'preferred_username' }),
    groupsClaim: Type.String({ minLength: 1, default: 'groups' }),
    adminGroups: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
    teamsFromGroups: Type.Boolean({ default: true }),
    label: Type.String({ minLength: 1, maxLength: 100, default: 'Sign in with single sign-on' }),
    passwordLogin: Type.Boolean({ default: true }),
    /** The permissions of a user the provider signs in for the first time (admins hold every one). */
    defaultPermissions: Type.Array(Type.Union(PERMISSIONS.map((p) => Type.Literal(p))), {
      default: [],
      uniqueItems: true,
    }),
    /** Sign-ins under way kept at most (a flood of anonymous starts drops the oldest). */
    maxPendingSignIns: Type.Integer({ minimum: 10, maximum: 1_000_000, default: 10_000 }),
  },
  { additionalProperties: false },
);

export const ConfigSchema = Type.Object(
  {
    port: Type.Integer({
      minimum: 0,
      maximum: 65535,
      default: 8080,
      description: 'HTTP port of the API, the web UI and the live websocket',
    }),
    host: Type.String({ minLength: 1, default: '0.0.0.0', description: 'Listen address' }),
    dataDir: Type.String({
      minLength: 1,
      default: './data',
      description:
        "SQLite file, DuckDB file, admin token and reports. The default is `data` in the install folder whatever the working directory, so the server and every CLI command find the same store; a relative path from a config file is taken from the file's folder, from env or a flag from the working directory",
    }),
    databaseUrl: Type.String({
      default: '',
      description:
        'Metadata store: empty for SQLite `<dataDir>/meta.sqlite`; `postgres://user@host:5432/db` for PostgreSQL',
    }),
    eventStoreUrl: Type.String({
      default: '',
      description:
        'Event store: empty for DuckDB `<dataDir>/events.duckdb`; `clickhouse://user:password@host:8123/db` for ClickHouse; a sharded cluster lists every shard and names the cluster, `clickhouse://user@h1:8123,h2:8123/db?cluster=name` (`clickhouses://` for HTTPS)',
    }),
    busUrl: Type.String({
      default: '',
      description:
        'Live-update bus: empty for in-process (one server); `redis://host:6379[/db][?channel=name]` makes this server a cluster node beside every other with the same settings (needs databaseUrl on PostgreSQL and eventStoreUrl on ClickHouse); `channel` (default `logscope`) keeps clusters sharing a Redis apart',
    }),
    databaseConnectSeconds: Type.Integer({
      minimum: 0,
      maximum: 3600,
      default: 60,
      description:
        'How long start-up keeps retrying an unreachable PostgreSQL (backoff from 0.5 s doubling to 5 s) before it stops with one line naming the server (0: try once)',
    }),
    logLevel: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
      { default: 'info', description: 'Fatal, error, warn, info, debug, trace, silent' },
    ),
    bodyLimit: Type.Integer({
      minimum: 1024,
      default: 1048576,
      description: 'Largest request body (bytes) outside ingestion',
    }),
    ingestBodyLimit: Type.Integer({
      minimum: 1024,
      default: 67108864,
      description: 'Largest ingest body (bytes)',
    }),
    ingestMaxRecords: Type.Integer({
      minimum: 1,
      default: 100000,
      description:
        'Most records in one ingest request (NDJSON lines, JSON array elements, `_bulk` items); beyond it `413 too_many_records` and nothing is stored',
    }),
    duckdbMemoryLimit: Type.String({
      pattern: '^[0-9]+(\\.[0-9]+)?\\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$',
      default: '512MB',
      description: 'DuckDB `memory_limit` of the event store',
    }),
    // The rows a checkpoint compresses set the store's peak memory while ingesting. With
    // frequent extra fields in columns of their own (ADR 0017) a row's WAL record is
    // smaller, so 256MB held ~30% more rows (1 M demo events: the checkpoint at 832,000
    // rows instead of 640,000, peak RSS 785-827 MiB through the API); 192MB checkpoints
    // at about the rows 256MB did before (624,000; peak RSS 685-694 MiB, ack p99 unchanged).
    duckdbCheckpointThreshold: Type.String({
      pattern: '^[0-9]+(\\.[0-9]+)?\\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$',
      default: '192MB',
      description:
        'WAL size that triggers a checkpoint (larger: flatter ingest latency, longer recovery after a crash); a WAL of 8 MB or more is also checkpointed once appends pause for 2 s, so events at rest sit compressed',
    }),
    retentionDays: Type.Integer({
      minimum: 0,
      default: 0,
      description:
        'Delete events older than this many days, in the background (0 keeps all); a stream with its own retention_days keeps its events that long instead',
    }),
    auditRetentionDays: Type.Integer({
      minimum: 0,
      default: 365,
      description: 'Audit records older than this many days are removed, hourly (0 keeps all)',
    }),
    auditAnonymousMaxRecords: Type.Integer({
      minimum: 0,
      default: 100_000,
      description:
        'Most audit records with no signed-in actor (failed sign-ins, refused requests) kept; the hourly sweep removes the oldest beyond it (0: no bound)',
    }),
    retentionIntervalSeconds: Type.Integer({
      minimum: 1,
      maximum: 86_400,
      default: 3600,
      description: 'How often retention runs (after a first run shortly after start)',
    }),
    coldDir: Type.String({
      default: '',
      description:
        'Where the cold tier keeps its Parquet files (empty: `cold` in the data dir); a local folder or a mounted NFS or object-store volume. Embedded event store only',
    }),
    backupRoot: Type.String({
      default: '',
      description:
        'When set, every online backup (`POST /api/admin/backups`, `logscope backup`) must be written inside this folder. Embedded stores only',
    }),
    upgradeBackupDir: Type.String({
      default: '',
      description:
        'Where the automatic backup before an upgrade of the store format goes (empty: `backups` in the data dir). Embedded stores only',
    }),
    upgradeBackup: Type.Union([Type.Literal('on'), Type.Literal('off')], {
      default: 'on',
      description:
        'on: a backup of the stores before an upgrade of the store format; off: none (an operator who took their own copy)',
    }),
    tierIntervalSeconds: Type.Integer({
      minimum: 1,
      maximum: 86_400,
      default: 3600,
      description: "How often the cold tier's mover runs (after a first round shortly after start)",
    }),
    retentionMaxBytes: Type.Integer({
      minimum: 0,
      default: 0,
      description:
        'When the event store holds more than this many bytes, retention deletes the oldest events until it fits (0: off)',
    }),
    ingestBatchMs: Type.Integer({
      minimum: 1,
      maximum: 10000,
      default: 25,
      description: 'Least time between two group commits',
    }),
    ingestBatchEvents: Type.Integer({
      minimum: 1,
      default: 20000,
      description: 'Commit at once when this many events wait',
    }),
    ingestQueueEvents: Type.Integer({
      minimum: 1,
      default: 200000,
      description: 'Most events waiting for a commit; beyond it ingest answers `503` with `Retry-After`',
    }),
    syslogPort: Type.Integer({
      minimum: 0,
      maximum: 65535,
      default: 0,
      description: 'Syslog listener, UDP and TCP on this port (0 = off)',
    }),
    syslogHost: Type.String({ minLength: 1, default: '0.0.0.0', description: 'Syslog listen address' }),
    syslogUdpReceiveBuffer: Type.Integer({
      minimum: 0,
      default: 8388608,
      description:
        'Receive buffer of the syslog UDP socket in bytes, to absorb bursts (0: the system default). Linux caps it at `net.core.rmem_max` and the server logs a warning when capped; allow 8 MiB with `sysctl -w net.core.rmem_max=8388608` (persist in `/etc/sysctl.d/90-logscope.conf`)',
    }),
    gelfPort: Type.Integer({
      minimum: 0,
      maximum: 65535,
      default: 0,
      description:
        'GELF listener, UDP (chunked; gzip, zlib or plain) and TCP (NUL-delimited) on this port (0 = off; Graylog uses 12201)',
    }),
    gelfHost: Type.String({ minLength: 1, default: '0.0.0.0', description: 'GELF listen address' }),
    querySyncMs: Type.Integer({
      minimum: 0,
      maximum: 60000,
      default: 1000,
      description: 'How long POST /api/query waits for a result before answering 202 (ms)',
    }),
    queryTtlSeconds: Type.Integer({
      minimum: 60,
      default: 3600,
      description: 'Queries nobody read for this long are deleted',
    }),
    queryRefreshMs: Type.Integer({
      minimum: 100,
      default: 1000,
      description: 'A relative-time query being read is re-evaluated at most this often (ms)',
    }),
    querySliceEvents: Type.Integer({
      minimum: 1000,
      default: 2000000,
      description: 'Events per time slice of a long query (partial results after each slice)',
    }),
    liveRefreshMs: Type.Integer({
      minimum: 100,
      default: 5000,
      description:
        'A watched relative-time aggregate is re-evaluated at most this often (ms); a watched Search within 250 ms of new data',
    }),
    liveBufferBytes: Type.Integer({
      minimum: 65536,
      default: 8388608,
      description: 'Bytes a websocket client may have waiting; beyond it the client is closed with 1013',
    }),
    liveUpdateMaxBytes: Type.Integer({
      minimum: 65536,
      default: 33554432,
      description:
        'Largest websocket update (bytes of JSON); a larger one ends its subscription with an `error` message saying so',
    }),
    exportMaxRows: Type.Integer({
      minimum: 1,
      default: 1000000,
      description: 'Most rows an export or report holds',
    }),
    queryResultsMemoryMb: Type.Integer({
      minimum: 1,
      default: 256,
      description:
        'Estimated memory all query results may hold; beyond it the results of the least recently read finished, unwatched queries are dropped and recomputed on their next read; while running and watched results fill it, new live queries and subscriptions answer `503 out_of_memory`',
    }),
    queryLivePerUser: Type.Integer({
      minimum: 1,
      default: 50,
      description:
        'Running or watched queries per user (watching over the websocket and recomputing dropped results count too); beyond it `POST /api/query` and `recalculate` answer `429` with `Retry-After: 2`, a subscription an `error`',
    }),
    mcpEnabled: Type.Boolean({
      default: true,
      description:
        "Serve the Model Context Protocol at `/mcp`: the logs as tools for the user's own assistant, with their token's rights ([MCP](mcp.md)); false: `/mcp` answers 404",
    }),
    mcpAllowedOrigins: Type.String({
      default: '',
      pattern: '^(https?://[^/?#\\s,]+(\\s*,\\s*https?://[^/?#\\s,]+)*)?$',
      description:
        "Browser origins allowed to call `/mcp`, comma-separated exact origins (`http://localhost:6274`, the MCP Inspector's); a request with another `Origin` is refused with 403; requests without one (desktop and IDE clients) are unaffected",
    }),
    mcpToolTimeoutSeconds: Type.Integer({
      minimum: 1,
      default: 30,
      description:
        'Longest an MCP tool call runs; one still running then is stopped and answered `isError: true` (narrow the range or the query)',
    }),
    intakeTcpMaxConnections: Type.Integer({
      minimum: 1,
      default: 1000,
      description:
        'TCP connections the syslog and GELF listeners each keep open at once; more are closed as they come (counted in /metrics)',
    }),
    intakeTcpIdleSeconds: Type.Integer({
      minimum: 1,
      default: 300,
      description: 'A syslog or GELF TCP connection that sends nothing for this long is closed',
    }),
    triggersPerUser: Type.Integer({
      minimum: 1,
      default: 100,
      description: 'Triggers one user may own; beyond it creating one answers `409 limit_reached`',
    }),
    patternRateReadsPerHour: Type.Integer({
      minimum: 1,
      default: 7200,
      description:
        "Store reads one user's enabled pattern_rate triggers may cost an hour: each costs 3600 / window_seconds, twice that with a `same_time_last_week` or `rolling_24h` baseline; beyond it creating or changing one answers `409 limit_reached`",
    }),
    savedSearchesPerUser: Type.Integer({
      minimum: 1,
      default: 500,
      description: 'Saved searches one user may own; beyond it saving one answers `409 limit_reached`',
    }),
    logMetricsPerUser: Type.Integer({
      minimum: 1,
      default: 50,
      description: 'Log metrics one user who is no admin may own; beyond it `409 limit_reached`',
    }),
    logMetricMaxSeries: Type.Integer({
      minimum: 1,
      default: 10000,
      description: "The most a log metric's `max_series` may be: label tuples kept apart, the rest folded",
    }),
    savedSearchMaxBytes: Type.Integer({
      minimum: 4096,
      maximum: 1_048_576,
      default: 65536,
      description:
        'Largest saved search, counted as the bytes it is stored as (its texts and JSON values); a larger one answers `400`',
    }),
    reportsPerUser: Type.Integer({
      minimum: 1,
      default: 2,
      description: 'Reports of one user generated at once; more wait PENDING, in order',
    }),
    // One at a time: a report sorts or renders all its rows, on two cores two at once
    // finish together only about a quarter sooner than one after the other, and they hold
    // twice the memory (the abuse bench's six sorted CSV reports: peak RSS 1,174 MiB and
    // /api/health p99 1,004 ms with two, 869 MiB and 128 ms with one, 58 s against 78 s).
    reportsConcurrent: Type.Integer({
      minimum: 1,
      default: 1,
      description: 'Reports generated at once over all users',
    }),
    reportMaxBytes: Type.Integer({
      minimum: 0,
      default: 1073741824,
      description: 'Largest report file; larger ends the report ERROR with no file left (0: no limit)',
    }),
    reportMaxPages: Type.Integer({
      minimum: 1,
      maximum: 10000,
      default: 50,
      description:
        'Most pages of a pdf or docx report; what does not fit is left out and the last page says what was cut (csv, json, ndjson and xlsx are bounded by exportMaxRows and reportMaxBytes)',
    }),
    triggerTaskWindowSeconds: Type.Integer({
      minimum: 0,
      default: 600,
      description:
        'Matches of a `create_task` trigger join its open task last updated within this many seconds (0: a task per batch)',
    }),
    patternRateSettleSeconds: Type.Integer({
      minimum: 0,
      maximum: 3600,
      default: 5,
      description:
        'A `pattern_rate` trigger judges a window this many seconds after it ends, so events arriving that late still count',
    }),
    geoipCityPath: Type.String({
      default: '',
      description:
        'A GeoLite2-City (or compatible) `.mmdb` for city, coordinates and ASN; empty: the bundled CC0 country database. Unreadable: a start-up warning and the bundled database',
    }),
    loginFailuresPerUsername: Type.Integer({
      minimum: 0,
      default: 10,
      description:
        'Failed logins per username and minute; beyond it that username gets `429` + `Retry-After` from any address, without its password being checked (0: no limit)',
    }),
    loginFailuresPerAddress: Type.Integer({
      minimum: 0,
      default: 100,
      description:
        'Failed logins per client address and minute; beyond it every login from that address answers `429` before any password work (0: no limit)',
    }),
    sessionHours: Type.Integer({
      minimum: 1,
      maximum: 8760,
      default: 12,
      description: 'Lifetime of the USER token `POST /api/auth/login` returns (1–8760)',
    }),
    tokenCacheSeconds: Type.Integer({
      minimum: 0,
      default: 10,
      description:
        'How long a verified token is cached in memory; also how often live connections re-check their token and rights',
    }),
    smtpUrl: Type.String({
      default: '',
      pattern: '^(smtps?://\\S+)?$',
      description:
        'The mail server email channels send through (`smtp://user:pass@mail.example.com:587`, `smtps://…` for TLS from the start); empty: email channels cannot send',
    }),
    smtpFrom: Type.String({
      default: '',
      description:
        'The sender address of notification mails (`Logscope <alerts@example.com>`); empty: `logscope@<host name>`',
    }),
    webhookDenyCidrs: Type.String({
      default: '169.254.0.0/16,fe80::/10,100.100.100.200/32,fd00:ec2::254/128',
      description:
        'Address ranges channels (webhook, Slack, Teams, PagerDuty, Opsgenie) may not reach, comma-separated CIDRs (`169.254.0.0/16,10.0.0.0/8`). The default denies link-local addresses and the cloud metadata services (169.254.169.254 and the others there, fd00:ec2::254, 100.100.100.200); loopback and private addresses stay allowed (internal chat servers); empty: any address',
    }),
    pagerdutyUrl: Type.String({
      default: 'https://events.pagerduty.com',
      pattern: '^https?://[^/?#\\s]+(/[^?#\\s]*)?$',
      description:
        'The PagerDuty Events API base pagerduty channels post to (`<base>/v2/enqueue`); another for a relay in an air-gapped install',
    }),
    opsgenieUrl: Type.String({
      default: '',
      pattern: '^(https?://[^/?#\\s]+(/[^?#\\s]*)?)?$',
      description:
        'The Opsgenie API base opsgenie channels post to, for either region (a relay in an air-gapped install); empty: `https://api.opsgenie.com`, or `https://api.eu.opsgenie.com` for a channel of region `eu`',
    }),
    reportLinkSeconds: Type.Integer({
      minimum: 60,
      maximum: 31_536_000,
      default: 604_800,
      description:
        'How long a signed report link (scheduled reports, `POST /api/reports/{id}/link`) stays valid, in seconds; also the longest `expires_in`',
    }),
    reportLinkSecret: Type.String({
      default: '',
      description:
        'The key report links are signed with (HMAC-SHA256); empty: a random key made once and kept in the metadata store, so every node signs alike. Changing it voids every link',
    }),
    schedulesPerUser: Type.Integer({
      minimum: 1,
      default: 50,
      description: 'Report schedules one user may own; beyond it creating one answers `409 limit_reached`',
    }),
    scheduleAttachMaxBytes: Type.Integer({
      minimum: 0,
      default: 10_485_760,
      description:
        'Largest report file a scheduled run attaches to its mail; a larger one is sent as its link alone (0: never attach)',
    }),
    oidc: Type.Union([Type.Null(), OidcSchema], {
      default: null,
      description:
        'OpenID Connect sign-in (a JSON object, in the config file or `LOGSCOPE_OIDC`): `{issuer, clientId, clientSecret, scopes, usernameClaim, groupsClaim, adminGroups, teamsFromGroups, label, passwordLogin, defaultPermissions, maxPendingSignIns}`; null: password sign-in only ([Single sign-on](sign-on.md))',
    }),
    patternMining: Type.Boolean({
      default: true,
      description:
        "Give every event its message's template (`pattern_id`) at ingest; false leaves it null (for measuring what mining costs)",
    }),
    publicUrl: Type.String({
      default: '',
      pattern: '^(https?://[^/?#\\s]+(/[^?#\\s]*)?)?$',
      description:
        'Where clients reach the server (`https://logs.example.com`, optionally with a path): the base of pagination links. Empty: `http://<host>:<port>` of the listen address (`0.0.0.0`/`::` → `localhost`). Never taken from the `Host` header',
    }),
  },
  { additionalProperties: false },
);

export type Config = Readonly<Static<typeof ConfigSchema>>;
