// The sign-in page: Email, Password, Sign in. An address with users in several workspaces
// signs in to the one its password fits (the one set last when it fits several); the
// optional Workspace ID names another. Too many failures say when to try again.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { ErrorNote, Field, useSubmit } from '../ui.js'

const FIELDS = ['email', 'password', 'workspaceId'] as const

export function SignIn(props: { onSignedIn: () => void }): JSX.Element {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [workspaceId, setWorkspaceId] = useState('')
  const { busy, fieldErrors, error, submit } = useSubmit(FIELDS, async () => {
    const named = workspaceId.trim()
    await call(api.POST('/v1/session', { body: { email, password, ...(named ? { workspaceId: named } : {}) } }))
    props.onSignedIn()
  })
  return (
    <main id="main" class="narrow" tabIndex={-1}>
      <h1>Sign in</h1>
      <form onSubmit={submit} noValidate>
        <Field label="Email" name="email" type="email" autoComplete="username" value={email} onInput={setEmail} error={fieldErrors.email} required />
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
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p class="hint">New here? Open the invite link you were sent to set your password.</p>
    </main>
  )
}
