/** What a user may hold besides admin. The web UI's Settings shows this list. */
export const PERMISSIONS = [
  'manage_dashboards',
  'manage_widgets',
  'manage_tasks',
  'manage_tokens',
  'manage_triggers',
  'manage_pipelines',
  'manage_streams',
] as const;
export type Permission = (typeof PERMISSIONS)[number];
