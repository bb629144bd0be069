/**
 * The registered components, in order: each is built over the platform and the services of
 * those before it, started in this order and stopped in the reverse one. A new feature is
 * a folder (or a file) here and one line in this list.
 */
import { alerting } from './alerting.js';
import { audit } from './audit/index.js';
import type { Component } from './component.js';
import { dashboards } from './dashboards.js';
import { events } from './events.js';
import { identity } from './identity.js';
import { ingest } from './ingest.js';
import { live } from './live.js';
import { patterns } from './patterns/index.js';
import { queries } from './queries.js';
import { reports } from './reports.js';
import { savedSearches } from './saved-searches/index.js';
import { signOn } from './sign-on/index.js';
import { streams } from './streams/index.js';
import { tasks } from './tasks.js';
import { teams } from './teams/index.js';
import { triggers } from './triggers.js';

export const COMPONENTS: readonly Component[] = [
  audit,
  identity,
  teams,
  signOn,
  streams,
  patterns,
  savedSearches,
  tasks,
  alerting,
  triggers,
  ingest,
  events,
  queries,
  dashboards,
  reports,
  live,
];
