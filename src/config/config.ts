import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';

/**
 * The one configuration schema. Every setting has an environment variable
 * (`LOGSCOPE_<NAME>` in upper snake case), a key in the optional JSON config file
 * and a CLI flag (`--<kebab-name>`). Precedence: flags > env > file > defaults.
 */
export const ConfigSchema = Type.Object(
  {
    port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080, description: 'HTTP port' }),
    host: Type.String({ minLength: 1, default: '0.0.0.0', description: 'HTTP listen address' }),
    dataDir: Type.String({ minLength: 1, default: './data', description: 'Data directory' }),
    databaseUrl: Type.String({
      default: '',
      description: 'Metadata store: empty for SQLite in the data dir, or postgres://...',
    }),
    logLevel: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
      { default: 'info', description: 'Log level' },
    ),
    bodyLimit: Type.Integer({
      minimum: 1024,
      default: 1048576,
      description: 'Largest request body in bytes (non-ingest endpoints)',
    }),
    ingestBodyLimit: Type.Integer({
      minimum: 1024,
      default: 67108864,
      description: 'Largest ingest request body in bytes (after decompression)',
    }),
    ingestMaxRecords: Type.Integer({
      minimum: 1,
      default: 100000,
      description: 'Most records one ingest request may hold; beyond it 413 and nothing is stored',
    }),
    duckdbMemoryLimit: Type.String({
      pattern: '^[0-9]+(\\.[0-9]+)?\\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$',
      default: '512MB',
      description: 'DuckDB memory_limit for the event store',
    }),
    duckdbCheckpointThreshold: Type.String({
      pattern: '^[0-9]+(\\.[0-9]+)?\\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$',
      default: '256MB',
      description:
        'WAL size at which DuckDB checkpoints (larger: flatter ingest latency, longer crash recovery)',
    }),
    retentionDays: Type.Integer({
      minimum: 0,
      default: 0,
      description: 'Delete events older than this many days (0 keeps everything)',
    }),
    ingestBatchMs: Type.Integer({
      minimum: 1,
      maximum: 10000,
      default: 25,
      description: 'Least time between two group commits of the ingest batcher (ms)',
    }),
    ingestBatchEvents: Type.Integer({
      minimum: 1,
      default: 20000,
      description: 'Commit as soon as this many events wait',
    }),
    ingestQueueEvents: Type.Integer({
      minimum: 1,
      default: 200000,
      description: 'Most events waiting for a commit; beyond it ingest answers 503 + Retry-After',
    }),
    syslogPort: Type.Integer({
      minimum: 0,
      maximum: 65535,
      default: 0,
      description: 'Syslog listener port, UDP and TCP (0 = off)',
    }),
    syslogHost: Type.String({ minLength: 1, default: '0.0.0.0', description: 'Syslog listen address' }),
    syslogUdpReceiveBuffer: Type.Integer({
      minimum: 0,
      default: 8388608,
      description:
        'Receive buffer of the syslog UDP socket in bytes, to absorb bursts (0 = system default; Linux caps it at net.core.rmem_max)',
    }),
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
    exportMaxRows: Type.Integer({
      minimum: 1,
      default: 1000000,
      description: 'Most rows an export or report holds',
    }),
    queryResultsMemoryMb: Type.Integer({
      minimum: 1,
      default: 256,
      description:
        'Memory (MiB, estimated) the results of all queries may hold; beyond it the least recently read finished results are dropped and recomputed on their next read',
    }),
    queryLivePerUser: Type.Integer({
      minimum: 1,
      default: 50,
      description: 'Running or watched queries a user may have at once; beyond it 429 + Retry-After',
    }),
    reportsPerUser: Type.Integer({
      minimum: 1,
      default: 2,
      description: 'Reports of one user generated at once; more wait PENDING for a slot',
    }),
    reportsConcurrent: Type.Integer({
      minimum: 1,
      default: 2,
      description: 'Reports generated at once over all users; more wait PENDING for a slot',
    }),
    reportMaxBytes: Type.Integer({
      minimum: 0,
      default: 1073741824,
      description: 'Largest report file in bytes; a larger report ends ERROR saying so (0 = no limit)',
    }),
    triggerTaskWindowSeconds: Type.Integer({
      minimum: 0,
      default: 600,
      description:
        'Matches of a create_task trigger within this many seconds of its open task join that task (0: a task per match)',
    }),
    geoipCityPath: Type.String({
      default: '',
      description:
        'A GeoLite2-City (or compatible) .mmdb file for city-level GeoIP; empty uses the bundled CC0 country database',
    }),
    loginFailuresPerUsername: Type.Integer({
      minimum: 0,
      default: 10,
      description:
        'Failed POST /api/auth/login attempts per username and minute; beyond it that username gets 429 (0 = no limit)',
    }),
    loginFailuresPerAddress: Type.Integer({
      minimum: 0,
      default: 100,
      description:
        'Failed POST /api/auth/login attempts per client address and minute; beyond it failures from it get 429 (0 = no limit)',
    }),
    sessionHours: Type.Integer({
      minimum: 1,
      maximum: 8760,
      default: 12,
      description: 'Lifetime of the USER token POST /api/auth/login returns (hours)',
    }),
    tokenCacheSeconds: Type.Integer({
      minimum: 0,
      default: 10,
      description:
        'How long a verified token stays cached in memory; also how often live connections re-check their token and rights',
    }),
    publicUrl: Type.String({
      default: '',
      pattern: '^(https?://[^/?#\\s]+(/[^?#\\s]*)?)?$',
      description:
        'The URL clients reach the server at (https://logs.example.com), for absolute links; empty: the listen address',
    }),
  },
  { additionalProperties: false },
);

export type Config = Readonly<Static<typeof ConfigSchema>>;
type ConfigKey = keyof Static<typeof ConfigSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const KEYS = Object.keys(ConfigSchema.properties) as ConfigKey[];

export const envName = (key: string): string =>
  `LOGSCOPE_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
export const flagName = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Settings whose env variable has a conventional alias besides LOGSCOPE_*. */
const ENV_ALIASES: Partial<Record<ConfigKey, string>> = { port: 'PORT' };

function fromEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of KEYS) {
    const alias = ENV_ALIASES[key];
    const value = env[envName(key)] ?? (alias ? env[alias] : undefined);
    if (value !== undefined && value !== '') out[key] = value;
  }
  return out;
}

function coerce(key: ConfigKey, raw: unknown, origin: string): unknown {
  const schema = ConfigSchema.properties[key] as { type?: string };
  if (typeof raw !== 'string' || schema.type !== 'integer') return raw;
  if (!/^-?\d+$/.test(raw.trim())) {
    throw new ConfigError(`Invalid setting ${key} (${origin}): "${raw}" is not an integer`);
  }
  return Number(raw);
}

export interface ConfigSources {
  env?: NodeJS.ProcessEnv;
  /** Values from CLI flags, keyed by setting name. */
  flags?: Partial<Record<ConfigKey, unknown>>;
  /** Path of a JSON config file; also read from LOGSCOPE_CONFIG. */
  file?: string;
}

/** Loads, validates and freezes the configuration. Throws ConfigError naming the setting. */
export function loadConfig(sources: ConfigSources = {}): Config {
  const env = sources.env ?? process.env;
  const merged: Record<string, unknown> = {};
  const origins: Record<string, string> = {};
  const add = (values: Record<string, unknown>, origin: (k: string) => string) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) continue;
      merged[k] = v;
      origins[k] = origin(k);
    }
  };

  const file = sources.file ?? env.LOGSCOPE_CONFIG;
  if (file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new ConfigError(`Cannot read config file ${file}: ${(err as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError(`Config file ${file} must hold a JSON object`);
    }
    add(parsed as Record<string, unknown>, () => `config file ${file}`);
  }
  add(fromEnv(env), (k) => `env ${envName(k)}`);
  add(sources.flags ?? {}, (k) => `flag --${flagName(k)}`);

  for (const key of Object.keys(merged)) {
    if (!KEYS.includes(key as ConfigKey)) {
      throw new ConfigError(`Unknown setting "${key}" (${origins[key]})`);
    }
    merged[key] = coerce(key as ConfigKey, merged[key], origins[key] ?? 'default');
  }

  const withDefaults = Value.Default(ConfigSchema, merged) as Record<string, unknown>;
  const errors = [...Value.Errors(ConfigSchema, withDefaults)];
  const first = errors[0];
  if (first) {
    const key = first.instancePath.replace(/^\//, '').split('/')[0] ?? '';
    throw new ConfigError(
      `Invalid setting ${key || '(root)'} (${origins[key] ?? 'default'}): ${first.message}` +
        (key ? `, got ${JSON.stringify(withDefaults[key])}` : ''),
    );
  }
  const config = withDefaults as Static<typeof ConfigSchema>;
  config.dataDir = path.resolve(config.dataDir);
  if (config.databaseUrl && !/^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    throw new ConfigError(
      `Invalid setting databaseUrl (${origins.databaseUrl}): only postgres:// URLs are supported (leave empty for SQLite)`,
    );
  }
  return Object.freeze(config);
}

/** Describes every setting, for the CLI help and the README table. */
export function describeSettings(): Array<{
  key: string;
  env: string;
  flag: string;
  default: unknown;
  description: string;
}> {
  return KEYS.map((key) => {
    const s = ConfigSchema.properties[key] as { default?: unknown; description?: string };
    return {
      key,
      env: envName(key),
      flag: `--${flagName(key)}`,
      default: s.default,
      description: s.description ?? '',
    };
  });
}
