// The console's entry: reads the session (GET /v1/session); without one it shows the sign-in
// page (or the invite page at /console/welcome), with one the frame: a skip link, the
// navigation (only what the user's role may see), the page, and Sign out.
import './styles.css'
import { type JSX, render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, call, onSignedOut, setCsrf } from './api.js'
import { closeLive } from './live.js'
import { mayView, needs, PAGES, pageFor } from './pages/index.js'
import { SignIn } from './pages/SignIn.js'
import { Welcome } from './pages/Welcome.js'
import { Link, navigate, useRoute } from './router.js'
import { type SessionApi, SessionProvider } from './session.js'
import { ErrorNote } from './ui.js'

async function loadSession(): Promise<SessionApi | null> {
  const r = await api.GET('/v1/session')
  if (r.response.status === 401 || r.response.status === 404) return null
  const s = await call(Promise.resolve(r))
  setCsrf(s.data.csrfToken)
  const me = (await call(api.GET('/v1/me'))).data
  const permissions = new Set(me.permissions)
  return {
    user: s.data.user,
    workspace: s.data.workspace,
    expiresAt: s.data.expiresAt,
    permissions,
    can: (p) => permissions.has(p),
    signOut: async () => {
      await call(api.DELETE('/v1/session'))
      setCsrf(null)
      closeLive()
    },
  }
}

function App(): JSX.Element {
  const [session, setSession] = useState<SessionApi | null | undefined>(undefined)
  const [error, setError] = useState<unknown>(null)
  const [n, setN] = useState(0)
  const route = useRoute()
  useEffect(() => {
    loadSession().then(setSession, (e) => setError(e))
  }, [n])
  useEffect(() => onSignedOut(() => setSession(null)), [])
  if (error) return <ErrorNote error={error} />
  if (session === undefined) return <p class="loading">Loading…</p>
  const signedIn = () => {
    setSession(undefined)
    setN((x) => x + 1)
  }
  if (!session) return route.path === '/welcome' ? <Welcome onSignedIn={signedIn} /> : <SignIn onSignedIn={signedIn} />
  if (route.path === '/welcome') navigate('/', { replace: true })
  const page = pageFor(route.path)
  const nav = PAGES.filter((p) => p.nav && mayView(p, session.can))
  return (
    <SessionProvider value={session}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">{session.workspace.name}</span>
        <nav aria-label="Main">
          <ul>
            {nav.map((p) => (
              <li key={p.path}>
                <Link class="nav-link" to={p.path} aria-current={page?.section === p ? 'page' : undefined}>
                  {p.name}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <span class="user">
          {session.user.name ?? session.user.email}
          <button
            type="button"
            class="link"
            onClick={async () => {
              await session.signOut().catch(() => {})
              setSession(null)
              navigate('/', { replace: true })
            }}
          >
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {page ? (
          !mayView(page.entry, session.can) ? (
            <p class="error" role="alert">
              Your role may not see {page.entry.name.toLowerCase()} (it needs {needs(page.entry)}).
            </p>
          ) : (
            <page.entry.component params={page.params} query={route.query} />
          )
        ) : (
          <p class="error" role="alert">
            No such page. <Link to="/">Go to the dashboard</Link>.
          </p>
        )}
      </main>
    </SessionProvider>
  )
}

render(<App />, document.getElementById('app')!)
