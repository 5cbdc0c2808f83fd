import type { Migration } from './Migration.js'

export default {
  version: 600,
  name: 'tags and groups',
  statements: [
    // A screen's tags (domains/targeting), lower case, at most 50 per screen. A deleted
    // screen's rows are removed with it; every read joins the screens anyway.
    `CREATE TABLE screen_tags (
      screen_id TEXT NOT NULL,
      workspace_id TEXT NOT NULL,
      tag TEXT NOT NULL,
      PRIMARY KEY (screen_id, tag)
    )`,
    `CREATE INDEX screen_tags_tag ON screen_tags(workspace_id, tag, screen_id)`,
    // Named sets of screens: static (the rows of group_screens) or dynamic (rule: the JSON of
    // a rule, resolved in SQL whenever the group is used).
    `CREATE TABLE screen_groups (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      node_id TEXT,
      name TEXT NOT NULL,
      kind TEXT NOT NULL,
      rule TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE INDEX screen_groups_workspace ON screen_groups(workspace_id, id)`,
    `CREATE TABLE group_screens (
      group_id TEXT NOT NULL,
      screen_id TEXT NOT NULL,
      PRIMARY KEY (group_id, screen_id)
    )`,
    `CREATE INDEX group_screens_screen ON group_screens(screen_id)`,
    // A cast or an emergency aimed at a group (scope_kind 'group') names it.
    `ALTER TABLE casts ADD COLUMN scope_group_id TEXT`,
    `ALTER TABLE emergencies ADD COLUMN scope_group_id TEXT`,
  ],
} satisfies Migration
