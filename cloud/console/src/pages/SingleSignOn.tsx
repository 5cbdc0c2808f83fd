// Settings → Single sign-on (user.manage): the workspace's identity provider (GET/PUT/DELETE
// /v1/sso). The OpenID Connect connection: issuer, client id, client secret (write-only: typed
// once, never shown back; left empty a change keeps the stored one), the e-mail domains it
// claims, the default role, the role claim and its mapping, and who may still sign in with a
// password. Test connection reads the provider's discovery document and keys. The redirect
// URI to register at the provider is shown once the connection is saved. Each protocol is an
// entry of PROTOCOLS with its own form, so another (SAML) is one more entry.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, ApiFailure, call } from '../api.js'
import { Link } from '../router.js'
import { ConfirmButton, ErrorNote, Field, Page, SelectField, Shell, errProps, useLoad, useSubmit } from '../ui.js'

const ROLES = [
  ['viewer', 'Viewer'],
  ['editor', 'Editor'],
  ['admin', 'Admin'],
  ['owner', 'Owner'],
] as const
type Role = (typeof ROLES)[number][0]

const PASSWORD_RULES = [
  ['owners', 'Owners only (the way in when the provider is down)'],
  ['all', 'Everyone'],
  ['none', 'No one: the provider is the only way in'],
] as const
type PasswordRule = (typeof PASSWORD_RULES)[number][0]

type Settings = Awaited<ReturnType<typeof load>>

async function load() {
  try {
    return (await call(api.GET('/v1/sso'))).data
  } catch (e) {
    if (e instanceof ApiFailure && e.status === 404) return null
    throw e
  }
}

/** The protocols a workspace's provider may speak: each its name and its form. */
const PROTOCOLS: { id: 'oidc'; name: string; form: (p: { current: Settings; onSaved: (s: NonNullable<Settings>) => void }) => JSX.Element }[] = [
  { id: 'oidc', name: 'OpenID Connect', form: OidcForm },
]

export function SingleSignOn(): JSX.Element {
  const settings = useLoad(load, [])
  const [protocol, setProtocol] = useState<(typeof PROTOCOLS)[number]['id']>('oidc')
  const [removed, setRemoved] = useState<unknown>(null)
  const current = settings.data
  const chosen = PROTOCOLS.find((p) => p.id === (current?.protocol ?? protocol)) ?? PROTOCOLS[0]!
  return (
    <Page title="Single sign-on">
      <p>
        <Link to="/settings">Back to settings</Link>
      </p>
      <p class="hint">
        People of the e-mail domains you claim sign in through your organisation's identity provider: the sign-in page offers them Continue with SSO. Their user
        is made at their first sign-in, and their role follows the provider's claim at every one.
      </p>
      <ErrorNote error={settings.error} />
      {settings.loading && current === undefined ? <p class="loading">Loading…</p> : null}
      {current !== undefined ? (
        <>
          {current ? (
            <section aria-labelledby="sso-state" class="form-box">
              <h2 id="sso-state">Connection</h2>
              <dl class="facts">
                <dt>Protocol</dt>
                <dd>{PROTOCOLS.find((p) => p.id === current.protocol)?.name ?? current.protocol}</dd>
                {current.protocol === 'oidc' ? (
                  <>
                    <dt>Redirect URI</dt>
                    <dd>
                      <code>{current.redirectUri}</code>
                      <br />
                      <small class="hint">Register this address at your provider as the application's sign-in redirect URI.</small>
                    </dd>
                  </>
                ) : (
                  <>
                    <dt>Assertion consumer service URL</dt>
                    <dd>
                      <code>{current.acsUrl}</code>
                      <br />
                      <small class="hint">Register this address at your provider as the application's single sign-on URL.</small>
                    </dd>
                  </>
                )}
                <dt>Claimed domains</dt>
                <dd>{current.emailDomains.join(', ')}</dd>
                {current.protocol === 'oidc' ? (
                  <>
                    <dt>Client secret</dt>
                    <dd>{current.clientSecretSet ? 'stored (never shown)' : 'not set'}</dd>
                  </>
                ) : null}
              </dl>
              <TestConnection />
              <ErrorNote error={removed} />
              <ConfirmButton
                label="Remove single sign-on"
                name=""
                onConfirm={async () => {
                  setRemoved(null)
                  try {
                    await call(api.DELETE('/v1/sso'))
                    settings.set(null)
                  } catch (e) {
                    setRemoved(e)
                  }
                }}
              />
            </section>
          ) : (
            <p>Single sign-on is not set up: everyone signs in with a password.</p>
          )}
          {current ? null : (
            <fieldset class="checks">
              <legend class="checks-legend">Protocol</legend>
              {PROTOCOLS.map((p) => (
                <label key={p.id}>
                  <input type="radio" name="sso-protocol" value={p.id} checked={protocol === p.id} onChange={() => setProtocol(p.id)} /> {p.name}
                </label>
              ))}
            </fieldset>
          )}
          <chosen.form key={current?.updatedAt ?? 'new'} current={current} onSaved={(s) => settings.set(s)} />
        </>
      ) : null}
    </Page>
  )
}

function TestConnection(): JSX.Element {
  const [state, setState] = useState<{ busy: boolean; text: string | null; error: unknown }>({ busy: false, text: null, error: null })
  return (
    <div>
      <button
        type="button"
        class="secondary"
        disabled={state.busy}
        onClick={async () => {
          setState({ busy: true, text: null, error: null })
          try {
            const r = (await call(api.POST('/v1/sso/test'))).data
            setState({
              busy: false,
              text: `The connection works: ${r.issuer} answered its discovery document and ${r.keys === 1 ? '1 signing key' : `${r.keys} signing keys`}.`,
              error: null,
            })
          } catch (e) {
            setState({ busy: false, text: null, error: e })
          }
        }}
      >
        Test connection
      </button>
      {state.text ? (
        <p role="status" class="notice">
          {state.text}
        </p>
      ) : null}
      <ErrorNote error={state.error} />
    </div>
  )
}

const OIDC_FIELDS = ['issuer', 'clientId', 'clientSecret', 'emailDomains', 'defaultRole', 'roleClaim', 'roleMap', 'passwordSignIn'] as const

/** "value = role" lines → the role map; a line that is not one is named. */
function parseRoleMap(text: string): Record<string, Role> {
  const out: Record<string, Role> = {}
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (!line) continue
    const eq = line.lastIndexOf('=')
    const key = eq > 0 ? line.slice(0, eq).trim() : ''
    const role =
      eq > 0
        ? line
            .slice(eq + 1)
            .trim()
            .toLowerCase()
        : ''
    if (!key || !ROLES.some(([r]) => r === role))
      throw new ApiFailure(422, 'validation_error', `roleMap: “${line}” is not “claim value = role” (a role of ${ROLES.map(([r]) => r).join(', ')}).`, {})
    out[key] = role as Role
  }
  return out
}

function OidcForm(props: { current: Settings; onSaved: (s: NonNullable<Settings>) => void }): JSX.Element {
  // A SAML connection is replaced by this form, not edited by it.
  const c = props.current?.protocol === 'oidc' ? props.current : null
  const [issuer, setIssuer] = useState(c?.issuer ?? '')
  const [clientId, setClientId] = useState(c?.clientId ?? '')
  const [clientSecret, setClientSecret] = useState('')
  const [domains, setDomains] = useState(c?.emailDomains.join(', ') ?? '')
  const [defaultRole, setDefaultRole] = useState<Role>(c?.defaultRole ?? 'viewer')
  const [roleClaim, setRoleClaim] = useState(c?.roleClaim ?? '')
  const [roleMap, setRoleMap] = useState(
    Object.entries(c?.roleMap ?? {})
      .map(([k, v]) => `${k} = ${v}`)
      .join('\n'),
  )
  const [passwordSignIn, setPasswordSignIn] = useState<PasswordRule>(c?.passwordSignIn ?? 'owners')
  const [saved, setSaved] = useState(false)
  const save = useSubmit(OIDC_FIELDS, async () => {
    setSaved(false)
    const r = await call(
      api.PUT('/v1/sso', {
        body: {
          protocol: 'oidc',
          issuer: issuer.trim(),
          clientId: clientId.trim(),
          ...(clientSecret ? { clientSecret } : {}),
          emailDomains: domains
            .split(/[\s,]+/)
            .map((d) => d.trim())
            .filter(Boolean),
          defaultRole,
          roleClaim: roleClaim.trim() || null,
          roleMap: parseRoleMap(roleMap),
          passwordSignIn,
        },
      }),
    )
    setClientSecret('')
    setSaved(true)
    props.onSaved(r.data)
  })
  return (
    <form class="form-box" noValidate onSubmit={save.submit} aria-labelledby="oidc-title">
      <h2 id="oidc-title">OpenID Connect</h2>
      <Field
        label="Issuer URL"
        name="sso-issuer"
        type="url"
        value={issuer}
        onInput={setIssuer}
        error={save.fieldErrors.issuer}
        hint="https; its discovery document is read from <issuer>/.well-known/openid-configuration."
      />
      <Field label="Client ID" name="sso-client-id" value={clientId} onInput={setClientId} error={save.fieldErrors.clientId} />
      <Field
        label="Client secret"
        name="sso-client-secret"
        type="password"
        autoComplete="new-password"
        value={clientSecret}
        onInput={setClientSecret}
        error={save.fieldErrors.clientSecret}
        hint={
          c?.clientSecretSet
            ? 'A secret is stored and never shown. Leave this empty to keep it, or type a new one to replace it.'
            : 'Stored sealed and never shown again.'
        }
      />
      <Field
        label="E-mail domains"
        name="sso-domains"
        value={domains}
        onInput={setDomains}
        error={save.fieldErrors.emailDomains}
        hint="Comma-separated, such as example.com: addresses of these domains sign in through this provider. A domain belongs to one workspace."
      />
      <SelectField
        label="Default role"
        name="sso-default-role"
        value={defaultRole}
        onInput={(v) => setDefaultRole(v as Role)}
        options={ROLES}
        error={save.fieldErrors.defaultRole}
      />
      <Field
        label="Role claim (optional)"
        name="sso-role-claim"
        value={roleClaim}
        onInput={setRoleClaim}
        error={save.fieldErrors.roleClaim}
        hint="The ID-token claim the role is read from, such as groups or roles."
      />
      <Shell id="f-sso-role-map" label="Role mapping (one “claim value = role” a line)" error={save.fieldErrors.roleMap}>
        <textarea
          {...errProps('f-sso-role-map', save.fieldErrors.roleMap)}
          name="sso-role-map"
          rows={3}
          value={roleMap}
          onInput={(e) => setRoleMap((e.currentTarget as HTMLTextAreaElement).value)}
        />
      </Shell>
      <SelectField
        label="Password sign-in"
        name="sso-password"
        value={passwordSignIn}
        onInput={(v) => setPasswordSignIn(v as PasswordRule)}
        options={PASSWORD_RULES}
        error={save.fieldErrors.passwordSignIn}
      />
      <ErrorNote error={save.error} />
      {saved ? (
        <p role="status" class="notice">
          Saved.
        </p>
      ) : null}
      <button type="submit" disabled={save.busy}>
        {c ? 'Save changes' : 'Set up single sign-on'}
      </button>
    </form>
  )
}
