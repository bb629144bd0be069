/**
 * The registered components, in order: each is built over the platform and the services of
 * those before it, started in this order and stopped in the reverse one. A new feature is
 * a folder here and one line in this list.
 */
import { alerting } from './alerting/index.js';
import { audit } from './audit/index.js';
import { backups } from './backups/index.js';
import { cold } from './cold/index.js';
import type { Component } from './component.js';
import { dashboards } from './dashboards/index.js';
import { events } from './events/index.js';
import { identity } from './identity/index.js';
import { intake } from './intake/index.js';
import { live } from './live/index.js';
import { logMetrics } from './log-metrics/index.js';
import { mcp } from './mcp/index.js';
import { patterns } from './patterns/index.js';
import { queries } from './queries/index.js';
import { reports } from './reports/index.js';
import { savedSearches } from './saved-searches/index.js';
import { schedules } from './schedules/index.js';
import { signOn } from './sign-on/index.js';
import { streams } from './streams/index.js';
import { tasks } from './tasks/index.js';
import { teams } from './teams/index.js';
import { triggers } from './triggers/index.js';

export const COMPONENTS: readonly Component[] = [
  audit,
  identity,
  teams,
  signOn,
  streams,
  cold,
  patterns,
  savedSearches,
  logMetrics,
  tasks,
  alerting,
  triggers,
  intake,
  events,
  queries,
  dashboards,
  reports,
  schedules,
  live,
  mcp,
  backups,
];
