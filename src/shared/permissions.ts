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

/**
 * Permissions as strong as admin for reading (issue #54, docs/access.md): their holder
 * decides what everyone reads, themselves included. Streams name who reads which events;
 * a pipeline writes the fields stream rules match, so a step that rewrites `host` moves
 * events out of a restricted stream. No check short of reading every event could tell
 * such a change from a widening one, so they are granted only to people trusted with
 * every event; the Settings UI and the users API say so where they are granted.
 */
export const ADMIN_LEVEL_PERMISSIONS: readonly Permission[] = ['manage_pipelines', 'manage_streams'];
