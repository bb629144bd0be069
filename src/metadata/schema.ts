import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * Table types of the metadata store. Both dialects store timestamps as ISO 8601 UTC text
 * (sortable, identical on SQLite and PostgreSQL) and booleans as 0/1 integers.
 */
export interface UsersTable {
  id: Generated<number>;
  username: string;
  password_hash: string | null;
  is_admin: number;
  /** JSON array of permission names. */
  permissions: string;
  created_at: string;
  /** 1: may sign in with a password even when single sign-on turns password sign-in off. */
  local_login: Generated<number>;
  /** The OpenID provider's identity of the user (`iss`, `sub`); null for local users. */
  oidc_issuer: string | null;
  oidc_subject: string | null;
  /** 1: disabled by an admin (holds no token, may not sign in, reads nothing). */
  disabled: Generated<number>;
}

export interface AuthTokensTable {
  id: Generated<number>;
  key_id: string;
  secret_hash: string;
  token_type: 'USER' | 'INGEST';
  name: string;
  owner_id: number;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  /**
   * 1: a single sign-on session, or made with one (or with such a token): it expires no
   * later than the session it came from, and tokens made with it are bound the same way.
   */
  sign_on: Generated<number>;
}

export interface QueriesTable {
  query_id: string;
  owner_id: number;
  type: string;
  /** JSON of the params with defaults filled in. */
  params: string;
  created_at: string;
  last_used_at: string;
}

export type TaskPriority = 'low' | 'medium' | 'high' | 'critical';

export interface TasksTable {
  id: Generated<number>;
  title: string;
  description: string;
  owner_id: number;
  assigned_to: number | null;
  is_open: number;
  due_date: string | null;
  priority: TaskPriority;
  /** JSON array of event ids. */
  ev_ids: string;
  trigger_id: number | null;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
}

export interface DashboardsTable {
  id: Generated<number>;
  title: string;
  description: string;
  owner_id: number;
  created_at: string;
  updated_at: string;
}

export interface WidgetsTable {
  id: Generated<number>;
  title: string;
  description: string;
  owner_id: number;
  /** JSON `{type, params}`, params with defaults filled in. */
  query: string;
  /** JSON `{kind, options}`. */
  visualization: string;
  /** JSON `{x, y, w, h}`. */
  position: string;
  refresh_interval: number | null;
  created_at: string;
  updated_at: string;
}

export interface DashboardWidgetsTable {
  dashboard_id: number;
  widget_id: number;
  /** Place of the widget in the dashboard's layout order (0-based). */
  layout: number;
}

export interface DashboardTemplatesTable {
  path: string;
  /** Null once the saving user is deleted. */
  owner_id: number | null;
  /** JSON of the portable dashboard (title, description, widgets). */
  definition: string;
  created_at: string;
}

export interface Database {
  users: UsersTable;
  auth_tokens: AuthTokensTable;
  queries: QueriesTable;
  dashboards: DashboardsTable;
  widgets: WidgetsTable;
  dashboard_widgets: DashboardWidgetsTable;
  dashboard_templates: DashboardTemplatesTable;
  tasks: TasksTable;
  reports: ReportsTable;
  triggers: TriggersTable;
  trigger_matches: TriggerMatchesTable;
  pipelines: PipelinesTable;
  channels: ChannelsTable;
  deliveries: DeliveriesTable;
  query_jobs: QueryJobsTable;
  report_chunks: ReportChunksTable;
  leases: LeasesTable;
}

/** A named piece of work one node does for the cluster, and the node holding it. */
export interface LeasesTable {
  name: string;
  owner: string;
  /** Epoch ms until which `owner` holds it. */
  lease_until: number;
}

/** The shared state of a query job (cluster mode) and the lease of the node computing it. */
export interface QueryJobsTable {
  query_id: string;
  version: number;
  /** The node that computes it or last did. */
  owner: string;
  /** Epoch ms until which `owner` holds the lease (0: nobody computes it). */
  lease_until: number;
  stop_requested: number;
  status: string;
  /** JSON: progress, error, baseMs, window, updatedAt, stopped. */
  state: string | null;
  /** JSON of the type's raw results. */
  results: string | null;
}

/** A report file in pieces, so any node serves it and none holds it whole in memory. */
export interface ReportChunksTable {
  report_id: number;
  seq: number;
  data: Uint8Array;
}

export type QueryRow = Selectable<QueriesTable>;

export interface ReportsTable {
  id: Generated<number>;
  title: string;
  ftype: string;
  status: 'PENDING' | 'READY' | 'ERROR';
  size: number;
  filename: string;
  /** JSON: {kind: 'query', query} or {kind: 'dashboard', dashboard_id}. */
  source: string;
  timezone: string;
  owner_id: number;
  created_at: string;
  error: string | null;
  /** The node generating it while PENDING. */
  owner_node: string | null;
  /** Epoch ms until which `owner_node` holds it; past that another node takes it over. */
  lease_until: Generated<number>;
}

export type ReportRow = Selectable<ReportsTable>;
export type NewReportRow = Insertable<ReportsTable>;

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type TokenRow = Selectable<AuthTokensTable>;
export type NewTokenRow = Insertable<AuthTokensTable>;
export type TaskRow = Selectable<TasksTable>;
export type NewTaskRow = Insertable<TasksTable>;
export type TaskUpdate = Updateable<TasksTable>;
export type DashboardRow = Selectable<DashboardsTable>;
export type NewDashboardRow = Insertable<DashboardsTable>;
export type DashboardUpdate = Updateable<DashboardsTable>;
export type WidgetRow = Selectable<WidgetsTable>;
export type NewWidgetRow = Insertable<WidgetsTable>;
export type WidgetUpdate = Updateable<WidgetsTable>;
export type TemplateRow = Selectable<DashboardTemplatesTable>;

export interface TriggersTable {
  id: Generated<number>;
  name: string;
  description: string;
  severity: TaskPriority;
  /** Query-language string, AND-ed with `filter`. */
  query: string;
  /** JSON array of filter conditions. */
  filter: string;
  enabled: number;
  create_task: number;
  assign_to: number | null;
  owner_id: number;
  created_at: string;
  updated_at: string;
  /** JSON: {"type": "match"} or a threshold condition. */
  condition: Generated<string>;
  /** JSON array of channel ids. */
  notify: Generated<string>;
  cooldown_seconds: Generated<number>;
  /**
   * The user whose rights it runs with: who last decided what it matches or where it
   * sends (null once that user is deleted: it matches nothing).
   */
  run_as: number | null;
}

export interface TriggerMatchesTable {
  trigger_id: number;
  ev_id: string;
  matched_at: string;
  task_id: number | null;
}

export type TriggerRow = Selectable<TriggersTable>;
export type NewTriggerRow = Insertable<TriggersTable>;
export type TriggerUpdate = Updateable<TriggersTable>;
export type NewTriggerMatchRow = Insertable<TriggerMatchesTable>;

export interface PipelinesTable {
  id: Generated<number>;
  /** Set for a built-in pipeline: its definition comes from the code, keyed by this. */
  builtin_key: string | null;
  name: string;
  description: string;
  enabled: number;
  run_order: number;
  /** Query-language string: the events it applies to ('' = all). */
  when_query: string;
  /** JSON array of steps ('[]' for a built-in). */
  steps: string;
  owner_id: number | null;
  created_at: string;
  updated_at: string;
}

export type PipelineRow = Selectable<PipelinesTable>;
export type NewPipelineRow = Insertable<PipelinesTable>;
export type PipelineUpdate = Updateable<PipelinesTable>;

export type ChannelType = 'webhook' | 'slack' | 'email';

export interface ChannelsTable {
  id: Generated<number>;
  name: string;
  type: ChannelType;
  /** JSON: webhook {url, headers?, secret?}, slack {url}, email {to}. */
  config: string;
  owner_id: number;
  /** Who last set where it sends (type and config); null once that user is deleted. */
  decided_by: number | null;
  created_at: string;
  updated_at: string;
}

export type ChannelRow = Selectable<ChannelsTable>;
export type NewChannelRow = Insertable<ChannelsTable>;
export type ChannelUpdate = Updateable<ChannelsTable>;

export type DeliveryStatus = 'pending' | 'sent' | 'failed';

export interface DeliveriesTable {
  id: Generated<number>;
  trigger_id: number | null;
  channel_id: number;
  status: DeliveryStatus;
  attempts: number;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
  /** Epoch ms of the next attempt (pending). */
  next_attempt_at: number;
  /** Epoch ms until which a process is sending it. */
  lease_until: number;
  /** JSON: the notification. */
  payload: string;
  /** The user whose rights made it (its trigger's `run_as` then): who may see its samples. */
  run_as: Generated<number | null>;
}

export type DeliveryRow = Selectable<DeliveriesTable>;
export type NewDeliveryRow = Insertable<DeliveriesTable>;
