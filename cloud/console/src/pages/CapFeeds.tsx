// CAP alert feeds, under Emergencies: the list (adding a push feed shows its address and
// secret once; a pull feed takes the address it fetches), each feed's filters, deleting one
// after a confirmation (the emergencies its alerts hold are cleared with it); a feed's page
// shows its settings, its alert log (what happened to each document and why) and, where the
// role holds emergency.manage, a sample alert sent through the feed to a chosen screen and
// cleared again.
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { useLive } from '../live.js'
import { Link } from '../router.js'
import { useSession } from '../session.js'
import { EMPTY_TARGET, TARGET_FIELDS, TargetFields, type Target } from '../takeover.js'
import { Ago, ConfirmButton, ErrorNote, errProps, Field, Page, SecretOnce, SelectField, Shell, useLoad, useSubmit } from '../ui.js'
import type { PageProps } from './types.js'

const STATUSES = ['Actual', 'Exercise', 'Test'] as const
const SEVERITIES = ['Extreme', 'Severe', 'Moderate', 'Minor', 'Unknown'] as const
const URGENCIES = ['Immediate', 'Expected', 'Future', 'Past', 'Unknown'] as const
const CERTAINTIES = ['Observed', 'Likely', 'Possible', 'Unlikely', 'Unknown'] as const

const FIELDS = [...TARGET_FIELDS, 'name', 'mode', 'url', 'intervalSeconds', 'accept', 'target', 'areaMatch', 'language'] as const

interface Accept {
  status: string[]
  severity: string[]
  urgency: string[]
  certainty: string[]
  events: string[]
}

/** A feed's filters in words. */
function filtersOf(a: Accept): string {
  const parts = [`status ${a.status.join(', ')}`]
  if (a.severity.length) parts.push(`severity ${a.severity.join(', ')}`)
  if (a.urgency.length) parts.push(`urgency ${a.urgency.join(', ')}`)
  if (a.certainty.length) parts.push(`certainty ${a.certainty.join(', ')}`)
  parts.push(a.events.length ? `events ${a.events.join(', ')}` : 'every event')
  return parts.join('; ')
}

function targetOf(t: { scopeKind?: string; screenIds?: string[]; scopeNodeId?: string; groupId?: string }): string {
  if (t.scopeKind === 'screens') return `${t.screenIds?.length ?? 0} chosen screen(s)`
  if (t.scopeKind === 'node') return `location ${t.scopeNodeId}`
  if (t.scopeKind === 'group') return `group ${t.groupId}`
  return 'every screen'
}

/** A group of checkboxes over fixed values (empty = every value, unless `hint` says otherwise). */
function Checks(p: { id: string; legend: string; values: readonly string[]; value: string[]; onChange: (v: string[]) => void; hint: string }): JSX.Element {
  return (
    <fieldset class="choices" aria-describedby={`${p.id}-hint`}>
      <legend class="legend">{p.legend}</legend>
      {p.values.map((v) => (
        <label key={v} class="choice">
          <input
            type="checkbox"
            name={p.id}
            value={v}
            checked={p.value.includes(v)}
            onChange={(e) => p.onChange((e.currentTarget as HTMLInputElement).checked ? [...p.value, v] : p.value.filter((x) => x !== v))}
          />{' '}
          {v}
        </label>
      ))}
      <small id={`${p.id}-hint`} class="hint">
        {p.hint}
      </small>
    </fieldset>
  )
}

function AddFeed(props: { onCreated: (feed: { name: string; pushUrl: string | null; pushSecret?: string }) => void }): JSX.Element {
  const [name, setName] = useState('')
  const [mode, setMode] = useState<'push' | 'pull'>('push')
  const [url, setUrl] = useState('')
  const [interval, setIntervalText] = useState('60')
  const [target, setTarget] = useState<Target>(EMPTY_TARGET)
  const [status, setStatus] = useState<string[]>(['Actual'])
  const [severity, setSeverity] = useState<string[]>([])
  const [urgency, setUrgency] = useState<string[]>([])
  const [certainty, setCertainty] = useState<string[]>([])
  const [events, setEvents] = useState('')
  const [areaMatch, setAreaMatch] = useState<'target' | 'geo'>('target')
  const [language, setLanguage] = useState('en')
  const { busy, fieldErrors, error, submit } = useSubmit(FIELDS, async () => {
    const r = await call(
      api.POST('/v1/cap-feeds', {
        body: {
          name: name.trim(),
          mode,
          ...(mode === 'pull' ? { url: url.trim(), intervalSeconds: Number(interval) } : {}),
          // No content chosen: the feed's alerts show their message alone.
          ...(target.contentId.trim() ? { contentKind: target.contentKind, contentId: target.contentId.trim() } : {}),
          target: {
            scopeKind: target.scopeKind,
            ...(target.scopeKind === 'node' ? { scopeNodeId: target.scopeNodeId } : {}),
            ...(target.scopeKind === 'group' ? { groupId: target.groupId } : {}),
            ...(target.scopeKind === 'screens' ? { screenIds: target.screenIds } : {}),
          },
          accept: {
            status: status as (typeof STATUSES)[number][],
            severity: severity as (typeof SEVERITIES)[number][],
            urgency: urgency as (typeof URGENCIES)[number][],
            certainty: certainty as (typeof CERTAINTIES)[number][],
            events: events
              .split(',')
              .map((e) => e.trim())
              .filter(Boolean),
          },
          areaMatch,
          language: language.trim() || 'en',
        },
      }),
    )
    props.onCreated(r.data)
    setName('')
    setUrl('')
    setEvents('')
  })
  // A 422 about the target (nested in the body) is shown beside the screens choice.
  const errors: Record<string, string> = { ...fieldErrors, ...(fieldErrors.target ? { scopeKind: fieldErrors.target } : {}) }
  return (
    <form class="panel" noValidate aria-labelledby="h-add-feed" onSubmit={submit}>
      <h2 id="h-add-feed">Add a CAP feed</h2>
      <Field label="Name" name="feed-name" value={name} onInput={setName} error={errors.name} />
      <fieldset class="choices">
        <legend class="legend">How alerts arrive</legend>
        <label class="choice">
          <input type="radio" name="feed-mode" value="push" checked={mode === 'push'} onChange={() => setMode('push')} /> Push: the alerting system sends them
          to an address of ours
        </label>
        <label class="choice">
          <input type="radio" name="feed-mode" value="pull" checked={mode === 'pull'} onChange={() => setMode('pull')} /> Pull: we fetch a CAP document or an
          Atom feed of them
        </label>
        {errors.mode ? <small class="field-error">{errors.mode}</small> : null}
      </fieldset>
      {mode === 'pull' ? (
        <>
          <Field label="Feed address (https)" name="feed-url" type="url" value={url} onInput={setUrl} error={errors.url} />
          <Field
            label="Seconds between fetches"
            name="feed-interval"
            value={interval}
            onInput={setIntervalText}
            error={errors.intervalSeconds}
            hint="30 to 3600"
          />
        </>
      ) : null}
      <TargetFields prefix="cap" value={target} onChange={setTarget} errors={errors} />
      <Shell id="feed-area" label="Which target screens an alert reaches" error={errors.areaMatch}>
        <select
          {...errProps('feed-area', errors.areaMatch)}
          value={areaMatch}
          onChange={(e) => setAreaMatch((e.currentTarget as HTMLSelectElement).value as 'target' | 'geo')}
        >
          <option value="target">Every target screen</option>
          <option value="geo">Only those inside the alert's area (their location's position or geocodes)</option>
        </select>
      </Shell>
      <Checks
        id="feed-status"
        legend="Statuses accepted"
        values={STATUSES}
        value={status}
        onChange={setStatus}
        hint="Test and Exercise alerts accepted are shown marked as a test."
      />
      <Checks id="feed-severity" legend="Severities accepted" values={SEVERITIES} value={severity} onChange={setSeverity} hint="None ticked: every severity." />
      <Checks id="feed-urgency" legend="Urgencies accepted" values={URGENCIES} value={urgency} onChange={setUrgency} hint="None ticked: every urgency." />
      <Checks
        id="feed-certainty"
        legend="Certainties accepted"
        values={CERTAINTIES}
        value={certainty}
        onChange={setCertainty}
        hint="None ticked: every certainty."
      />
      <Field
        label="Events accepted"
        name="feed-events"
        value={events}
        onInput={setEvents}
        error={errors.accept}
        hint="Event names, commas between them (e.g. Tornado Warning); empty: every event."
      />
      <Field
        label="Language shown"
        name="feed-language"
        value={language}
        onInput={setLanguage}
        error={errors.language}
        hint="The alert's text in this language when it has one (en matches en-US), else its first."
      />
      <ErrorNote error={error} />
      <button type="submit" disabled={busy}>
        Add feed
      </button>
    </form>
  )
}

export function CapFeeds(): JSX.Element {
  const s = useSession()
  const manage = s.can('emergency.manage')
  const feeds = useLoad(async () => (await call(api.GET('/v1/cap-feeds'))).data, [])
  const [created, setCreated] = useState<{ name: string; pushUrl: string; secret: string } | null>(null)
  const [note, setNote] = useState<string | null>(null)
  const [deleteError, setDeleteError] = useState<unknown>(null)
  const remove = async (id: string, name: string) => {
    setDeleteError(null)
    setNote(null)
    try {
      const r = await call(api.DELETE('/v1/cap-feeds/{id}', { params: { path: { id } } }))
      setNote(`Deleted ${name}; ${r.data.emergenciesCleared} emergenc${r.data.emergenciesCleared === 1 ? 'y' : 'ies'} it held cleared.`)
      feeds.reload()
    } catch (err) {
      setDeleteError(err)
    }
  }
  return (
    <Page title="CAP alert feeds">
      <p>
        Emergencies started by the alerting systems you already run (IPAWS, weather services, Alertus, Rave, Singlewire, InformaCast…) in the Common Alerting
        Protocol 1.2. <Link to="/emergencies">Back to emergencies</Link>
      </p>
      <ErrorNote error={feeds.error ?? deleteError} />
      {feeds.data ? (
        <table>
          <caption>
            {feeds.data.length} CAP feed{feeds.data.length === 1 ? '' : 's'}
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Arrives by</th>
              <th scope="col">Filters</th>
              <th scope="col">Screens</th>
              <th scope="col">Last fetch</th>
              {manage ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {feeds.data.map((f) => (
              <tr key={f.id}>
                <td>
                  <Link to={`/emergencies/cap-feeds/${f.id}`}>{f.name}</Link>
                </td>
                <td>{f.mode === 'push' ? 'push' : `pull every ${f.intervalSeconds} s`}</td>
                <td>{filtersOf(f.accept)}</td>
                <td>
                  {targetOf(f.target)}
                  {f.areaMatch === 'geo' ? ', inside the alert area' : ''}
                </td>
                <td>{f.mode === 'pull' ? f.lastError ? `failed: ${f.lastError}` : <Ago at={f.lastFetchedAt} /> : '—'}</td>
                {manage ? (
                  <td>
                    <ConfirmButton label="Delete" name={f.name} onConfirm={() => void remove(f.id, f.name)} />
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : feeds.loading ? (
        <p>Loading…</p>
      ) : null}
      {created ? (
        <SecretOnce
          title={`Push secret of ${created.name}`}
          value={created.secret}
          note={`Your alerting system POSTs each CAP document to ${location.origin}${created.pushUrl} with the header "Authorization: Bearer <this secret>". Copy it now: it will not be shown again.`}
          onDismiss={() => setCreated(null)}
        />
      ) : null}
      {note ? (
        <p role="status" class="note">
          {note}
        </p>
      ) : null}
      {manage ? (
        <AddFeed
          onCreated={(f) => {
            setNote(`Added ${f.name}.`)
            if (f.pushUrl && f.pushSecret) setCreated({ name: f.name, pushUrl: f.pushUrl, secret: f.pushSecret })
            feeds.reload()
          }}
        />
      ) : null}
    </Page>
  )
}

/** Sends a sample alert through the feed to a chosen screen, and clears it. */
function SendSample(props: { feedId: string; onChange: () => void }): JSX.Element {
  const [screens, setScreens] = useState<{ id: string; name: string }[] | null>(null)
  const [screenId, setScreenId] = useState('')
  const [sent, setSent] = useState<{ alertId: string; emergencyId: string | null; state: string; screen: string } | null>(null)
  const [cleared, setCleared] = useState<string | null>(null)
  useEffect(() => {
    call(api.GET('/v1/screens', { params: { query: { limit: '200' } } })).then(
      (r) => setScreens((r as { data: { id: string; name: string }[] }).data),
      () => setScreens([]),
    )
  }, [])
  const send = useSubmit(['screenId'], async () => {
    setCleared(null)
    const r = await call(api.POST('/v1/cap-feeds/{id}/sample', { params: { path: { id: props.feedId } }, body: { screenId } }))
    setSent({ ...r.data, screen: screens?.find((x) => x.id === screenId)?.name ?? screenId })
    props.onChange()
  })
  const clear = useSubmit([], async () => {
    if (!sent) return
    const r = await call(api.POST('/v1/cap-feeds/{id}/sample/clear', { params: { path: { id: props.feedId } }, body: { alertId: sent.alertId } }))
    setCleared(r.data.state === 'cleared' ? `The sample is off ${sent.screen}.` : `Nothing to clear: the sample had already ended.`)
    setSent(null)
    props.onChange()
  })
  return (
    <form class="panel" noValidate aria-labelledby="h-sample" onSubmit={send.submit}>
      <h2 id="h-sample">Send a sample alert</h2>
      <p id="sample-hint">
        A CAP test alert through this feed to one screen, whatever its filters and target: shown marked as a test, logged below. It clears itself after 15
        minutes if you do not clear it.
      </p>
      <SelectField
        label="Screen"
        name="sample-screen"
        value={screenId}
        onInput={setScreenId}
        options={[['', screens ? 'Choose a screen' : 'Loading screens…'] as const, ...(screens ?? []).map((x) => [x.id, x.name] as const)]}
        error={send.fieldErrors.screenId}
      />
      <ErrorNote error={send.error ?? clear.error} />
      {sent ? (
        <div class="confirm" role="status">
          <p>
            Sample {sent.state} on {sent.screen}
            {sent.emergencyId ? (
              <>
                {' '}
                (<Link to={`/emergencies/${sent.emergencyId}`}>its emergency</Link>)
              </>
            ) : null}
            .
          </p>
          <button type="button" onClick={() => void clear.submit()} disabled={clear.busy}>
            Clear sample alert
          </button>
        </div>
      ) : (
        <button type="submit" disabled={send.busy || !screenId}>
          Send sample alert
        </button>
      )}
      {cleared ? (
        <p role="status" class="note">
          {cleared}
        </p>
      ) : null}
    </form>
  )
}

export function CapFeedPage(props: PageProps): JSX.Element {
  const s = useSession()
  const id = props.params.id!
  const feed = useLoad(async () => (await call(api.GET('/v1/cap-feeds/{id}', { params: { path: { id } } }))).data, [id])
  const log = useLoad(async () => (await call(api.GET('/v1/cap-feeds/{id}/alerts', { params: { path: { id }, query: { limit: '100' } } }))).data, [id])
  useLive(
    (e) => {
      if (e.event === 'emergency.started' || e.event === 'emergency.cleared') log.reload()
    },
    [id],
  )
  const f = feed.data
  return (
    <Page title={f ? `CAP feed: ${f.name}` : 'CAP feed'}>
      <p>
        <Link to="/emergencies/cap-feeds">All CAP feeds</Link>
      </p>
      <ErrorNote error={feed.error} />
      {f ? (
        <dl class="facts">
          <dt>Arrives by</dt>
          <dd>{f.mode === 'push' ? `push to ${location.origin}${f.pushUrl}` : `pull of ${f.url} every ${f.intervalSeconds} s`}</dd>
          <dt>Filters</dt>
          <dd>{filtersOf(f.accept)}</dd>
          <dt>Screens</dt>
          <dd>
            {targetOf(f.target)}
            {f.areaMatch === 'geo' ? ', only those inside the alert area' : ''}
          </dd>
          <dt>Full screen</dt>
          <dd>{f.presentation.fullscreen.join(', ') || '—'}</dd>
          <dt>Banner</dt>
          <dd>{f.presentation.banner.join(', ') || '—'}</dd>
          <dt>Content beneath</dt>
          <dd>{f.contentId ? `${f.contentId} (${f.contentKind})` : 'none: the alert message alone fills the screen'}</dd>
          {f.mode === 'pull' ? (
            <>
              <dt>Last fetch</dt>
              <dd>{f.lastError ? `failed: ${f.lastError}` : <Ago at={f.lastFetchedAt} />}</dd>
            </>
          ) : null}
        </dl>
      ) : null}
      {f && s.can('emergency.manage') ? <SendSample feedId={id} onChange={log.reload} /> : null}
      <h2 id="h-alert-log">Alert log</h2>
      <ErrorNote error={log.error} />
      {log.data ? (
        <table aria-labelledby="h-alert-log">
          <caption>
            {log.data.length} document{log.data.length === 1 ? '' : 's'}, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Alert</th>
              <th scope="col">Type</th>
              <th scope="col">Severity</th>
              <th scope="col">What happened</th>
              <th scope="col">Why</th>
              <th scope="col">Screens</th>
            </tr>
          </thead>
          <tbody>
            {log.data.map((a) => (
              <tr key={a.id} data-alert={a.id}>
                <td>
                  <Ago at={a.receivedAt} />
                </td>
                <td>
                  {a.headline ?? a.event ?? a.identifier}
                  <br />
                  <small>
                    {a.sender} · {a.identifier}
                  </small>
                </td>
                <td>
                  {a.msgType}
                  {a.status === 'Actual' ? '' : ` (${a.status})`}
                </td>
                <td>{a.severity ?? '—'}</td>
                <td>
                  <span class={`badge ${a.state === 'started' || a.state === 'updated' ? 'warn' : 'off'}`}>{a.state}</span>
                  {a.emergencyId ? (
                    <>
                      {' '}
                      <Link to={`/emergencies/${a.emergencyId}`}>emergency</Link>
                    </>
                  ) : null}
                </td>
                <td>{a.reason ?? ''}</td>
                <td>{a.screensTargeted ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : log.loading ? (
        <p>Loading…</p>
      ) : null}
    </Page>
  )
}
