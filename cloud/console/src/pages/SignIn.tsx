// The sign-in page: Email, Password, Sign in. An address with users in several workspaces
// signs in to the one its password fits (the one set last when it fits several); the
// optional Workspace ID names another. Too many failures say when to try again.
// Single sign-on: as the address is typed, the console asks whether its e-mail domain is
// claimed by a workspace's identity provider (GET /v1/sso/lookup); when it is, the page
// offers Continue with SSO (GET /v1/sso/start answers the provider's address, and the
// browser goes there), and when the provider is the only way in it hides the password.
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { ErrorNote, Field, useSubmit } from '../ui.js'

const FIELDS = ['email', 'password', 'workspaceId'] as const
const LOOKS_LIKE_EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]{2,}$/

interface SsoLookup {
  email: string
  sso: boolean
  passwordSignIn: boolean
}

/** Whether `email` signs in through single sign-on, asked a moment after the typing stops. */
function useSsoLookup(email: string): SsoLookup | null {
  const [found, setFound] = useState<SsoLookup | null>(null)
  useEffect(() => {
    const e = email.trim()
    if (!LOOKS_LIKE_EMAIL.test(e)) {
      setFound(null)
      return
    }
    let alive = true
    const timer = setTimeout(() => {
      call(api.GET('/v1/sso/lookup', { params: { query: { email: e } } })).then(
        (r) => alive && setFound({ email: e, ...r.data }),
        // Not known: the password form stays, as for any address.
        () => alive && setFound(null),
      )
    }, 250)
    return () => {
      alive = false
      clearTimeout(timer)
    }
  }, [email])
  return found && found.email === email.trim() ? found : null
}

export function SignIn(props: { onSignedIn: () => void }): JSX.Element {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [workspaceId, setWorkspaceId] = useState('')
  const sso = useSsoLookup(email)
  const [ssoBusy, setSsoBusy] = useState(false)
  const [ssoError, setSsoError] = useState<unknown>(null)
  const { busy, fieldErrors, error, submit } = useSubmit(FIELDS, async () => {
    const named = workspaceId.trim()
    await call(api.POST('/v1/session', { body: { email, password, ...(named ? { workspaceId: named } : {}) } }))
    props.onSignedIn()
  })
  async function continueWithSso(): Promise<void> {
    setSsoBusy(true)
    setSsoError(null)
    try {
      const r = await call(api.GET('/v1/sso/start', { params: { query: { email: email.trim() } } }))
      location.assign(r.data.url)
    } catch (e) {
      setSsoError(e)
      setSsoBusy(false)
    }
  }
  const passwordOff = sso?.sso === true && !sso.passwordSignIn
  return (
    <main id="main" class="narrow" tabIndex={-1}>
      <h1>Sign in</h1>
      <form onSubmit={submit} noValidate aria-label="Sign in">
        <Field label="Email" name="email" type="email" autoComplete="username" value={email} onInput={setEmail} error={fieldErrors.email} required />
        {sso?.sso ? (
          <section class="form-box" aria-labelledby="sso-title">
            <h2 id="sso-title">Single sign-on</h2>
            <p>
              {passwordOff
                ? 'Your organisation signs you in through its identity provider; password sign-in is off for this address.'
                : 'Your organisation signs you in through its identity provider.'}
            </p>
            <ErrorNote error={ssoError} />
            <button type="button" onClick={continueWithSso} disabled={ssoBusy}>
              Continue with SSO
            </button>
          </section>
        ) : null}
        {passwordOff ? null : (
          <>
            <Field
              label="Password"
              name="password"
              type="password"
              autoComplete="current-password"
              value={password}
              onInput={setPassword}
              error={fieldErrors.password}
              required
            />
            <details>
              <summary>Sign in to a particular workspace</summary>
              <Field
                label="Workspace ID"
                name="workspaceId"
                value={workspaceId}
                onInput={setWorkspaceId}
                error={fieldErrors.workspaceId}
                hint="Only when your address belongs to several workspaces: without it you join the one whose password you set last."
              />
            </details>
            <ErrorNote error={error} />
            <button type="submit" class={sso?.sso ? 'secondary' : undefined} disabled={busy}>
              {sso?.sso ? 'Sign in with password' : 'Sign in'}
            </button>
          </>
        )}
      </form>
      <p class="hint">New here? Open the invite link you were sent to set your password.</p>
    </main>
  )
}
