import type { Migration } from './Migration.js'

export default {
  version: 80,
  name: 'oauth tokens',
  statements: [
    // Access tokens issued by POST /v1/oauth/token. A token acts as its API key: it is kept
    // only as a hash, and `key_secret_hash` is the key's secret hash when it was issued, so
    // rotating the key (a new secret) ends every token issued before.
    `CREATE TABLE oauth_tokens (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL REFERENCES workspaces(id),
      api_key_id TEXT NOT NULL REFERENCES api_keys(id),
      token_hash TEXT NOT NULL UNIQUE,
      key_secret_hash TEXT NOT NULL,
      created_at TEXT NOT NULL,
      expires_at TEXT NOT NULL
    )`,
    `CREATE INDEX oauth_tokens_expiry ON oauth_tokens(expires_at)`,
    `CREATE INDEX sessions_user ON sessions(user_id)`,
  ],
} satisfies Migration
