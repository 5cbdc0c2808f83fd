// The sso domain's tables (migration 0640): column types merged into the database's `DB`.
export interface SsoProvidersTable {
  workspace_id: string
  protocol: string
  /** JSON of the provider's settings as the API shows them (never the client secret). */
  settings: string
  /** The OIDC client secret, sealed (secretBox.ts); null without one. */
  client_secret: string | null
  password_sign_in: string
  created_at: string
  updated_at: string
}

export interface SsoDomainsTable {
  domain: string
  workspace_id: string
}

export interface SsoFlowsTable {
  state_hash: string
  workspace_id: string
  nonce: string
  code_verifier: string
  redirect_uri: string
  created_at: string
  expires_at: string
  used_at: string | null
}

export interface SsoKeysTable {
  name: string
  value: string
}

declare module '../../platform/db/schema.js' {
  interface DB {
    sso_providers: SsoProvidersTable
    sso_domains: SsoDomainsTable
    sso_flows: SsoFlowsTable
    sso_keys: SsoKeysTable
  }
}
