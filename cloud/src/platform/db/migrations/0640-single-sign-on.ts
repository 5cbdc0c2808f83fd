import type { Migration } from './Migration.js'

export default {
  version: 640,
  name: 'single sign-on',
  statements: [
    // One identity provider per workspace (domains/sso). `settings` is the JSON of what the
    // API shows back; `client_secret` is the OIDC client secret sealed with the cloud's
    // secret key (AES-256-GCM, domains/sso/secretBox.ts), never answered.
    `CREATE TABLE sso_providers (
      workspace_id TEXT PRIMARY KEY,
      protocol TEXT NOT NULL,
      settings TEXT NOT NULL,
      client_secret TEXT,
      password_sign_in TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    // An e-mail domain belongs to at most one workspace's provider: the e-mail-first sign-in
    // sends an address of it there.
    `CREATE TABLE sso_domains (
      domain TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL
    )`,
    `CREATE INDEX sso_domains_workspace ON sso_domains(workspace_id)`,
    // A sign-in started at the provider and not yet back: the state (as a hash), its nonce and
    // PKCE verifier; one use, a few minutes.
    `CREATE TABLE sso_flows (
      state_hash TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      nonce TEXT NOT NULL,
      code_verifier TEXT NOT NULL,
      redirect_uri TEXT NOT NULL,
      created_at TEXT NOT NULL,
      expires_at TEXT NOT NULL,
      used_at TEXT
    )`,
    // The key the client secrets are sealed with when SVC_SECRET_KEY is not set (one row).
    `CREATE TABLE sso_keys (
      name TEXT PRIMARY KEY,
      value TEXT NOT NULL
    )`,
  ],
} satisfies Migration
