// The access domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Defaulted } from '../../platform/db/schema.js'

export interface UsersTable {
  id: string
  workspace_id: string
  name: string | null
  email: string
  role: string
  email_verified_at: string | null
  created_at: string
  /** scrypt hash of the console password (access/passwords.ts); null until one is set. */
  password_hash: Defaulted<string | null>
  password_set_at: Defaulted<string | null>
}

export interface SessionsTable {
  id: string
  workspace_id: string
  user_id: string
  lookup: string
  secret_hash: string
  created_at: string
  expires_at: string
  revoked_at: string | null
}

/** A one-use invite link of a user: `inv_…` kept as a hash, like session tokens. */
export interface UserInvitesTable {
  id: string
  workspace_id: string
  user_id: string
  lookup: string
  secret_hash: string
  created_at: string
  expires_at: string
  used_at: string | null
}

/** A browser that signed in to an address (its device cookie, kept as a hash). */
export interface SignInDevicesTable {
  id: string
  email: string
  /** The account the cookie was earned on (null: earned before accounts were recorded). */
  user_id: string | null
  lookup: string
  secret_hash: string
  created_at: string
  expires_at: string
}

export interface ApiKeysTable {
  id: string
  workspace_id: string
  name: string
  preview: string
  secret_hash: string
  permissions: string
  node_id: string | null
  created_by: string
  expires_at: string | null
  revoked_at: string | null
  last_used_at: string | null
  created_at: string
}

export interface OauthTokensTable {
  id: string
  workspace_id: string
  api_key_id: string
  token_hash: string
  /** The key's secret hash at issue: a rotated key no longer matches. */
  key_secret_hash: string
  created_at: string
  expires_at: string
}

declare module '../../platform/db/schema.js' {
  interface DB {
    users: UsersTable
    sessions: SessionsTable
    user_invites: UserInvitesTable
    sign_in_devices: SignInDevicesTable
    api_keys: ApiKeysTable
    oauth_tokens: OauthTokensTable
  }
}
