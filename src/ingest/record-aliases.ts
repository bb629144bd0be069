/**
 * Which keys of a record fill which column: the API's names, the ECS names, the stock
 * layouts of the shippers the API documents, and the keys Logscope keeps for itself.
 */

/**
 * Where each column is read from, in order of preference. The API's documented names first, then
 * the ECS names Beats and Elastic Agent send for the same thing (`service.name`,
 * `source.ip`, ...) and the common `client_ip`, then the stock layouts of the shippers
 * the API documents: syslog-ng (`MESSAGE HOST PROGRAM PRIORITY FACILITY ISODATE`), rsyslog
 * (`msg fromhost programname timereported syslogseverity-text syslogfacility-text`),
 * journald (`MESSAGE _HOSTNAME SYSLOG_IDENTIFIER PRIORITY SYSLOG_FACILITY
 * __REALTIME_TIMESTAMP`, and `_COMM` for the app of a process that set no identifier), GELF (`short_message host level timestamp`), Docker (`log
 * time`) and winston-elasticsearch's transformer, which puts a logger's meta under `fields`
 * (`fields.host`, `fields.service`, `fields.user`, ...: last, so a top-level name wins), so that
 * shippers work unchanged without the list turning into guesswork.
 */
export const COLUMN_ALIASES = {
  ts: ['@timestamp', 'timestamp', 'ts', 'time', 'ISODATE', 'timereported', '__REALTIME_TIMESTAMP'],
  message: ['message', 'msg', 'log', 'MESSAGE', 'short_message'],
  host: ['host', 'hostname', 'host.name', 'HOST', 'fromhost', '_HOSTNAME', 'fields.host'],
  app: [
    'app',
    'service',
    'program',
    'appname',
    'service.name',
    'PROGRAM',
    'programname',
    'SYSLOG_IDENTIFIER',
    '_COMM',
    'fields.service',
  ],
  severity: [
    'severity',
    'level',
    'log.level',
    'PRIORITY',
    'priority',
    'syslogseverity-text',
    'syslogseverity',
  ],
  facility: ['facility', 'FACILITY', 'syslogfacility-text', 'SYSLOG_FACILITY', 'syslogfacility'],
  src_ip: ['src_ip', 'source.ip', 'client_ip', 'fields.src_ip'],
  src_port: ['src_port', 'source.port', 'fields.src_port'],
  dst_ip: ['dst_ip', 'destination.ip', 'fields.dst_ip'],
  dst_port: ['dst_port', 'destination.port', 'fields.dst_port'],
  user: ['user', 'user.name', 'fields.user'],
  action: ['action', 'fields.action'],
  status: ['status', 'fields.status'],
  bytes: ['bytes', 'fields.bytes'],
  source: ['source'],
} as const satisfies Record<string, readonly string[]>;

/**
 * Fields (not columns) that shippers name differently: stored under one name so that one
 * query finds them all. The syslog parser's `proc_id` is the name.
 */
export const FIELD_ALIASES: Readonly<Record<string, string>> = {
  PID: 'proc_id',
  _PID: 'proc_id',
  procid: 'proc_id',
};

/**
 * Keys that name columns Logscope fills itself: a sender's value is kept
 * as field `orig.<name>`, and `raw` gives it back under its own name.
 */
export const RESERVED_KEYS = ['ev_id', 'received_at', 'stored_at', 'intake', 'pattern_id'] as const;
export const ORIGINAL_PREFIX = 'orig.';

/** Every field stored under another name than it was sent with: one lookup per field. */
export const FIELD_RENAMES: ReadonlyMap<string, string> = new Map([
  ...RESERVED_KEYS.map((k) => [k, ORIGINAL_PREFIX + k] as const),
  ...Object.entries(FIELD_ALIASES),
]);

/** rsyslog's `syslogtag`: `sshd[123]:`. */
export const SYSLOG_TAG_RE = /^([^\s[\]:]+)(?:\[(\d+)\])?:?$/;

export type AliasedColumn = keyof typeof COLUMN_ALIASES;

/** Alias → column and rank, so a record's keys are looked up once instead of every alias. */
export const ALIAS_INDEX = new Map<string, { column: AliasedColumn; rank: number }>();
for (const [column, aliases] of Object.entries(COLUMN_ALIASES) as [AliasedColumn, readonly string[]][]) {
  aliases.forEach((alias, rank) => {
    ALIAS_INDEX.set(alias, { column, rank });
  });
}

/** For each column, the key of its best-ranked alias present in the flattened record. */
export type Candidates = Partial<Record<AliasedColumn, { key: string; rank: number }>>;
