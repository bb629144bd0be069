/**
 * The pipelines shipped with the product (`builtin: true`, enabled by default; an admin
 * can disable them but not change them). Each applies to events of its app or, when the
 * event has no app, to lines of its shape. They fill the columns the built-in dashboards
 * query (`action`, `user`, `src_ip`, `dst_port`, `status`, ...), with these `action`s:
 *
 * - sshd: `login_success`, `login_failure` (a failed password, key or `none`),
 *   `invalid_user`, `disconnect`, `connection_closed`, `break_in_attempt`,
 *   `no_identification`, `too_many_failures`;
 * - Linux PAM, su, sudo: `auth_failure`, `user_unknown`, `session_opened`,
 *   `session_closed`, `su`, `su_failure`, `sudo`;
 * - iptables and UFW: `deny` (UFW BLOCK, or a log prefix saying drop, reject, block or
 *   deny), `allow`, `audit`.
 *
 * `syslog-line` reads a whole syslog line sent as a message without an app (a file
 * shipper's `{"message": "Dec 10 06:55:46 host sshd[24200]: ..."}`) into `ts`, `host`,
 * `app`, `proc_id` and the message, so the pipelines after it see the app.
 *
 * Fields are named as Elastic's common schema names them where it has a name
 * (`http.method`, `url.path`, `user_agent`); helper fields start with `_` and are removed
 * before the pipeline ends.
 */
import { compilePipeline, type PipelineDefinition, PipelineSet } from './pipeline.js';

export interface BuiltinPipeline extends PipelineDefinition {
  /** Stable key: the row of a built-in is found by it. */
  key: string;
  description: string;
  order: number;
}

/** Sets `action` to `value` where the marker field `_event` holds `marker`. */
const actionFor = (marker: string, value: string) => ({
  set: { field: 'action', value },
  if: `_event:"${marker}"`,
});
const removeMarker = { remove: { field: '_event' } };

/** `pam_unix(sshd:auth): ` before PAM's messages (absent when the app is `sshd(pam_unix)`). */
const PAM_PREFIX = '^(?:pam_unix\\([^)]*\\): )?';

export const BUILTIN_PIPELINES: readonly BuiltinPipeline[] = [
  {
    key: 'syslog-line',
    name: 'Syslog lines',
    description:
      'A syslog line sent as the message of an event without an app: time, host, app, pid, message.',
    order: 10,
    when: 'NOT _exists_:app',
    steps: [
      {
        grok: {
          field: 'message',
          patterns: [
            '^(?:<%{NONNEGINT}>)?(?P<_time>%{SYSLOGTIMESTAMP}) %{SYSLOGHOST:host} %{PROG:app}(?:\\[%{POSINT:proc_id}\\])?: ?%{GREEDYDATA:message}$',
            '^(?:<%{NONNEGINT}>)?(?P<_time>%{TIMESTAMP_ISO8601}) %{SYSLOGHOST:host} %{PROG:app}(?:\\[%{POSINT:proc_id}\\])?: ?%{GREEDYDATA:message}$',
          ],
        },
      },
      { timestamp: { field: '_time', formats: ['MMM d HH:mm:ss', 'ISO8601'] } },
      { remove: { field: '_time' } },
    ],
  },
  {
    key: 'sshd',
    name: 'OpenSSH server',
    description: 'sshd logins, failures, invalid users and disconnects: action, user, src_ip, src_port.',
    order: 100,
    when: 'app:sshd',
    steps: [
      {
        grok: {
          field: 'message',
          patterns: [
            '^(?P<_event>Accepted) %{WORD:ssh.auth_method} for %{USERNAME:user} from %{IP:src_ip} port %{POSINT:src_port}',
            '^(?:message repeated %{POSINT} times: \\[ ?)?(?P<_event>Failed) %{WORD:ssh.auth_method} for (?:invalid user )?%{DATA:user} from %{IP:src_ip} port %{POSINT:src_port}',
            '^(?P<_event>Invalid user) (?:%{DATA:user} )?from %{IP:src_ip}(?: port %{POSINT:src_port})?',
            '^input_userauth_request: (?P<_event>invalid user) (?P<user>.*?)(?: \\[preauth\\])?$',
            '^(?:error: )?(?P<_event>Received disconnect) from %{IP:src_ip}(?: port %{POSINT:src_port})?:',
            '^(?P<_event>Disconnected) from (?:(?:invalid |authenticating )?user %{USERNAME:user} )?%{IP:src_ip} port %{POSINT:src_port}',
            '^(?P<_event>Connection closed) by (?:(?:invalid |authenticating )?user %{USERNAME:user} )?%{IP:src_ip}(?: port %{POSINT:src_port})?',
            '^reverse mapping checking getaddrinfo for %{NOTSPACE:ssh.reverse_host} \\[%{IP:src_ip}\\] (?P<_event>failed)',
            '^(?P<_event>Did not receive identification string) from %{IP:src_ip}',
            '^Disconnecting: (?P<_event>Too many authentication failures) for (?:invalid user )?%{USERNAME:user}',
          ],
        },
      },
      // Any IP in the text, so that every line naming a client has its address: searched
      // for only where the line's own pattern gave none (a search for an address anywhere
      // in the text cost ~15 µs a line, more than all the patterns above).
      {
        grok: { field: 'message', patterns: ['%{IPV4:src_ip}', '(?:from|for|rhost=) %{IPV6:src_ip}'] },
        if: 'NOT _exists_:src_ip',
      },
      actionFor('Accepted', 'login_success'),
      actionFor('Failed', 'login_failure'),
      actionFor('Invalid user', 'invalid_user'),
      actionFor('invalid user', 'invalid_user'),
      actionFor('Received disconnect', 'disconnect'),
      actionFor('Disconnected', 'disconnect'),
      actionFor('Connection closed', 'connection_closed'),
      actionFor('failed', 'break_in_attempt'),
      actionFor('Did not receive identification string', 'no_identification'),
      actionFor('Too many authentication failures', 'too_many_failures'),
      removeMarker,
    ],
  },
  {
    key: 'linux-auth',
    name: 'Linux PAM, su and sudo',
    description: 'PAM authentication failures and sessions, su and sudo: action, user, src_ip.',
    order: 110,
    when: 'app:(sshd OR su OR sudo OR login OR gdm OR cron OR CRON OR systemd-logind OR vsftpd) OR app:*pam_unix* OR NOT _exists_:app',
    steps: [
      {
        grok: {
          field: 'message',
          patterns: [
            `${PAM_PREFIX}(?P<_event>authentication failure); logname=(?P<pam.logname>\\S*) uid=%{NONNEGINT:pam.uid} euid=%{NONNEGINT:pam.euid} tty=(?P<pam.tty>\\S*) ruser=(?P<pam.ruser>\\S*) rhost=(?P<_rhost>\\S*)(?:\\s+user=%{USERNAME:user})?`,
            `${PAM_PREFIX}(?P<_event>check pass; user unknown)`,
            `${PAM_PREFIX}(?P<_event>session opened) for user %{USERNAME:user} by (?:%{USERNAME:pam.by})?\\(uid=%{NONNEGINT:pam.by_uid}\\)`,
            `${PAM_PREFIX}(?P<_event>session closed) for user %{USERNAME:user}`,
            '^PAM %{POSINT:pam.failures} more (?P<_event>authentication failure)s?;.*?rhost=(?P<_rhost>\\S*)(?:\\s+user=%{USERNAME:user})?',
            '^\\s*%{USERNAME:user} : (?:(?P<sudo.error>[^;]*?) ; )?TTY=(?P<sudo.tty>\\S+) ; PWD=(?P<sudo.pwd>.*?) ; USER=%{USERNAME:sudo.target_user} ; (?P<_event>COMMAND)=%{GREEDYDATA:sudo.command}',
            '^(?P<_event>Successful su) for %{USERNAME:su.target_user} by %{USERNAME:user}',
            '^(?P<_event>FAILED su) for %{USERNAME:su.target_user} by %{USERNAME:user}',
            '^\\((?P<_event>to) %{USERNAME:su.target_user}\\) %{USERNAME:user} on %{NOTSPACE:su.tty}',
          ],
        },
      },
      // The remote host: an address goes to src_ip, a name to src_host.
      { grok: { field: '_rhost', patterns: ['^%{IP:src_ip}$', '^(?P<src_host>.+)$'] } },
      { remove: { field: '_rhost' } },
      actionFor('authentication failure', 'auth_failure'),
      actionFor('check pass; user unknown', 'user_unknown'),
      actionFor('session opened', 'session_opened'),
      actionFor('session closed', 'session_closed'),
      actionFor('COMMAND', 'sudo'),
      actionFor('Successful su', 'su'),
      actionFor('to', 'su'),
      actionFor('FAILED su', 'su_failure'),
      removeMarker,
    ],
  },
  {
    key: 'firewall',
    name: 'iptables and UFW',
    description: 'Packet filter log lines of the kernel: action, src_ip, dst_ip, src_port, dst_port.',
    order: 120,
    when: 'app:kernel OR NOT _exists_:app',
    steps: [
      {
        grok: {
          field: 'message',
          patterns: [
            '(?:\\[UFW (?P<_ufw>[A-Z]+)\\] )?IN=(?P<fw.in>\\S*) OUT=(?P<fw.out>\\S*) (?:MAC=\\S* )?SRC=%{IP:src_ip} DST=%{IP:dst_ip} .*?PROTO=(?P<network.transport>\\w+)(?: SPT=%{NONNEGINT:src_port} DPT=%{NONNEGINT:dst_port})?',
          ],
        },
      },
      { set: { field: 'action', value: 'deny' }, if: '_ufw:BLOCK' },
      { set: { field: 'action', value: 'allow' }, if: '_ufw:ALLOW' },
      { set: { field: 'action', value: 'audit' }, if: '_ufw:AUDIT' },
      {
        set: { field: 'action', value: 'deny' },
        if: '_exists_:fw.in AND NOT _exists_:_ufw AND message:/(?i)drop|reject|block|deny/',
      },
      {
        set: { field: 'action', value: 'allow' },
        if: '_exists_:fw.in AND NOT _exists_:_ufw AND message:/(?i)accept|allow/',
      },
      { remove: { field: '_ufw' } },
    ],
  },
  {
    key: 'apache-access',
    name: 'Apache access log',
    description:
      'Common and combined access log lines: src_ip, http.method, url.path, status, bytes, user_agent.',
    order: 130,
    when: 'app:(apache OR apache2 OR httpd) OR NOT _exists_:app',
    steps: accessLogSteps(),
  },
  {
    key: 'nginx-access',
    name: 'nginx access log',
    description:
      'nginx access log lines (combined format): src_ip, http.method, url.path, status, bytes, user_agent.',
    order: 140,
    when: 'app:nginx',
    steps: accessLogSteps(),
  },
  {
    key: 'apache-error',
    name: 'Apache error log',
    description: 'Apache 2.2 and 2.4 error log lines: ts, severity, src_ip, message.',
    order: 150,
    when: 'app:(apache OR apache2 OR httpd) OR NOT _exists_:app',
    steps: [
      {
        grok: {
          field: 'message',
          patterns: [
            '^\\[(?P<_time>%{DAY} %{MONTH} %{MONTHDAY} %{TIME} %{YEAR})\\] \\[(?:%{WORD:apache.module}:)?%{LOGLEVEL:severity}\\] (?:\\[pid %{POSINT:proc_id}(?::tid %{NONNEGINT:apache.tid})?\\] )?%{GREEDYDATA:message}$',
          ],
        },
      },
      {
        grok: {
          field: 'message',
          patterns: ['^(?:\\[[^\\]]*\\] )*\\[client %{IP:src_ip}(?::%{POSINT:src_port})?\\]'],
        },
        if: '_exists_:_time',
      },
      {
        timestamp: {
          field: '_time',
          formats: ['EEE MMM dd HH:mm:ss.SSSSSS yyyy', 'EEE MMM dd HH:mm:ss yyyy'],
        },
      },
      { remove: { field: '_time' } },
    ],
  },
  {
    key: 'nginx-error',
    name: 'nginx error log',
    description: 'nginx error log lines: ts, severity, src_ip, message.',
    order: 160,
    when: 'app:nginx OR NOT _exists_:app',
    steps: [
      {
        grok: {
          field: 'message',
          patterns: [
            '^(?P<_time>[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}) \\[%{LOGLEVEL:severity}\\] %{POSINT:proc_id}#%{NONNEGINT:nginx.tid}: (?:\\*%{NONNEGINT:nginx.connection_id} )?%{GREEDYDATA:message}$',
          ],
        },
      },
      { grok: { field: 'message', patterns: [', client: %{IP:src_ip}'] }, if: '_exists_:_time' },
      { timestamp: { field: '_time', formats: ['yyyy/MM/dd HH:mm:ss'] } },
      { remove: { field: '_time' } },
    ],
  },
];

function accessLogSteps(): unknown[] {
  return [
    {
      grok: {
        field: 'message',
        patterns: [
          '^%{IPORHOST:src_ip} (?:-|%{HTTPDUSER:http.ident}) (?:-|%{HTTPDUSER:user}) \\[(?P<_time>%{HTTPDATE})\\] "(?:%{WORD:http.method} (?P<url.path>[^ ?"]*)(?:\\?(?P<url.query>[^ "]*))?(?: HTTP/%{NUMBER:http.version})?|(?P<http.request>[^"]*))" %{NONNEGINT:status} (?:%{NONNEGINT:bytes}|-)(?: "(?:-|(?P<http.referrer>[^"]*))" "(?:-|(?P<user_agent>[^"]*))")?',
        ],
      },
    },
    { timestamp: { field: '_time', formats: ['dd/MMM/yyyy:HH:mm:ss Z'] } },
    { remove: { field: '_time' } },
  ];
}

/**
 * The built-ins alone, in their order, as a set that runs them (benches and tests; the
 * server runs them from their rows, with the admin's choices, pipelines-service.ts).
 */
export function builtinPipelineSet(): PipelineSet {
  return new PipelineSet(
    [...BUILTIN_PIPELINES].sort((a, b) => a.order - b.order).map((d, i) => compilePipeline(i, d, true)),
  );
}
