import type { Migration } from './Migration.js'

export default {
  version: 550,
  name: 'console sign-in',
  statements: [
    // A user's console password (scrypt, see access/passwords.ts); null until they accept an invite.
    `ALTER TABLE users ADD COLUMN password_hash TEXT`,
    `ALTER TABLE users ADD COLUMN password_set_at TEXT`,
    // Sign-in looks a user up by address across workspaces.
    `CREATE INDEX users_email ON users(email)`,
    // One-use invite links (`inv_…`, stored as a hash like session tokens), 7 days.
    `CREATE TABLE user_invites (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      user_id TEXT NOT NULL,
      lookup TEXT NOT NULL,
      secret_hash TEXT NOT NULL,
      created_at TEXT NOT NULL,
      expires_at TEXT NOT NULL,
      used_at TEXT
    )`,
    `CREATE INDEX user_invites_lookup ON user_invites(lookup)`,
    `CREATE INDEX user_invites_user ON user_invites(user_id)`,
    // Browsers that signed in to an address before (a device cookie, `dev_…`, stored as a
    // hash): their failed sign-ins are counted apart from everyone else's, so guessing at an
    // address from elsewhere cannot lock its owner out.
    `CREATE TABLE sign_in_devices (
      id TEXT PRIMARY KEY,
      email TEXT NOT NULL,
      lookup TEXT NOT NULL,
      secret_hash TEXT NOT NULL,
      created_at TEXT NOT NULL,
      expires_at TEXT NOT NULL
    )`,
    `CREATE INDEX sign_in_devices_lookup ON sign_in_devices(lookup)`,
  ],
} satisfies Migration
