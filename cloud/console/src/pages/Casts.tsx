// Casts (timed takeovers): the list with content, status, screens and times; starting one
// (content from the library, a duration or an end, every screen / a location / a group /
// chosen screens) where the role holds screen.cast; clearing an active one; a cast's page with its
// reach receipts, live.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { useGroups } from '../groups.js'
import { useLive } from '../live.js'
import { Link, navigate } from '../router.js'
import { useSession } from '../session.js'
import { EMPTY_TARGET, Reach, TARGET_FIELDS, TargetFields, targetBody, type Target } from '../takeover.js'
import { Ago, ConfirmButton, ErrorNote, errProps, Page, Shell, useLoad, useSubmit } from '../ui.js'
import type { PageProps } from './types.js'

const FIELDS = [...TARGET_FIELDS, 'expiresAt'] as const

function StartCast(props: { onStarted: (id: string) => void }): JSX.Element {
  const [target, setTarget] = useState<Target>(EMPTY_TARGET)
  const [minutes, setMinutes] = useState('60')
  const [until, setUntil] = useState('')
  const { busy, fieldErrors, error, submit } = useSubmit(FIELDS, async () => {
    const expiresAt = until ? new Date(until).toISOString() : minutes ? new Date(Date.now() + Number(minutes) * 60_000).toISOString() : undefined
    const r = await call(api.POST('/v1/casts', { body: { ...targetBody(target), ...(expiresAt ? { expiresAt } : {}) } }))
    props.onStarted(r.data.id)
  })
  return (
    <form class="panel" aria-labelledby="h-start-cast" onSubmit={submit}>
      <h2 id="h-start-cast">Start a cast</h2>
      <TargetFields prefix="cast" value={target} onChange={setTarget} errors={fieldErrors} />
      <Shell id="cast-minutes" label="For (minutes)" error={until ? null : fieldErrors.expiresAt}>
        <input
          {...errProps('cast-minutes', until ? null : fieldErrors.expiresAt)}
          type="number"
          min="1"
          value={minutes}
          onInput={(e) => setMinutes((e.currentTarget as HTMLInputElement).value)}
        />
      </Shell>
      <Shell id="cast-until" label="Or until (overrides the minutes)" error={until ? fieldErrors.expiresAt : null}>
        <input
          {...errProps('cast-until', until ? fieldErrors.expiresAt : null)}
          type="datetime-local"
          value={until}
          onInput={(e) => setUntil((e.currentTarget as HTMLInputElement).value)}
        />
      </Shell>
      <ErrorNote error={error} />
      <button type="submit" disabled={busy}>
        Start cast
      </button>
    </form>
  )
}

export function Casts(): JSX.Element {
  const s = useSession()
  const list = useLoad(async () => (await call(api.GET('/v1/casts', { params: { query: { limit: '200' } } }))).data, [])
  const [clearError, setClearError] = useState<unknown>(null)
  useLive((e) => {
    if (e.event.startsWith('emergency.')) list.reload()
  })
  const clear = async (id: string) => {
    setClearError(null)
    try {
      await call(api.POST('/v1/casts/{id}/clear', { params: { path: { id } } }))
      list.reload()
    } catch (e) {
      setClearError(e)
    }
  }
  return (
    <Page title="Casts">
      {s.can('screen.cast') ? <StartCast onStarted={(id) => navigate(`/casts/${id}`)} /> : null}
      <ErrorNote error={list.error ?? clearError} />
      {list.data ? (
        <table>
          <caption>
            {list.data.length} cast{list.data.length === 1 ? '' : 's'}, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Content</th>
              <th scope="col">Status</th>
              <th scope="col">Screens</th>
              <th scope="col">Started</th>
              <th scope="col">Ends</th>
              {s.can('screen.cast') ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {list.data.map((c) => (
              <tr key={c.id}>
                <td>
                  <Link to={`/casts/${c.id}`}>{c.contentName ?? c.contentId}</Link> ({c.contentKind})
                </td>
                <td>
                  <span class={`badge ${c.status === 'active' ? 'ok' : c.status === 'paused' ? 'warn' : 'off'}`}>{c.status}</span>
                </td>
                <td>{c.screenCount}</td>
                <td>
                  <Ago at={c.triggeredAt} />
                </td>
                <td>{c.endedAt ? <Ago at={c.endedAt} /> : c.expiresAt ? <Ago at={c.expiresAt} /> : 'when cleared'}</td>
                {s.can('screen.cast') ? (
                  <td>
                    {c.status === 'active' || c.status === 'paused' ? (
                      <ConfirmButton label="Clear cast" name={`of ${c.contentName ?? c.contentId}`} onConfirm={() => void clear(c.id)} />
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : list.loading ? (
        <p>Loading…</p>
      ) : null}
    </Page>
  )
}

export function CastPage(props: PageProps): JSX.Element {
  const s = useSession()
  const id = props.params.id!
  const cast = useLoad(async () => (await call(api.GET('/v1/casts/{id}', { params: { path: { id } } }))).data, [id])
  const [clearError, setClearError] = useState<unknown>(null)
  const c = cast.data
  const clear = async () => {
    setClearError(null)
    try {
      await call(api.POST('/v1/casts/{id}/clear', { params: { path: { id } } }))
      cast.reload()
    } catch (e) {
      setClearError(e)
    }
  }
  const active = c?.status === 'active' || c?.status === 'paused'
  // The group's name beside its id (the cast names only the id).
  const groups = useGroups(c?.scopeKind === 'group')
  return (
    <Page
      title={c ? `Cast: ${c.contentName ?? c.contentId}` : 'Cast'}
      actions={
        c && active && s.can('screen.cast') ? (
          <ConfirmButton label="Clear cast" name={`of ${c.contentName ?? c.contentId}`} onConfirm={() => void clear()} />
        ) : null
      }
    >
      <ErrorNote error={cast.error ?? clearError} />
      {c ? (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>{c.status}</dd>
            <dt>Content</dt>
            <dd>
              {c.contentName ?? c.contentId} ({c.contentKind})
            </dd>
            <dt>Scope</dt>
            <dd>
              {c.scopeKind === 'group' && c.groupId ? (
                <Link to={`/screens?group=${encodeURIComponent(c.groupId)}`}>group {groups?.find((g) => g.id === c.groupId)?.name ?? c.groupId}</Link>
              ) : (
                c.scopeKind
              )}
            </dd>
            <dt>Started</dt>
            <dd>
              <Ago at={c.triggeredAt} />
            </dd>
            <dt>Ends</dt>
            <dd>{c.endedAt ? <Ago at={c.endedAt} /> : c.expiresAt ? <Ago at={c.expiresAt} /> : 'when cleared'}</dd>
          </dl>
          <Reach kind="casts" id={id} active={active} />
        </>
      ) : null}
    </Page>
  )
}
