// One screen: its state (presence, what it reports playing, its panel, drift), followed live;
// its details, operating hours and panel profile edited (screenSettings.tsx); what it will
// play and why (the timeline, in its time zone), a screenshot on request, the panel's
// controls from its protocol's presets with each command's outcome (a command that switches
// the panel is confirmed first), its play log, and deleting it.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { Thumb } from '../thumb.js'
import { useLive } from '../live.js'
import { Link } from '../router.js'
import { useSession } from '../session.js'
import { TagEditor, Tags } from '../groups.js'
import { ContentPicker } from '../picker.js'
import { DeleteScreen, HoursEditor, PanelProfileForm, ScreenDetails } from '../screenSettings.js'
import { Ago, ConfirmButton, ErrorNote, Page, Shell, Status, useLoad, useSubmit } from '../ui.js'
import type { PageProps } from './types.js'

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms))
const FINAL_JOB = new Set(['ok', 'nak', 'timeout', 'failed', 'expired'])

function Timeline(props: { id: string }): JSX.Element {
  const t = useLoad(async () => (await call(api.GET('/v1/screens/{id}/timeline', { params: { path: { id: props.id } } }))).data, [props.id])
  if (t.error) return <ErrorNote error={t.error} />
  if (!t.data) return <p>Loading…</p>
  return (
    <table>
      <caption>What plays in the next 24 hours, and why</caption>
      <thead>
        <tr>
          <th scope="col">From</th>
          <th scope="col">Until</th>
          <th scope="col">Plays</th>
          <th scope="col">Why</th>
        </tr>
      </thead>
      <tbody>
        {t.data.segments.map((s) => (
          <tr key={s.start}>
            <td>{s.startLocal.replace('T', ' ').slice(0, 16)}</td>
            <td>{s.endLocal.replace('T', ' ').slice(0, 16)}</td>
            <td>{s.contentName ?? s.contentId ?? 'nothing'}</td>
            <td>{s.reason}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function Screenshot(props: { id: string }): JSX.Element {
  const [shot, setShot] = useState<{ id: string; status: string; reason: string | null } | null>(null)
  const [error, setError] = useState<unknown>(null)
  const take = async () => {
    setError(null)
    try {
      let s = (await call(api.POST('/v1/screens/{id}/screenshot', { params: { path: { id: props.id } } }))).data
      setShot(s)
      while (s.status !== 'ok' && s.status !== 'failed') {
        await wait(1000)
        s = (await call(api.GET('/v1/screenshots/{id}', { params: { path: { id: s.id } } }))).data
        setShot(s)
      }
    } catch (e) {
      setError(e)
    }
  }
  return (
    <div>
      <button type="button" onClick={take} disabled={!!shot && shot.status !== 'ok' && shot.status !== 'failed'}>
        Take a screenshot
      </button>
      <ErrorNote error={error} />
      <p aria-live="polite">
        {shot
          ? shot.status === 'ok'
            ? 'Screenshot taken.'
            : shot.status === 'failed'
              ? `Screenshot failed: ${shot.reason ?? 'no reason given'}.`
              : 'Waiting for the screen…'
          : null}
      </p>
      {shot?.status === 'ok' ? <img class="shot" src={`/v1/screenshots/${shot.id}/image`} alt="What the screen showed" /> : null}
    </div>
  )
}

function PanelControls(props: { id: string; screenName: string }): JSX.Element | null {
  const presets = useLoad(async () => {
    const panel = (await call(api.GET('/v1/screens/{id}/panel', { params: { path: { id: props.id } } }))).data
    if (!panel?.protocol) return null
    const p = (await call(api.GET('/v1/serial-presets', { params: { query: { protocol: panel.protocol, setId: String(panel.setId ?? 1) } } }))).data
    return { protocol: panel.protocol, commands: (Array.isArray(p) ? p[0] : p)?.commands ?? [] }
  }, [props.id])
  const [outcome, setOutcome] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  if (presets.error) return <ErrorNote error={presets.error} />
  if (!presets.data) return presets.loading ? <p>Loading…</p> : <p>No panel profile: set the panel's protocol to control it.</p>
  const send = async (c: { key: string; name: string; value: string; encoding: 'ascii' | 'hex'; eol: 'none' | 'cr' }) => {
    setError(null)
    setOutcome(`${c.name}: sending…`)
    try {
      let job = (
        await call(
          api.POST('/v1/screens/{id}/serial', {
            params: { path: { id: props.id } },
            body: { value: c.value, encoding: c.encoding, eol: c.eol, protocol: presets.data!.protocol } as never,
          }),
        )
      ).data
      setOutcome(`${c.name}: ${job.status}`)
      while (!FINAL_JOB.has(job.status)) {
        await wait(1000)
        job = (await call(api.GET('/v1/serial-jobs/{id}', { params: { path: { id: job.id } } }))).data
        setOutcome(`${c.name}: ${job.status}`)
      }
    } catch (e) {
      setOutcome(null)
      setError(e)
    }
  }
  const shown = presets.data.commands.filter((c) => !c.key.endsWith('.status'))
  return (
    <div>
      <fieldset class="buttons">
        <legend>Panel commands</legend>
        {shown.map((c) => (
          <ConfirmButton key={c.key} label={c.name} name={`on ${props.screenName}`} onConfirm={() => void send(c)} />
        ))}
      </fieldset>
      <p aria-live="polite">{outcome}</p>
      <ErrorNote error={error} />
    </div>
  )
}

const ASSIGN_KINDS = ['playlist', 'schedule', 'media', 'creative', 'layout', 'signage', 'app'] as const
const ASSIGN_FIELDS = ['contentKind', 'contentId'] as const

/** What the screen plays when nothing overrides it: assign a playlist, a schedule, a file…, or clear it. */
function Assignment(props: { id: string; kind: string | null; contentId: string | null; contentName: string | null; onDone: () => void }): JSX.Element {
  const [kind, setKind] = useState<string>(props.kind ?? 'playlist')
  const [contentId, setContentId] = useState(props.contentId ?? '')
  const [contentName, setContentName] = useState<string | null>(null)
  const [done, setDone] = useState<string | null>(null)
  const assign = (body: { contentKind: string | null; contentId: string | null }) =>
    useSubmit(ASSIGN_FIELDS, async () => {
      const r = (await call(api.POST('/v1/screens/{id}/assign', { params: { path: { id: props.id } }, body: body as never }))).data
      setDone(r.contentKind ? `Assigned ${r.contentKind} ${contentName ? `${contentName} (${r.contentId})` : r.contentId}.` : 'Nothing assigned now.')
      props.onDone()
    })
  const set = assign({ contentKind: kind, contentId })
  const clear = assign({ contentKind: null, contentId: null })
  return (
    <form onSubmit={set.submit} noValidate>
      <p>Now: {props.kind ? `${props.kind} ${props.contentName ?? props.contentId}` : 'nothing assigned'}</p>
      <div class={`field${set.fieldErrors.contentKind ? ' invalid' : ''}`}>
        <label for="f-contentKind">Kind</label>
        <select
          id="f-contentKind"
          value={kind}
          onChange={(e) => {
            setKind((e.currentTarget as HTMLSelectElement).value)
            setContentId('')
            setContentName(null)
          }}
        >
          {ASSIGN_KINDS.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </div>
      <ContentPicker
        id="f-contentId"
        label="Content"
        kind={kind}
        value={contentId}
        name={contentName}
        onChange={(id, name) => {
          setContentId(id)
          setContentName(name)
        }}
        error={set.fieldErrors.contentId}
      />
      <ErrorNote error={set.error ?? clear.error} />
      <p aria-live="polite">{done}</p>
      <div class="row">
        <button type="submit" disabled={set.busy}>
          Assign
        </button>
        {props.kind ? <ConfirmButton label="Clear the assignment" name="of this screen" onConfirm={() => void clear.submit()} /> : null}
      </div>
    </form>
  )
}

const PLAYS_PER_PAGE = 20
const DAY_MS = 86_400_000

/** A `datetime-local` value (local time, to the minute) for an instant. */
function localInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000)
  return d.toISOString().slice(0, 16)
}

/**
 * The play log, newest first, a page at a time (Older follows the API's cursor, Newer goes
 * back), in a time range (default: the last 24 hours), with the same range as CSV.
 */
function PlayLog(props: { id: string }): JSX.Element {
  const [from, setFrom] = useState(() => localInput(Date.now() - DAY_MS))
  const [to, setTo] = useState('')
  const [range, setRange] = useState<{ from: string; to: string | null }>(() => ({ from: new Date(Date.now() - DAY_MS).toISOString(), to: null }))
  const [cursors, setCursors] = useState<(string | null)[]>([null])
  const cursor = cursors[cursors.length - 1] ?? null
  // The page's number travels with its rows (while the next page loads, the table is the one before it).
  const plays = useLoad(
    async () => ({
      page: cursors.length,
      ...(await call(
        api.GET('/v1/screens/{id}/play-log', {
          params: {
            path: { id: props.id },
            query: {
              limit: String(PLAYS_PER_PAGE),
              order: 'desc',
              from: range.from,
              ...(range.to ? { to: range.to } : {}),
              ...(cursor ? { cursor } : {}),
            } as never,
          },
        }),
      )),
    }),
    [props.id, range.from, range.to, cursor],
  )
  const [rangeError, setRangeError] = useState<string | null>(null)
  const apply = (e: Event) => {
    e.preventDefault()
    const f = from ? Date.parse(from) : Number.NaN
    const u = to ? Date.parse(to) : null
    if (Number.isNaN(f)) return setRangeError('Give the start of the range.')
    if (u !== null && !(u > f)) return setRangeError('The end of the range must come after its start.')
    setRangeError(null)
    setCursors([null])
    setRange({ from: new Date(f).toISOString(), to: u === null ? null : new Date(u).toISOString() })
  }
  const csvTo = range.to ?? new Date(Date.now() + 60_000).toISOString()
  const csv = `/v1/play-log.csv?${new URLSearchParams({ from: range.from, to: csvTo, screenIds: props.id })}`
  const page = plays.data as
    | {
        data: {
          id: string
          startedAt: string
          contentKind: string
          contentId: string
          contentName?: string | null
          itemKind: string
          itemId: string
          itemName?: string | null
          durationMs: number
          panelPower: string
          source: string
        }[]
        nextCursor?: string | null
        page: number
      }
    | undefined
  return (
    <div>
      <form class="row" onSubmit={apply} noValidate aria-label="Play log range">
        <Shell id="plays-from" label="From" error={rangeError}>
          <input id="plays-from" type="datetime-local" value={from} onInput={(e) => setFrom((e.currentTarget as HTMLInputElement).value)} />
        </Shell>
        <Shell id="plays-to" label="Until (empty: now)">
          <input id="plays-to" type="datetime-local" value={to} onInput={(e) => setTo((e.currentTarget as HTMLInputElement).value)} />
        </Shell>
        <button type="submit">Show plays</button>
        <a class="button secondary" href={csv} download="play-log.csv">
          Download CSV
        </a>
      </form>
      {plays.error ? (
        <ErrorNote error={plays.error} />
      ) : !page ? (
        <p>Loading…</p>
      ) : !page.data.length ? (
        <p>No plays in this range.</p>
      ) : (
        <table>
          <caption>Newest first{page.page > 1 ? `, page ${page.page}` : ''}</caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Content</th>
              <th scope="col">Item</th>
              <th scope="col">Why</th>
              <th scope="col">Seconds</th>
              <th scope="col">Panel</th>
            </tr>
          </thead>
          <tbody>
            {page.data.map((p) => (
              <tr key={p.id}>
                <td>
                  <Ago at={p.startedAt} />
                </td>
                <td>
                  {p.contentKind} {p.contentName ?? p.contentId}
                </td>
                <td>{p.itemId === p.contentId ? '—' : `${p.itemKind} ${p.itemName ?? p.itemId}`}</td>
                <td>{p.source}</td>
                <td>{Math.round(p.durationMs / 1000)}</td>
                <td>{p.panelPower}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="pager">
        <button type="button" disabled={cursors.length < 2} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer plays
        </button>
        <button type="button" disabled={!page?.nextCursor} onClick={() => page?.nextCursor && setCursors([...cursors, page.nextCursor])}>
          Older plays
        </button>
      </div>
    </div>
  )
}

export function ScreenPage(props: PageProps): JSX.Element {
  const id = props.params.id!
  const s = useSession()
  const screen = useLoad(async () => (await call(api.GET('/v1/screens/{id}', { params: { path: { id } } }))).data, [id])
  const [panelVersion, setPanelVersion] = useState(0)
  useLive(
    (e) => {
      if (e.event.startsWith('screen.') && e.data.screenId === id) screen.reload()
    },
    [id],
  )
  if (screen.error)
    return (
      <Page title="Screen">
        <ErrorNote error={screen.error} />
        <Link to="/screens">Back to the screens</Link>
      </Page>
    )
  const d = screen.data
  if (!d) return <p>Loading…</p>
  const playing = d.reported?.playing
  return (
    <Page title={d.name}>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <Status status={d.status} /> last seen <Ago at={d.lastSeenAt} />
        </dd>
        <dt>Now playing</dt>
        <dd>
          {playing && playing.source !== 'none' ? (
            <span class="with-thumb">
              {playing.contentKind === 'media' ? <Thumb item={{ thumbnailUrl: d.playingThumbnailUrl ?? null }} /> : null}
              <span>{`${playing.contentKind} ${d.playingName ?? playing.contentId} (${playing.source})`}</span>
            </span>
          ) : (
            'nothing'
          )}
        </dd>
        <dt>Panel</dt>
        <dd>
          {d.reported?.panel
            ? `power ${d.reported.panel.power ?? 'unknown'}${d.reported.panel.input ? `, input ${d.reported.panel.input}` : ''}`
            : 'not reported'}
        </dd>
        <dt>Drift</dt>
        <dd>
          {d.drift.state === 'drifting' ? `Drifting: ${d.drift.items.map((x) => x.field).join(', ')}` : d.drift.state === 'in_sync' ? 'In sync' : 'Unknown'}
        </dd>
        <dt>Agent version</dt>
        <dd>{d.agentVersion ?? '—'}</dd>
        <dt>Time zone</dt>
        <dd>{d.timezone}</dd>
        <dt>Tags</dt>
        <dd>
          <Tags tags={d.tags} />
        </dd>
      </dl>
      {s.can('screen.edit') ? (
        <section aria-labelledby="h-details">
          <h2 id="h-details">Details</h2>
          <ScreenDetails
            key={`${d.name}|${d.nodeId}|${d.timezone}`}
            id={id}
            name={d.name}
            nodeId={d.nodeId ?? null}
            timezone={d.timezone}
            onSaved={(x) => screen.set({ ...d, ...x })}
          />
        </section>
      ) : null}
      <section aria-labelledby="h-hours">
        <h2 id="h-hours">Operating hours</h2>
        <HoursEditor kind="screen" id={id} canEdit={s.can('screen.edit')} />
      </section>
      {s.can('screen.edit') ? (
        <section aria-labelledby="h-tags">
          <h2 id="h-tags">Tags</h2>
          <TagEditor screenId={id} screenName={d.name} tags={d.tags ?? []} onSaved={(tags) => screen.set({ ...d, tags })} />
        </section>
      ) : null}
      {s.can('screen.edit') ? (
        <section aria-labelledby="h-assign">
          <h2 id="h-assign">Content</h2>
          <Assignment id={id} kind={d.contentKind} contentId={d.contentId} contentName={d.contentName ?? null} onDone={screen.reload} />
        </section>
      ) : null}
      <section aria-labelledby="h-timeline">
        <h2 id="h-timeline">What plays and why</h2>
        <Timeline key={`${d.contentKind}:${d.contentId}`} id={id} />
      </section>
      <section aria-labelledby="h-shot">
        <h2 id="h-shot">Screenshot</h2>
        <Screenshot id={id} />
      </section>
      {s.can('screen.edit') ? (
        <section aria-labelledby="h-panel">
          <h2 id="h-panel">Panel</h2>
          <h3>Panel profile</h3>
          <PanelProfileForm id={id} onSaved={() => setPanelVersion((n) => n + 1)} />
          <PanelControls key={panelVersion} id={id} screenName={d.name} />
        </section>
      ) : null}
      <section aria-labelledby="h-plays">
        <h2 id="h-plays">Play log</h2>
        <PlayLog id={id} />
      </section>
      {s.can('screen.delete') ? (
        <section aria-labelledby="h-delete">
          <h2 id="h-delete">Delete</h2>
          <DeleteScreen id={id} name={d.name} />
        </section>
      ) : null}
    </Page>
  )
}
