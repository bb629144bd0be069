/**
 * The grok pattern library: the usual names of Logstash's and Elasticsearch's grok
 * libraries, written for RE2 (no lookaround, no atomic groups, no backreferences), so
 * that every pattern a user builds from them runs in linear time. Where the classic
 * definitions use lookbehind to keep a number from starting inside another, these use
 * `\b`. Definitions may refer to each other with `%{NAME}`; a few name their parts
 * (`SYSLOGPROG` gives `program` and `pid`), as in Logstash.
 */
export const GROK_LIBRARY: Readonly<Record<string, string>> = {
  // Words, numbers, text
  USERNAME: '[a-zA-Z0-9._-]+',
  USER: '%{USERNAME}',
  EMAILLOCALPART: "[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+)*",
  EMAILADDRESS: '%{EMAILLOCALPART}@%{HOSTNAME}',
  INT: '[+-]?[0-9]+',
  BASE10NUM: '[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)',
  NUMBER: '%{BASE10NUM}',
  BASE16NUM: '[+-]?(?:0[xX])?[0-9A-Fa-f]+',
  POSINT: '\\b[1-9][0-9]*\\b',
  NONNEGINT: '\\b[0-9]+\\b',
  WORD: '\\b\\w+\\b',
  NOTSPACE: '\\S+',
  SPACE: '\\s*',
  DATA: '.*?',
  GREEDYDATA: '.*',
  QUOTEDSTRING: '(?:"(?:[^"\\\\]|\\\\.)*"|\'(?:[^\'\\\\]|\\\\.)*\'|`(?:[^`\\\\]|\\\\.)*`)',
  QS: '%{QUOTEDSTRING}',
  UUID: '[A-Fa-f0-9]{8}-(?:[A-Fa-f0-9]{4}-){3}[A-Fa-f0-9]{12}',
  // Networking
  MAC: '(?:(?:[A-Fa-f0-9]{2}[:-]){5}[A-Fa-f0-9]{2}|(?:[A-Fa-f0-9]{4}\\.){2}[A-Fa-f0-9]{4})',
  IPV4: '\\b(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\\b',
  IPV6: '(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,7}:|(?:[0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,5}(?::[0-9A-Fa-f]{1,4}){1,2}|(?:[0-9A-Fa-f]{1,4}:){1,4}(?::[0-9A-Fa-f]{1,4}){1,3}|(?:[0-9A-Fa-f]{1,4}:){1,3}(?::[0-9A-Fa-f]{1,4}){1,4}|(?:[0-9A-Fa-f]{1,4}:){1,2}(?::[0-9A-Fa-f]{1,4}){1,5}|[0-9A-Fa-f]{1,4}:(?::[0-9A-Fa-f]{1,4}){1,6}|:(?::[0-9A-Fa-f]{1,4}){1,7}|::|(?:[0-9A-Fa-f]{1,4}:){6}%{IPV4}|::(?:[fF]{4}:)?%{IPV4})',
  IP: '(?:%{IPV6}|%{IPV4})',
  HOSTNAME: '\\b[0-9A-Za-z][0-9A-Za-z-]{0,62}(?:\\.[0-9A-Za-z][0-9A-Za-z-]{0,62})*\\b',
  IPORHOST: '(?:%{IP}|%{HOSTNAME})',
  HOSTPORT: '%{IPORHOST}:%{POSINT}',
  // Paths and URIs
  UNIXPATH: '(?:/[\\w%!$@:.,+~-]*)+',
  PATH: '%{UNIXPATH}',
  URIPROTO: '[A-Za-z][A-Za-z0-9+.-]+',
  URIHOST: '%{IPORHOST}(?::%{POSINT})?',
  URIPATH: "(?:/[A-Za-z0-9$.+!*'(){},~:;=@#%&_\\-]*)+",
  URIPARAM: "\\?[A-Za-z0-9$.+!*'|(){},~@#%&/=:;_?\\-\\[\\]<>]*",
  URIPATHPARAM: '%{URIPATH}(?:%{URIPARAM})?',
  URI: '%{URIPROTO}://(?:%{USER}(?::[^@]*)?@)?(?:%{URIHOST})?(?:%{URIPATHPARAM})?',
  // Dates and times
  MONTH:
    '\\b(?:[Jj]an(?:uary)?|[Ff]eb(?:ruary)?|[Mm]ar(?:ch)?|[Aa]pr(?:il)?|[Mm]ay|[Jj]une?|[Jj]uly?|[Aa]ug(?:ust)?|[Ss]ep(?:t(?:ember)?)?|[Oo]ct(?:ober)?|[Nn]ov(?:ember)?|[Dd]ec(?:ember)?)\\b',
  MONTHNUM: '(?:0?[1-9]|1[0-2])',
  MONTHNUM2: '(?:0[1-9]|1[0-2])',
  MONTHDAY: '(?:0[1-9]|[12][0-9]|3[01]|[1-9])',
  DAY: '(?:Mon(?:day)?|Tue(?:sday)?|Wed(?:nesday)?|Thu(?:rsday)?|Fri(?:day)?|Sat(?:urday)?|Sun(?:day)?)',
  YEAR: '[0-9]{2}(?:[0-9]{2})?',
  HOUR: '(?:2[0123]|[01]?[0-9])',
  MINUTE: '(?:[0-5][0-9])',
  SECOND: '(?:(?:[0-5]?[0-9]|60)(?:[:.,][0-9]+)?)',
  TIME: '%{HOUR}:%{MINUTE}(?::%{SECOND})?',
  DATE_US: '%{MONTHNUM}[/-]%{MONTHDAY}[/-]%{YEAR}',
  DATE_EU: '%{MONTHDAY}[./-]%{MONTHNUM}[./-]%{YEAR}',
  ISO8601_TIMEZONE: '(?:Z|[+-]%{HOUR}(?::?%{MINUTE}))',
  ISO8601_SECOND: '%{SECOND}',
  TIMESTAMP_ISO8601:
    '%{YEAR}-%{MONTHNUM}-%{MONTHDAY}[T ]%{HOUR}:?%{MINUTE}(?::?%{SECOND})?%{ISO8601_TIMEZONE}?',
  DATE: '(?:%{DATE_US}|%{DATE_EU})',
  DATESTAMP: '%{DATE}[- ]%{TIME}',
  TZ: '(?:[APMCE][SD]T|UTC|GMT)',
  HTTPDATE: '%{MONTHDAY}/%{MONTH}/%{YEAR}:%{TIME} %{INT}',
  HTTPDERROR_DATE: '%{DAY} %{MONTH} %{MONTHDAY} %{TIME} %{YEAR}',
  SYSLOGTIMESTAMP: '%{MONTH} +%{MONTHDAY} %{TIME}',
  // Syslog
  PROG: '[\\x21-\\x5a\\x5c\\x5e-\\x7e]+',
  SYSLOGPROG: '%{PROG:program}(?:\\[%{POSINT:pid}\\])?',
  SYSLOGHOST: '%{IPORHOST}',
  SYSLOGFACILITY: '<%{NONNEGINT:facility}.%{NONNEGINT:priority}>',
  SYSLOGBASE: '%{SYSLOGTIMESTAMP:timestamp} (?:%{SYSLOGFACILITY} )?%{SYSLOGHOST:logsource} %{SYSLOGPROG}:',
  LOGLEVEL:
    '(?:[Aa]lert|ALERT|[Tt]race|TRACE|[Dd]ebug|DEBUG|[Nn]otice|NOTICE|[Ii]nfo(?:rmation)?|INFO(?:RMATION)?|[Ww]arn(?:ing)?|WARN(?:ING)?|[Ee]rr(?:or)?|ERR(?:OR)?|[Cc]rit(?:ical)?|CRIT(?:ICAL)?|[Ff]atal|FATAL|[Ss]evere|SEVERE|[Ee]merg(?:ency)?|EMERG(?:ENCY)?)',
  // Web servers
  HTTPDUSER: '(?:%{EMAILADDRESS}|%{USER})',
  COMMONAPACHELOG:
    '%{IPORHOST:clientip} %{HTTPDUSER:ident} %{HTTPDUSER:auth} \\[%{HTTPDATE:timestamp}\\] "(?:%{WORD:verb} %{NOTSPACE:request}(?: HTTP/%{NUMBER:httpversion})?|%{DATA:rawrequest})" %{NUMBER:response} (?:%{NUMBER:bytes}|-)',
  COMBINEDAPACHELOG: '%{COMMONAPACHELOG} %{QS:referrer} %{QS:agent}',
};
