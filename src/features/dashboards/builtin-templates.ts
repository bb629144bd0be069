/**
 * Dashboard templates shipped with the product, under `builtin/`. Their
 * queries use the fields the built-in pipelines pull out of real logs, which the sample
 * events of `logscope demo` carry too: web access logs (Apache, nginx) with
 * `http.method`, `url.path`, `status`, `bytes`; sshd logins with `action`
 * (`login_failure`, `login_success`), `user`, `src_ip`; firewall logs (iptables, UFW) with
 * `action` (`deny`, `allow`) and `dst_port`. So a fresh install shows something on every
 * widget, with demo data or with real sshd, web server and firewall logs. All look at
 * the last 24 hours and follow live.
 */
import type { DashboardDefinition, WidgetDefinition } from './dashboard-model.js';

const DAY = { preset: 'last_24_hours' };

/**
 * Grid rows (56 px and a 12 px gap each) of a widget showing ten values, a TopN's bars or
 * table rows: ten rows of 24 px (the least a link to a value's events may be tall) and
 * the widget's header fit in five, not four.
 */
const TEN_ROWS = 5;

type Draft = Omit<WidgetDefinition, 'refresh_interval' | 'description'> & { description?: string };

const widget = (w: Draft): WidgetDefinition => ({
  ...w,
  description: w.description ?? '',
  refresh_interval: null,
});

const overview: DashboardDefinition = {
  title: 'Overview',
  description: 'Event rate, busiest hosts and apps, severities and the latest errors.',
  widgets: [
    widget({
      title: 'Event rate',
      query: { type: 'Timeline', params: { time_range: DAY, interval: 'auto' } },
      visualization: { kind: 'line', options: {} },
      position: { x: 0, y: 0, w: 12, h: 4 },
    }),
    widget({
      title: 'Top hosts',
      query: { type: 'TopN', params: { time_range: DAY, field: 'host', n: 10 } },
      visualization: { kind: 'bar', options: {} },
      position: { x: 0, y: 4, w: 6, h: TEN_ROWS },
    }),
    widget({
      title: 'Top apps',
      query: { type: 'TopN', params: { time_range: DAY, field: 'app', n: 10 } },
      visualization: { kind: 'bar', options: {} },
      position: { x: 6, y: 4, w: 6, h: TEN_ROWS },
    }),
    widget({
      title: 'Severity breakdown',
      query: {
        type: 'Summary',
        params: { time_range: DAY, group_by: ['severity'], metrics: [{ op: 'count' }] },
      },
      visualization: { kind: 'pie', options: {} },
      position: { x: 0, y: 9, w: 4, h: 5 },
    }),
    widget({
      title: 'Latest errors',
      description: 'Events of severity error or worse, newest first.',
      query: {
        type: 'Search',
        params: {
          time_range: DAY,
          query: 'severity:(emergency OR alert OR critical OR error)',
          sort: ['-ts'],
          page_size: 50,
          fields: ['ts', 'host', 'app', 'severity', 'message'],
        },
      },
      visualization: { kind: 'table', options: {} },
      position: { x: 4, y: 9, w: 8, h: 5 },
    }),
  ],
};

const FAILED_LOGIN = 'action:login_failure';
const DENY = 'action:deny';

const security: DashboardDefinition = {
  title: 'Security',
  description: 'Failed logins and firewall denies.',
  widgets: [
    widget({
      title: 'Failed logins by user',
      query: { type: 'TopN', params: { time_range: DAY, query: FAILED_LOGIN, field: 'user', n: 10 } },
      visualization: { kind: 'bar', options: {} },
      position: { x: 0, y: 0, w: 6, h: TEN_ROWS },
    }),
    widget({
      title: 'Failed logins by source IP',
      query: { type: 'TopN', params: { time_range: DAY, query: FAILED_LOGIN, field: 'src_ip', n: 10 } },
      visualization: { kind: 'table', options: {} },
      position: { x: 6, y: 0, w: 6, h: TEN_ROWS },
    }),
    widget({
      title: 'Firewall denies',
      query: { type: 'Timeline', params: { time_range: DAY, query: DENY, interval: 'auto' } },
      visualization: { kind: 'area', options: {} },
      position: { x: 0, y: 5, w: 8, h: TEN_ROWS },
    }),
    widget({
      title: 'Top denied destination ports',
      query: { type: 'TopN', params: { time_range: DAY, query: DENY, field: 'dst_port', n: 10 } },
      visualization: { kind: 'bar', options: {} },
      position: { x: 8, y: 5, w: 4, h: TEN_ROWS },
    }),
  ],
};

/** Access log lines of any web server: the access-log pipelines give them `http.method`. */
const WEB = '_exists_:http.method';

const webTraffic: DashboardDefinition = {
  title: 'Web traffic',
  description: 'Requests by status, busiest paths and clients, server errors and bytes sent.',
  widgets: [
    widget({
      title: 'Requests by status',
      query: {
        type: 'Timeline',
        params: { time_range: DAY, query: WEB, interval: 'auto', split_by: 'status' },
      },
      visualization: { kind: 'area', options: { stacked: true } },
      position: { x: 0, y: 0, w: 12, h: 4 },
    }),
    widget({
      title: 'Top paths',
      query: { type: 'TopN', params: { time_range: DAY, query: WEB, field: 'url.path', n: 10 } },
      visualization: { kind: 'bar', options: {} },
      position: { x: 0, y: 4, w: 6, h: TEN_ROWS },
    }),
    widget({
      title: 'Server errors (5xx)',
      query: {
        type: 'Timeline',
        params: { time_range: DAY, query: `${WEB} AND status:>=500`, interval: 'auto' },
      },
      visualization: { kind: 'line', options: {} },
      position: { x: 6, y: 4, w: 6, h: TEN_ROWS },
    }),
    widget({
      title: 'Top client IPs',
      query: { type: 'TopN', params: { time_range: DAY, query: WEB, field: 'src_ip', n: 10 } },
      visualization: { kind: 'table', options: {} },
      position: { x: 0, y: 9, w: 6, h: TEN_ROWS },
    }),
    widget({
      title: 'Bytes sent',
      query: {
        type: 'Summary',
        params: {
          time_range: DAY,
          query: WEB,
          metrics: [
            { op: 'sum', field: 'bytes' },
            { op: 'avg', field: 'bytes' },
            { op: 'p90', field: 'bytes' },
          ],
        },
      },
      visualization: { kind: 'number', options: {} },
      position: { x: 6, y: 9, w: 6, h: TEN_ROWS },
    }),
  ],
};

/** Built-in templates by path. */
export const BUILTIN_TEMPLATES: Readonly<Record<string, DashboardDefinition>> = {
  'builtin/overview': overview,
  'builtin/security': security,
  'builtin/web-traffic': webTraffic,
};
