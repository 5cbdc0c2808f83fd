// The invite link's page (/console/welcome#token=inv_…): New password, Set password; the
// user is signed in once it is set. The token stays in the fragment: never sent in a URL.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { ErrorNote, Field, useSubmit } from '../ui.js'

const FIELDS = ['password'] as const

export function Welcome(props: { onSignedIn: () => void }): JSX.Element {
  const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? ''
  const [password, setPassword] = useState('')
  const { busy, fieldErrors, error, submit } = useSubmit(FIELDS, async () => {
    await call(api.POST('/v1/invites/accept', { body: { token, password } }))
    history.replaceState(null, '', '/console/')
    props.onSignedIn()
  })
  return (
    <main id="main" class="narrow" tabIndex={-1}>
      <h1>Welcome</h1>
      {token ? (
        <form onSubmit={submit} noValidate>
          <p>Choose a password for your account: at least 12 characters.</p>
          <Field
            label="New password"
            name="password"
            type="password"
            autoComplete="new-password"
            value={password}
            onInput={setPassword}
            error={fieldErrors.password}
            required
          />
          <ErrorNote error={error} />
          <button type="submit" disabled={busy}>
            Set password
          </button>
        </form>
      ) : (
        <p class="error" role="alert">
          This link has no invite token. Open the link from your invite e-mail again, or ask an owner for a new one.
        </p>
      )}
    </main>
  )
}
