// The sign-in page: Email, Password, Sign in. An address with users in several workspaces
// picks one; too many failures say when to try again.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, ApiFailure, call } from '../api.js'
import { ErrorNote, Field, useSubmit } from '../ui.js'

const FIELDS = ['email', 'password', 'workspaceId'] as const

export function SignIn(props: { onSignedIn: () => void }): JSX.Element {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [workspaces, setWorkspaces] = useState<{ id: string; name: string }[] | null>(null)
  const [workspaceId, setWorkspaceId] = useState('')
  const { busy, fieldErrors, error, submit } = useSubmit(FIELDS, async () => {
    try {
      await call(api.POST('/v1/session', { body: { email, password, ...(workspaceId ? { workspaceId } : {}) } }))
    } catch (e) {
      if (e instanceof ApiFailure && Array.isArray(e.body.workspaces)) {
        setWorkspaces(e.body.workspaces as { id: string; name: string }[])
        throw new ApiFailure(422, 'validation_error', 'Choose the workspace to sign in to.', {})
      }
      throw e
    }
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
        {workspaces ? (
          <div class="field">
            <label for="f-workspace">Workspace</label>
            <select id="f-workspace" value={workspaceId} onChange={(e) => setWorkspaceId((e.currentTarget as HTMLSelectElement).value)}>
              <option value="">Choose…</option>
              {workspaces.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name}
                </option>
              ))}
            </select>
          </div>
        ) : null}
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p class="hint">New here? Open the invite link you were sent to set your password.</p>
    </main>
  )
}
