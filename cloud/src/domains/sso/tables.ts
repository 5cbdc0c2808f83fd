// The sso domain's tables (migrations 0640, 0641): column types merged into the database's `DB`.
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

export interface SsoSamlRequestsTable {
  id: string
  workspace_id: string
  created_at: string
  expires_at: string
  used_at: string | null
}

export interface ScimTokensTable {
  workspace_id: string
  lookup: string
  secret_hash: string
  created_at: string
}

export interface ScimUsersTable {
  user_id: string
  workspace_id: string
  external_id: string | null
  /** 1 or 0. */
  active: number
  updated_at: string
}

export interface ScimGroupsTable {
  id: string
  workspace_id: string
  display_name: string
  external_id: string | null
  created_at: string
  updated_at: string
}

export interface ScimGroupMembersTable {
  group_id: string
  user_id: string
}

declare module '../../platform/db/schema.js' {
  interface DB {
    sso_saml_requests: SsoSamlRequestsTable
    scim_tokens: ScimTokensTable
    scim_users: ScimUsersTable
    scim_groups: ScimGroupsTable
    scim_group_members: ScimGroupMembersTable
    sso_providers: SsoProvidersTable
    sso_domains: SsoDomainsTable
    sso_flows: SsoFlowsTable
    sso_keys: SsoKeysTable
  }
}
