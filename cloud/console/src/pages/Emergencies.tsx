// Emergencies: the list; starting one (content, a message, every screen / a location /
// a group / chosen screens) and clearing it where the role holds emergency.manage, each after a
// confirmation step; an emergency's page shows its reach live (targeted, published,
// applied, displayed, unreachable) and the screens with their state, and the CAP feed that
// started it, if one did. The CAP alert feeds (CapFeeds.tsx) are reached from the list.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { useLive } from '../live.js'
import { Link, navigate } from '../router.js'
import { useSession } from '../session.js'
import { EMPTY_TARGET, Reach, TARGET_FIELDS, TargetFields, emergencyLabel, targetBody, type Target } from '../takeover.js'
import { Ago, ErrorNote, errProps, Page, Shell, useLoad, useSubmit } from '../ui.js'
import type { PageProps } from './types.js'

const FIELDS = [...TARGET_FIELDS, 'message'] as const

function StartEmergency(): JSX.Element {
  const [target, setTarget] = useState<Target>(EMPTY_TARGET)
  const [message, setMessage] = useState('')
  const [confirming, setConfirming] = useState(false)
  const { busy, fieldErrors, error, submit } = useSubmit(FIELDS, async () => {
    try {
      const r = await call(api.POST('/v1/emergencies', { body: { ...targetBody(target), ...(message.trim() ? { message: message.trim() } : {}) } }))
      navigate(`/emergencies/${r.data.id}`)
    } finally {
      setConfirming(false)
    }
  })
  // While asking for confirmation, an earlier attempt's 422s are not shown (the fields may have changed since).
  const shownErrors: Record<string, string> = confirming ? {} : fieldErrors
  const where =
    target.scopeKind === 'all'
      ? 'every screen'
      : target.scopeKind === 'node'
        ? 'the chosen location'
        : target.scopeKind === 'group'
          ? `the group ${target.groupLabel || target.groupId} (and any screen that joins it while the emergency is on)`
          : `${target.screenIds.length} chosen screen(s)`
  return (
    <form
      class="panel"
      aria-labelledby="h-start-emergency"
      onSubmit={(e) => {
        e.preventDefault()
        if (confirming) void submit()
        else setConfirming(true)
      }}
    >
      <h2 id="h-start-emergency">Start an emergency</h2>
      <TargetFields prefix="emg" value={target} onChange={setTarget} errors={shownErrors} />
      <Shell id="emg-message" label="Message" error={shownErrors.message}>
        <textarea
          {...errProps('emg-message', shownErrors.message)}
          name="message"
          rows={2}
          value={message}
          onInput={(e) => setMessage((e.currentTarget as HTMLTextAreaElement).value)}
        />
      </Shell>
      <ErrorNote error={error} />
      {confirming ? (
        <div class="confirm" role="alert">
          <p>
            This puts {target.contentId || 'the content'} above everything on {where} until it is cleared.
          </p>
          <button type="submit" class="danger" disabled={busy}>
            Yes, start the emergency
          </button>{' '}
          <button type="button" class="secondary" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      ) : (
        <button type="submit" class="danger">
          Start emergency…
        </button>
      )}
    </form>
  )
}

export function Emergencies(): JSX.Element {
  const s = useSession()
  const list = useLoad(async () => (await call(api.GET('/v1/emergencies'))).data, [])
  useLive((e) => {
    if (e.event === 'emergency.started' || e.event === 'emergency.cleared') list.reload()
  })
  return (
    <Page title="Emergencies" actions={<Link to="/emergencies/cap-feeds">CAP alert feeds</Link>}>
      <p>
        Emergencies also start from alerting systems through <Link to="/emergencies/cap-feeds">CAP alert feeds</Link>, each with the log of what its alerts did.
      </p>
      {s.can('emergency.manage') ? <StartEmergency /> : null}
      <ErrorNote error={list.error} />
      {list.data ? (
        <table>
          <caption>
            {list.data.length} emergenc{list.data.length === 1 ? 'y' : 'ies'}, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Content</th>
              <th scope="col">Message</th>
              <th scope="col">Status</th>
              <th scope="col">Screens</th>
              <th scope="col">Started</th>
              <th scope="col">Cleared</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((e) => (
              <tr key={e.id}>
                <td>
                  <Link to={`/emergencies/${e.id}`}>{emergencyLabel(e)}</Link>
                </td>
                <td>{e.message ?? ''}</td>
                <td>
                  <span class={`badge ${e.status === 'active' ? 'warn' : 'off'}`}>{e.status}</span>
                </td>
                <td>{e.screenCount}</td>
                <td>
                  <Ago at={e.startedAt} />
                </td>
                <td>{e.clearedAt ? <Ago at={e.clearedAt} /> : ''}</td>
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

export function EmergencyPage(props: PageProps): JSX.Element {
  const s = useSession()
  const id = props.params.id!
  const emg = useLoad(async () => (await call(api.GET('/v1/emergencies/{id}', { params: { path: { id } } }))).data, [id])
  const [confirming, setConfirming] = useState(false)
  const [clearError, setClearError] = useState<unknown>(null)
  useLive(
    (e) => {
      if (e.event === 'emergency.cleared' && e.data.emergencyId === id) emg.reload()
    },
    [id],
  )
  const e = emg.data
  const clear = async () => {
    setClearError(null)
    try {
      await call(api.POST('/v1/emergencies/{id}/clear', { params: { path: { id } } }))
      emg.reload()
    } catch (err) {
      setClearError(err)
    } finally {
      setConfirming(false)
    }
  }
  const active = e?.status === 'active'
  return (
    <Page
      title={e ? `Emergency: ${emergencyLabel(e)}` : 'Emergency'}
      actions={
        e && active && s.can('emergency.manage') ? (
          confirming ? (
            <div class="confirm" role="alert">
              <span>Clear it? The screens go back to what they played.</span>{' '}
              <button type="button" class="danger" onClick={clear}>
                Yes, clear the emergency
              </button>{' '}
              <button type="button" class="secondary" onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </div>
          ) : (
            <button type="button" onClick={() => setConfirming(true)}>
              Clear emergency…
            </button>
          )
        ) : null
      }
    >
      <ErrorNote error={emg.error ?? clearError} />
      {e ? (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <span class={`badge ${active ? 'warn' : 'off'}`}>{e.status}</span>
            </dd>
            <dt>Message</dt>
            <dd>{e.message ?? '—'}</dd>
            <dt>Content</dt>
            <dd>{e.contentId ? `${e.contentName ?? e.contentId} (${e.contentKind})` : 'none: the message alone'}</dd>
            <dt>Started</dt>
            <dd>
              <Ago at={e.startedAt} />
            </dd>
            {e.source ? (
              <>
                <dt>Started by</dt>
                <dd>
                  <Link to={`/emergencies/cap-feeds/${e.source.capFeedId}`}>a CAP feed</Link> (alert {e.source.alertId})
                </dd>
              </>
            ) : null}
            {e.clearedAt ? (
              <>
                <dt>Cleared</dt>
                <dd>
                  <Ago at={e.clearedAt} /> ({e.screensReleased ?? 0} screens released)
                </dd>
              </>
            ) : null}
          </dl>
          <Reach kind="emergencies" id={id} active={active} />
        </>
      ) : null}
    </Page>
  )
}
