import type { Migration } from './Migration.js'

export default {
  version: 641,
  name: 'SAML sign-in and SCIM provisioning',
  statements: [
    // A SAML AuthnRequest this cloud sent and whose answer has not come back: its ID is the
    // answer's InResponseTo, taken once (a replayed answer finds it used), a few minutes.
    `CREATE TABLE sso_saml_requests (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      created_at TEXT NOT NULL,
      expires_at TEXT NOT NULL,
      used_at TEXT
    )`,
    // A workspace's SCIM bearer token (one; a new one replaces it): only its hash is kept.
    `CREATE TABLE scim_tokens (
      workspace_id TEXT PRIMARY KEY,
      lookup TEXT NOT NULL,
      secret_hash TEXT NOT NULL,
      created_at TEXT NOT NULL
    )`,
    `CREATE UNIQUE INDEX scim_tokens_lookup ON scim_tokens(lookup)`,
    // What SCIM says of a user beyond the users table: the provider's externalId and whether
    // the person is active (an inactive user signs in no way and has no session).
    `CREATE TABLE scim_users (
      user_id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      external_id TEXT,
      active INTEGER NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE INDEX scim_users_workspace ON scim_users(workspace_id)`,
    // SCIM groups: a group's displayName maps to a role through the provider's roleMap.
    `CREATE TABLE scim_groups (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      display_name TEXT NOT NULL,
      external_id TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE UNIQUE INDEX scim_groups_name ON scim_groups(workspace_id, display_name)`,
    `CREATE TABLE scim_group_members (
      group_id TEXT NOT NULL,
      user_id TEXT NOT NULL,
      PRIMARY KEY (group_id, user_id)
    )`,
    `CREATE INDEX scim_group_members_user ON scim_group_members(user_id)`,
  ],
} satisfies Migration
