// The targeting domain's tables (migration 0600): screens' tags and the groups of screens.
export interface ScreenTagsTable {
  screen_id: string
  workspace_id: string
  /** Lower case. */
  tag: string
}

export interface ScreenGroupsTable {
  id: string
  workspace_id: string
  /** Home location; null = the workspace root. */
  node_id: string | null
  name: string
  /** `static` or `dynamic`. */
  kind: string
  /** A dynamic group's rule, as JSON. */
  rule: string | null
  created_at: string
  updated_at: string
}

export interface GroupScreensTable {
  group_id: string
  screen_id: string
}

declare module '../../platform/db/schema.js' {
  interface DB {
    screen_tags: ScreenTagsTable
    screen_groups: ScreenGroupsTable
    group_screens: GroupScreensTable
  }
}
