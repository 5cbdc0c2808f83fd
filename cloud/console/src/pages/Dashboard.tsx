// The dashboard: how many screens are online, offline and need attention (drifting: not
// doing what they were told), active emergencies, pending approvals and recent alerts.
// Presence changes update the counts live.
import type { JSX } from 'preact'
import { api, call } from '../api.js'
import { useLive } from '../live.js'
import { Link } from '../router.js'
import { useSession } from '../session.js'
import { Ago, ErrorNote, Page, useLoad } from '../ui.js'
import { emergencyLabel } from '../takeover.js'

async function total(query: { status?: 'online' | 'offline'; drift?: 'drifting' }): Promise<number> {
  const r = await call(api.GET('/v1/screens', { params: { query: { ...query, limit: '1', count: '1' } } }))
  return (r as { total?: number }).total ?? 0
}

export function Dashboard(): JSX.Element {
  const s = useSession()
  const screens = useLoad(
    async () =>
      s.can('screen.view')
        ? { online: await total({ status: 'online' }), offline: await total({ status: 'offline' }), attention: await total({ drift: 'drifting' }) }
        : null,
    [],
  )
  const emergencies = useLoad(
    async () => (s.can('emergency.view') ? (await call(api.GET('/v1/emergencies', { params: { query: { status: 'active' } } }))).data : null),
    [],
  )
  const approvals = useLoad(
    async () => (s.can('approval.view') ? await call(api.GET('/v1/approvals', { params: { query: { state: 'pending', limit: '5', count: '1' } } })) : null),
    [],
  )
  const alerts = useLoad(async () => (s.can('alert.view') ? (await call(api.GET('/v1/alert-events', { params: { query: { limit: '5' } } }))).data : null), [])
  useLive((e) => {
    if (e.event.startsWith('screen.')) screens.reload()
    if (e.event.startsWith('emergency.')) emergencies.reload()
    if (e.event.startsWith('approval.')) approvals.reload()
  })
  return (
    <Page title="Dashboard">
      {screens.data ? (
        <ul class="tiles" aria-label="Screens">
          <li class="tile ok">
            <Link class="tile-link" to="/screens?status=online">
              <strong>{screens.data.online}</strong> online
            </Link>
          </li>
          <li class="tile off">
            <Link class="tile-link" to="/screens?status=offline">
              <strong>{screens.data.offline}</strong> offline
            </Link>
          </li>
          <li class="tile warn">
            <Link class="tile-link" to="/screens?drift=drifting">
              <strong>{screens.data.attention}</strong> need attention
            </Link>
          </li>
        </ul>
      ) : null}
      <ErrorNote error={screens.error} />
      <div class="columns">
        {emergencies.data ? (
          <section aria-labelledby="dash-emergencies">
            <h2 id="dash-emergencies">Active emergencies</h2>
            {emergencies.data.length ? (
              <ul>
                {emergencies.data.map((e) => (
                  <li key={e.id}>
                    <Link to={`/emergencies/${e.id}`}>{emergencyLabel(e)}</Link> since <Ago at={e.startedAt} />
                  </li>
                ))}
              </ul>
            ) : (
              <p>None.</p>
            )}
          </section>
        ) : null}
        {approvals.data ? (
          <section aria-labelledby="dash-approvals">
            <h2 id="dash-approvals">Pending approvals</h2>
            {approvals.data.data.length ? (
              <ul>
                {approvals.data.data.map((a) => (
                  <li key={a.id}>
                    <Link to="/approvals">{a.contentName}</Link> ({a.contentKind})
                  </li>
                ))}
              </ul>
            ) : (
              <p>None.</p>
            )}
          </section>
        ) : null}
        {alerts.data ? (
          <section aria-labelledby="dash-alerts">
            <h2 id="dash-alerts">Recent alerts</h2>
            {alerts.data.length ? (
              <ul>
                {alerts.data.map((a) => (
                  <li key={a.id}>
                    {a.code} on {a.screenName ?? a.screenId} <Ago at={a.openedAt} />
                    {a.closedAt ? ' (closed)' : ''}
                  </li>
                ))}
              </ul>
            ) : (
              <p>None.</p>
            )}
          </section>
        ) : null}
      </div>
    </Page>
  )
}
