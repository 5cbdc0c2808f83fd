// Who is signed in: the session (user, workspace, CSRF token) and the permissions the user's
// role holds (GET /v1/me). Pages ask `can(permission)` to decide what to offer.
import { createContext, type JSX, type ComponentChildren } from 'preact'
import { useContext } from 'preact/hooks'

export interface SessionInfo {
  user: { id: string; name: string | null; email: string; role: string }
  workspace: { id: string; name: string }
  expiresAt: string
  permissions: ReadonlySet<string>
}

export interface SessionApi extends SessionInfo {
  can(permission: string): boolean
  signOut(): Promise<void>
}

const Ctx = createContext<SessionApi | null>(null)

export function SessionProvider(props: { value: SessionApi; children: ComponentChildren }): JSX.Element {
  return <Ctx.Provider value={props.value}>{props.children}</Ctx.Provider>
}

export function useSession(): SessionApi {
  const s = useContext(Ctx)
  if (!s) throw new Error('useSession outside a signed-in page')
  return s
}
