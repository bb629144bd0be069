import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Static } from 'typebox';
import { Value } from 'typebox/value';
import { PACKAGE_ROOT } from '../core/package-root.js';
import { parseBusUrl } from './bus-url.js';
import { parseClickHouseUrl } from './clickhouse-url.js';
import { type Config, ConfigSchema, OidcSchema } from './config-schema.js';
import { parseDenyCidrs } from './deny-cidrs.js';

/**
 * The one configuration (its schema: config-schema.ts). Every setting has an environment
 * variable (`LOGSCOPE_<NAME>` in upper snake case), a key in the optional JSON config file
 * and a CLI flag (`--<kebab-name>`). Precedence: flags > env > file > defaults.
 */
export { type Config, ConfigSchema, OidcSchema, PACKAGE_ROOT };

/** The config file read when neither `--config` nor `LOGSCOPE_CONFIG` names one, if it exists. */
export const DEFAULT_CONFIG_FILE = path.join(PACKAGE_ROOT, 'logscope.json');

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
  if (typeof raw === 'string' && key === 'oidc') {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      throw new ConfigError(`Invalid setting oidc (${origin}): not a JSON object`);
    }
  }
  if (typeof raw === 'string' && schema.type === 'boolean') {
    const v = raw.trim().toLowerCase();
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    throw new ConfigError(`Invalid setting ${key} (${origin}): "${raw}" is not true or false`);
  }
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

  const named = sources.file ?? env.LOGSCOPE_CONFIG;
  const file = named || (existsSync(DEFAULT_CONFIG_FILE) ? DEFAULT_CONFIG_FILE : undefined);
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
  const oidc = withDefaults.oidc;
  // The oidc block is checked on its own, so an error names the setting in it (`oidc.clientId`).
  if (oidc && typeof oidc === 'object' && !Array.isArray(oidc)) {
    withDefaults.oidc = Value.Default(OidcSchema, oidc);
    const bad = [...Value.Errors(OidcSchema, withDefaults.oidc)][0];
    if (bad) {
      const missing = (bad.params as { requiredProperties?: string[] }).requiredProperties?.[0];
      const name = ['oidc', ...bad.instancePath.split('/').filter(Boolean), ...(missing ? [missing] : [])];
      throw new ConfigError(
        `Invalid setting ${name.join('.')} (${origins.oidc ?? 'default'}): ${missing ? 'is missing' : bad.message}`,
      );
    }
  }
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
  // A relative data dir: from the config file's folder when the file set it, from the
  // working directory when env or a flag did, and from the install folder by default.
  const dataDirOrigin = origins.dataDir ?? 'default';
  config.dataDir = path.resolve(
    dataDirOrigin === 'default'
      ? PACKAGE_ROOT
      : dataDirOrigin.startsWith('config file') && file
        ? path.dirname(path.resolve(file))
        : process.cwd(),
    config.dataDir,
  );
  // The cold tier's folder: `cold` in the data dir, or relative as the data dir's is.
  const coldOrigin = origins.coldDir ?? 'default';
  config.coldDir = config.coldDir
    ? path.resolve(
        coldOrigin.startsWith('config file') && file ? path.dirname(path.resolve(file)) : process.cwd(),
        config.coldDir,
      )
    : path.join(config.dataDir, 'cold');
  // Backups' root, absolute as the cold tier's folder is.
  if (config.backupRoot)
    config.backupRoot = path.resolve(
      (origins.backupRoot ?? '').startsWith('config file') && file
        ? path.dirname(path.resolve(file))
        : process.cwd(),
      config.backupRoot,
    );
  // The pre-upgrade backups' folder: `backups` in the data dir, or relative as the data dir's is.
  config.upgradeBackupDir = config.upgradeBackupDir
    ? path.resolve(
        (origins.upgradeBackupDir ?? '').startsWith('config file') && file
          ? path.dirname(path.resolve(file))
          : process.cwd(),
        config.upgradeBackupDir,
      )
    : path.join(config.dataDir, 'backups');
  if (config.databaseUrl && !/^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    throw new ConfigError(
      `Invalid setting databaseUrl (${origins.databaseUrl}): only postgres:// URLs are supported (leave empty for SQLite)`,
    );
  }
  if (config.eventStoreUrl) {
    try {
      parseClickHouseUrl(config.eventStoreUrl);
    } catch (err) {
      throw new ConfigError(
        `Invalid setting eventStoreUrl (${origins.eventStoreUrl}): ${(err as Error).message} (leave empty for DuckDB)`,
      );
    }
  }
  try {
    parseDenyCidrs(config.webhookDenyCidrs);
  } catch (err) {
    throw new ConfigError(
      `Invalid setting webhookDenyCidrs (${origins.webhookDenyCidrs}): ${(err as Error).message}`,
    );
  }
  if (config.busUrl) {
    try {
      parseBusUrl(config.busUrl);
    } catch (err) {
      throw new ConfigError(
        `Invalid setting busUrl (${origins.busUrl}): ${(err as Error).message} (leave empty for one server)`,
      );
    }
    if (!config.databaseUrl || !config.eventStoreUrl)
      throw new ConfigError(
        `Invalid setting busUrl (${origins.busUrl}): a cluster node keeps its state where every node reads it: set databaseUrl to PostgreSQL and eventStoreUrl to ClickHouse too`,
      );
  }
  if (config.oidc) checkIssuer(config.oidc.issuer, origins.oidc ?? 'default');
  return Object.freeze(config);
}

/** The issuer is `https://`, or `http://` on a loopback address (a provider on this machine). */
function checkIssuer(issuer: string, origin: string): void {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new ConfigError(`Invalid setting oidc.issuer (${origin}): not a URL, got "${issuer}"`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new ConfigError(
      `Invalid setting oidc.issuer (${origin}): must be https:// (http:// only on a loopback address), got "${issuer}"`,
    );
}

/** Describes every setting, for the CLI help and the table in docs/configuration.md. */
export function describeSettings(): Array<{
  key: string;
  env: string;
  /** Other environment variables read for it (`PORT`). */
  envAliases: string[];
  flag: string;
  default: unknown;
  description: string;
}> {
  return KEYS.map((key) => {
    const s = ConfigSchema.properties[key] as { default?: unknown; description?: string };
    const alias = ENV_ALIASES[key];
    return {
      key,
      env: envName(key),
      envAliases: alias ? [alias] : [],
      flag: `--${flagName(key)}`,
      default: s.default,
      description: s.description ?? '',
    };
  });
}
