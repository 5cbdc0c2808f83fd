// Settings → Single sign-on (user.manage): the workspace's identity provider (GET/PUT/DELETE
// /v1/sso) and its SCIM token (/v1/sso/scim-token). A provider speaks OpenID Connect or SAML 2.0,
// each an entry of PROTOCOLS with its own form; both forms share the fields of what the provider
// is for (the e-mail domains it claims, the default role, the claim or attribute the role is read
// from and its mapping, who may still sign in with a password).
// - OIDC: issuer, client id, client secret (write-only: typed once, never shown back; left empty
//   a change keeps the stored one); the redirect URI to register is shown once saved.
// - SAML: the provider's metadata XML, or its sign-in URL, entity ID and signing certificate;
//   left empty on a change, the stored ones are kept. Once saved: this workspace's entity ID,
//   ACS URL and SP metadata URL to register at the provider.
// Test connection: OIDC reads the discovery document and keys; SAML checks the certificates are
// valid today. The SCIM token is shown once with the SCIM base URL; a new one replaces it.
import type { ComponentChildren, JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, ApiFailure, call } from '../api.js'
import { Ago, ConfirmButton, ErrorNote, Field, SecretOnce, SelectField, TextArea, useLoad, useSubmit } from '../ui.js'
import { ROLES, type Role, SettingsPage } from './settingsFrame.js'

const PASSWORD_RULES = [
  ['owners', 'Owners only (the way in when the provider is down)'],
  ['all', 'Everyone'],
  ['none', 'No one: the provider is the only way in'],
] as const
type PasswordRule = (typeof PASSWORD_RULES)[number][0]

type Settings = Awaited<ReturnType<typeof load>>
type Saved = NonNullable<Settings>
type FormProps = { current: Settings; onSaved: (s: Saved) => void }

async function load() {
  try {
    return (await call(api.GET('/v1/sso'))).data
  } catch (e) {
    if (e instanceof ApiFailure && e.status === 404) return null
    throw e
  }
}

/** The protocols a workspace's provider may speak: each its name and its form. */
const PROTOCOLS: { id: Saved['protocol']; name: string; form: (p: FormProps) => JSX.Element }[] = [
  { id: 'oidc', name: 'OpenID Connect', form: OidcForm },
  { id: 'saml', name: 'SAML 2.0', form: SamlForm },
]

export function SingleSignOn(): JSX.Element {
  const settings = useLoad(load, [])
  const [protocol, setProtocol] = useState<Saved['protocol']>('oidc')
  const [removed, setRemoved] = useState<unknown>(null)
  const current = settings.data
  const chosen = PROTOCOLS.find((p) => p.id === (current?.protocol ?? protocol)) ?? PROTOCOLS[0]!
  return (
    <SettingsPage
      title="Single sign-on"
      intro="People of the e-mail domains you claim sign in through your organisation's identity provider: the sign-in page offers them Continue with SSO. Their user is made at their first sign-in, and their role follows the provider's claim at every one."
    >
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
                    <Register
                      term="Redirect URI"
                      value={current.redirectUri}
                      hint="Register this address at your provider as the application's sign-in redirect URI."
                    />
                    <dt>Client secret</dt>
                    <dd>{current.clientSecretSet ? 'stored (never shown)' : 'not set'}</dd>
                  </>
                ) : (
                  <>
                    <Register
                      term="Entity ID (audience)"
                      value={current.spEntityId}
                      hint="Register this as the application's entity ID (Okta: Audience URI; Entra ID: Identifier)."
                    />
                    <Register
                      term="Assertion consumer service URL"
                      value={current.acsUrl}
                      hint="Register this address at your provider as the application's single sign-on URL (Entra ID: Reply URL)."
                    />
                    <Register
                      term="Service-provider metadata URL"
                      value={current.metadataUrl}
                      hint="Or give your provider this address: it reads the entity ID and the ACS URL from it."
                    />
                    <dt>Provider's sign-in URL</dt>
                    <dd>
                      <code>{current.entryPoint}</code>
                    </dd>
                    <dt>Signing certificates</dt>
                    <dd>
                      {current.idpCertificates.map((c) => (
                        <div key={c.fingerprint256}>
                          {c.subject.replace(/\n/g, ', ')}, valid until {new Date(c.notAfter).toLocaleDateString()}
                        </div>
                      ))}
                    </dd>
                  </>
                )}
                <dt>Claimed domains</dt>
                <dd>{current.emailDomains.join(', ')}</dd>
              </dl>
              <TestConnection protocol={current.protocol} />
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
          <chosen.form key={current?.updatedAt ?? `new-${chosen.id}`} current={current} onSaved={(s) => settings.set(s)} />
          <ScimToken />
        </>
      ) : null}
    </SettingsPage>
  )
}

/** An address of this workspace to register at the provider. */
function Register(props: { term: string; value: string; hint: string }): JSX.Element {
  return (
    <>
      <dt>{props.term}</dt>
      <dd>
        <code>{props.value}</code>
        <br />
        <small class="hint">{props.hint}</small>
      </dd>
    </>
  )
}

function TestConnection(props: { protocol: Saved['protocol'] }): JSX.Element {
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
            const keys = r.keys === 1 ? '1 signing key' : `${r.keys} signing keys`
            setState({
              busy: false,
              text:
                props.protocol === 'oidc'
                  ? `The connection works: ${r.issuer} answered its discovery document and ${keys}.`
                  : `The settings hold: sign-in goes to ${r.authorizationEndpoint}, and ${r.keys === 1 ? '1 signing certificate is' : `${r.keys} signing certificates are`} valid today.`,
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

/** What both protocols' forms take: the claimed domains, the roles and the password rule. */
interface Common {
  domains: string
  defaultRole: Role
  roleSource: string
  roleMap: string
  passwordSignIn: PasswordRule
}

const COMMON_FIELDS = ['emailDomains', 'defaultRole', 'roleMap', 'passwordSignIn'] as const

function commonOf(c: Saved | null): Common {
  return {
    domains: c?.emailDomains.join(', ') ?? '',
    defaultRole: c?.defaultRole ?? 'viewer',
    roleSource: (c?.protocol === 'oidc' ? c.roleClaim : c?.roleAttribute) ?? '',
    roleMap: Object.entries(c?.roleMap ?? {})
      .map(([k, v]) => `${k} = ${v}`)
      .join('\n'),
    passwordSignIn: c?.passwordSignIn ?? 'owners',
  }
}

/** The common part of PUT /v1/sso (the role's source is the protocol's own field). */
function commonBody(v: Common) {
  return {
    emailDomains: v.domains
      .split(/[\s,]+/)
      .map((d) => d.trim())
      .filter(Boolean),
    defaultRole: v.defaultRole,
    roleMap: parseRoleMap(v.roleMap),
    passwordSignIn: v.passwordSignIn,
  }
}

function CommonFields(props: {
  value: Common
  set: (v: Partial<Common>) => void
  errors: Record<string, string>
  /** The field the role is read from: the ID token's claim or the assertion's attribute. */
  source: { field: string; label: string; hint: string }
}): JSX.Element {
  const { value: v, set, errors } = props
  return (
    <>
      <Field
        label="E-mail domains"
        name="sso-domains"
        value={v.domains}
        onInput={(domains) => set({ domains })}
        error={errors.emailDomains}
        hint="Comma-separated, such as example.com: addresses of these domains sign in through this provider. A domain belongs to one workspace."
      />
      <SelectField
        label="Default role"
        name="sso-default-role"
        value={v.defaultRole}
        onInput={(r) => set({ defaultRole: r as Role })}
        options={ROLES}
        error={errors.defaultRole}
      />
      <Field
        label={props.source.label}
        name="sso-role-claim"
        value={v.roleSource}
        onInput={(roleSource) => set({ roleSource })}
        error={errors[props.source.field]}
        hint={props.source.hint}
      />
      <TextArea
        label="Role mapping (one “claim value = role” a line)"
        name="sso-role-map"
        value={v.roleMap}
        onInput={(roleMap) => set({ roleMap })}
        error={errors.roleMap}
      />
      <SelectField
        label="Password sign-in"
        name="sso-password"
        value={v.passwordSignIn}
        onInput={(r) => set({ passwordSignIn: r as PasswordRule })}
        options={PASSWORD_RULES}
        error={errors.passwordSignIn}
      />
    </>
  )
}

/** A provider setting typed as text: a one-line field, or (with `rows`) a text area. */
interface TextInput<K extends string> {
  /** The state's key and the API's field (its error is shown under the control). */
  key: K
  label: string
  name: string
  hint?: string
  type?: 'url' | 'password'
  autoComplete?: string
  rows?: number
}

/** The provider's text settings of a form, each bound to its value in `values` and its error. */
function TextInputs<K extends string>(props: {
  inputs: readonly TextInput<K>[]
  values: Record<K, string>
  set: (key: K, value: string) => void
  errors: Record<string, string>
}): JSX.Element {
  return (
    <>
      {props.inputs.map(({ key, rows, ...f }) =>
        rows ? (
          <TextArea key={key} {...f} rows={rows} value={props.values[key]} onInput={(v) => props.set(key, v)} error={props.errors[key]} />
        ) : (
          <Field key={key} {...f} value={props.values[key]} onInput={(v) => props.set(key, v)} error={props.errors[key]} />
        ),
      )}
    </>
  )
}

/** A form's fields: the protocol's own text settings, then what both protocols share. */
function ProviderFields<K extends string>(props: {
  inputs: readonly TextInput<K>[]
  text: Record<K, string>
  setText: (update: (o: Record<K, string>) => Record<K, string>) => void
  common: Common
  setCommon: (update: (o: Common) => Common) => void
  errors: Record<string, string>
  source: { field: string; label: string; hint: string }
}): JSX.Element {
  return (
    <>
      <TextInputs inputs={props.inputs} values={props.text} set={(k, v) => props.setText((o) => ({ ...o, [k]: v }))} errors={props.errors} />
      <CommonFields value={props.common} set={(v) => props.setCommon((o) => ({ ...o, ...v }))} errors={props.errors} source={props.source} />
    </>
  )
}

/** A protocol's form: its title, the save button and its outcome around its fields. */
function ProviderForm(props: {
  id: string
  title: string
  editing: boolean
  save: ReturnType<typeof useSubmit>
  saved: boolean
  children: ComponentChildren
}): JSX.Element {
  return (
    <form class="form-box" noValidate onSubmit={props.save.submit} aria-labelledby={props.id}>
      <h2 id={props.id}>{props.title}</h2>
      {props.children}
      <ErrorNote error={props.save.error} />
      {props.saved ? (
        <p role="status" class="notice">
          Saved.
        </p>
      ) : null}
      <button type="submit" disabled={props.save.busy}>
        {props.editing ? 'Save changes' : 'Set up single sign-on'}
      </button>
    </form>
  )
}

const OIDC_FIELDS = ['issuer', 'clientId', 'clientSecret', 'roleClaim', ...COMMON_FIELDS] as const

function OidcForm(props: FormProps): JSX.Element {
  // A SAML connection is replaced by this form, not edited by it.
  const c = props.current?.protocol === 'oidc' ? props.current : null
  const [text, setText] = useState({ issuer: c?.issuer ?? '', clientId: c?.clientId ?? '', clientSecret: '' })
  const { issuer, clientId, clientSecret } = text
  const [common, setCommon] = useState(() => commonOf(c))
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
          ...commonBody(common),
          roleClaim: common.roleSource.trim() || null,
        },
      }),
    )
    setText((o) => ({ ...o, clientSecret: '' }))
    setSaved(true)
    props.onSaved(r.data)
  })
  return (
    <ProviderForm id="oidc-title" title="OpenID Connect" editing={!!c} save={save} saved={saved}>
      <ProviderFields
        inputs={[
          {
            key: 'issuer',
            label: 'Issuer URL',
            name: 'sso-issuer',
            type: 'url',
            hint: 'https; its discovery document is read from <issuer>/.well-known/openid-configuration.',
          },
          { key: 'clientId', label: 'Client ID', name: 'sso-client-id' },
          {
            key: 'clientSecret',
            label: 'Client secret',
            name: 'sso-client-secret',
            type: 'password',
            autoComplete: 'new-password',
            hint: c?.clientSecretSet
              ? 'A secret is stored and never shown. Leave this empty to keep it, or type a new one to replace it.'
              : 'Stored sealed and never shown again.',
          },
        ]}
        text={text}
        setText={setText}
        common={common}
        setCommon={setCommon}
        errors={save.fieldErrors}
        source={{ field: 'roleClaim', label: 'Role claim (optional)', hint: 'The ID-token claim the role is read from, such as groups or roles.' }}
      />
    </ProviderForm>
  )
}

const SAML_FIELDS = ['idpMetadataXml', 'entryPoint', 'idpCertificate', 'idpIssuer', 'roleAttribute', ...COMMON_FIELDS] as const

type SamlText = 'idpMetadataXml' | 'entryPoint' | 'idpCertificate' | 'idpIssuer'

/** The provider given by its metadata document. */
const SAML_METADATA: TextInput<SamlText>[] = [
  {
    key: 'idpMetadataXml',
    label: 'Provider metadata XML',
    name: 'saml-metadata',
    rows: 6,
    hint: "Paste the federation metadata your provider offers to download (Okta: Identity Provider metadata; Entra ID: Federation Metadata XML; Keycloak: the realm's SAML descriptor).",
  },
]

/** The provider given by hand: its sign-in URL, entity ID and signing certificate. */
const SAML_BY_HAND: TextInput<SamlText>[] = [
  {
    key: 'entryPoint',
    label: 'Provider sign-in URL',
    name: 'saml-entry-point',
    type: 'url',
    hint: "https; the provider's SAML single sign-on URL (HTTP-Redirect binding).",
  },
  { key: 'idpIssuer', label: 'Provider entity ID (optional)', name: 'saml-idp-issuer', hint: "Given, every assertion's Issuer must be it." },
  {
    key: 'idpCertificate',
    label: 'Provider signing certificate',
    name: 'saml-certificate',
    rows: 6,
    hint: 'PEM (-----BEGIN CERTIFICATE-----) or base64: assertions must be signed with its key.',
  },
]

function SamlForm(props: FormProps): JSX.Element {
  // An OIDC connection is replaced by this form, not edited by it.
  const c = props.current?.protocol === 'saml' ? props.current : null
  const [by, setBy] = useState<'metadata' | 'hand'>('metadata')
  const [text, setText] = useState({ idpMetadataXml: '', entryPoint: '', idpCertificate: '', idpIssuer: '' })
  const { idpMetadataXml: metadata, entryPoint, idpCertificate: certificate, idpIssuer } = text
  const [common, setCommon] = useState(() => commonOf(c))
  const [saved, setSaved] = useState(false)
  const save = useSubmit(SAML_FIELDS, async () => {
    setSaved(false)
    // Left empty on a change, the stored provider settings are kept.
    const idp =
      by === 'metadata'
        ? metadata.trim()
          ? { idpMetadataXml: metadata.trim() }
          : {}
        : entryPoint.trim() || certificate.trim()
          ? { entryPoint: entryPoint.trim(), idpCertificate: certificate.trim(), idpIssuer: idpIssuer.trim() || null }
          : {}
    const r = await call(
      api.PUT('/v1/sso', {
        body: { protocol: 'saml', ...idp, ...commonBody(common), roleAttribute: common.roleSource.trim() || null },
      }),
    )
    setText((o) => ({ ...o, idpMetadataXml: '', idpCertificate: '' }))
    setSaved(true)
    props.onSaved(r.data)
  })
  return (
    <ProviderForm id="saml-title" title="SAML 2.0" editing={!!c} save={save} saved={saved}>
      <fieldset class="checks">
        <legend class="checks-legend">The identity provider</legend>
        <label>
          <input type="radio" name="saml-by" value="metadata" checked={by === 'metadata'} onChange={() => setBy('metadata')} /> Its metadata document (XML)
        </label>
        <label>
          <input type="radio" name="saml-by" value="hand" checked={by === 'hand'} onChange={() => setBy('hand')} /> Its sign-in URL and certificate
        </label>
      </fieldset>
      {c ? <p class="hint">The provider's settings are stored: leave these fields empty to keep them, or give new ones to replace them.</p> : null}
      <ProviderFields
        inputs={by === 'metadata' ? SAML_METADATA : SAML_BY_HAND}
        text={text}
        setText={setText}
        common={common}
        setCommon={setCommon}
        errors={save.fieldErrors}
        source={{
          field: 'roleAttribute',
          label: 'Role attribute (optional)',
          hint: 'The assertion attribute the role is read from, such as groups or memberOf.',
        }}
      />
    </ProviderForm>
  )
}

/** The workspace's SCIM token: whether there is one, a new one shown once with the base URL, revoke. */
function ScimToken(): JSX.Element {
  const state = useLoad(async () => (await call(api.GET('/v1/sso/scim-token'))).data, [])
  const [shown, setShown] = useState<{ token: string; baseUrl: string } | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const s = state.data
  async function create(): Promise<void> {
    setError(null)
    setBusy(true)
    try {
      const r = (await call(api.POST('/v1/sso/scim-token'))).data
      setShown({ token: r.token, baseUrl: r.baseUrl })
      state.set({ createdAt: r.createdAt, baseUrl: r.baseUrl })
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }
  return (
    <section aria-labelledby="scim-title" class="form-box">
      <h2 id="scim-title">SCIM provisioning</h2>
      <p class="hint">
        Your identity provider creates, updates and deactivates this workspace's users through SCIM 2.0: give it the base URL and a token. A deactivated user is
        signed out at once.
      </p>
      <ErrorNote error={state.error ?? error} />
      {shown ? (
        <SecretOnce
          title="SCIM token"
          value={shown.token}
          note={`Give your provider this token as its bearer token, with the SCIM base URL ${shown.baseUrl}. It is not shown again: copy it now.`}
          onDismiss={() => setShown(null)}
        />
      ) : null}
      {s ? (
        <>
          <dl class="facts">
            <dt>SCIM base URL</dt>
            <dd>
              <code>{s.baseUrl}</code>
            </dd>
            <dt>Token</dt>
            <dd>
              {s.createdAt ? (
                <>
                  made <Ago at={s.createdAt} /> (never shown again)
                </>
              ) : (
                'none: provisioning is off'
              )}
            </dd>
          </dl>
          <div class="row">
            <button type="button" class={s.createdAt ? 'secondary' : ''} disabled={busy} onClick={create}>
              {s.createdAt ? 'Replace the SCIM token' : 'Create a SCIM token'}
            </button>
            {s.createdAt ? (
              <ConfirmButton
                label="Revoke the SCIM token"
                name=""
                onConfirm={async () => {
                  setError(null)
                  try {
                    await call(api.DELETE('/v1/sso/scim-token'))
                    setShown(null)
                    state.set({ createdAt: null, baseUrl: s.baseUrl })
                  } catch (e) {
                    setError(e)
                  }
                }}
              />
            ) : null}
          </div>
          {s.createdAt ? <p class="hint">A new token stops the earlier one at once.</p> : null}
        </>
      ) : null}
    </section>
  )
}
