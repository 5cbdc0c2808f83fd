// The screens table: one row per screen (name, Online/Offline, now playing, location, last
// seen, agent version, drift, last screenshot, tags), searched and filtered by the API (by
// name, state, location, tag and group, kept in the address), fetched a page at a time as
// the table scrolls, and only the rows in view are in the document, so 10,000 screens cost
// what 40 do. Presence changes, what devices report and drift arrive live and update their rows. Chosen rows take content
// (or a group does) and tags added or removed in one request each.
import type { JSX } from 'preact'
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { Thumb } from '../thumb.js'
import { useLive } from '../live.js'
import { current, Link, navigate } from '../router.js'
import { useSession } from '../session.js'
import { ContentPicker } from '../picker.js'
import { GroupSelect, parseTags, TagEditor, Tags, useGroups, useTags, type GroupItem } from '../groups.js'
import { Ago, ErrorNote, Field, Page, SelectField, Status, useLoad, useSubmit } from '../ui.js'
import { PairScreen } from './PairScreen.js'
import type { PageProps } from './types.js'

export interface ScreenRow {
  id: string
  name: string
  status: string
  nodeId: string | null
  lastSeenAt: string | null
  agentVersion: string | null
  playing: { source: string; contentKind: string | null; contentId: string | null } | null
  lastScreenshot: { id: string; at: string | null } | null
  drift: { state: string; items: { field: string }[] }
  contentKind?: string | null
  contentId?: string | null
  /** The names beside the ids (the assigned content, what plays) and the thumbnail of what plays. */
  contentName?: string | null
  playingName?: string | null
  playingThumbnailUrl?: string | null
  tags?: string[]
}

/** The row fields a live `screen.reported`, `screen.drifting` or `screen.in_sync` changes (null for other events). */
export function livePatch(e: { event: string; data: Record<string, unknown> }): Partial<ScreenRow> | null {
  if (e.event === 'screen.reported')
    return { playing: e.data.playing as ScreenRow['playing'], agentVersion: (e.data.agentVersion as string | null) ?? null, lastSeenAt: e.data.at as string }
  if (e.event === 'screen.drifting' || e.event === 'screen.in_sync')
    return { drift: { state: e.data.state as string, items: (e.data.items as { field: string }[]) ?? [] } }
  return null
}

const BULK_KINDS = ['playlist', 'schedule', 'media', 'creative', 'layout', 'signage', 'app'] as const
const BULK_FIELDS = ['contentKind', 'contentId', 'screenIds', 'groupId'] as const

/**
 * The chosen screens (or a group's members) get one piece of content in one request
 * (POST /v1/screens/bulk-assign).
 */
function BulkAssign(props: {
  selected: string[]
  groups: GroupItem[] | null
  onDone: (r: { screenIds: string[]; contentKind: string | null; contentId: string | null }) => void
  onClear: () => void
}): JSX.Element {
  const [kind, setKind] = useState<string>('playlist')
  const [contentId, setContentId] = useState('')
  const [contentName, setContentName] = useState<string | null>(null)
  const [done, setDone] = useState<string | null>(null)
  const n = props.selected.length
  const [to, setTo] = useState<'chosen' | 'group'>(n ? 'chosen' : 'group')
  const [groupId, setGroupId] = useState('')
  const target = to === 'group' ? { groupId } : { screenIds: props.selected }
  const { busy, fieldErrors, error, submit } = useSubmit(BULK_FIELDS, async () => {
    setDone(null)
    const r = (await call(api.POST('/v1/screens/bulk-assign', { body: { ...target, contentKind: kind as never, contentId: contentId.trim() || null } }))).data
    const skipped = Object.entries(r.skipped).filter(([, k]) => k > 0)
    setDone(
      `Assigned ${contentName ?? r.contentId} to ${r.assigned} ${r.assigned === 1 ? 'screen' : 'screens'}.` +
        (skipped.length ? ` Skipped: ${skipped.map(([why, k]) => `${k} ${why.replace('_', ' ')}`).join(', ')}.` : ''),
    )
    props.onDone(r)
  })
  return (
    <form class="panel bulk" onSubmit={submit} aria-labelledby="h-bulk" noValidate>
      <h2 id="h-bulk" class="panel-title">
        {to === 'group' ? 'Assign content to a group' : `Assign content to ${n} chosen ${n === 1 ? 'screen' : 'screens'}`}
      </h2>
      <fieldset class="choices">
        <legend class="legend">To</legend>
        <label class="choice">
          <input type="radio" name="bulk-to" value="chosen" checked={to === 'chosen'} disabled={n === 0} onChange={() => setTo('chosen')} /> The {n} chosen{' '}
          {n === 1 ? 'screen' : 'screens'}
        </label>
        <label class="choice">
          <input type="radio" name="bulk-to" value="group" checked={to === 'group'} onChange={() => setTo('group')} /> Every screen of a group
        </label>
      </fieldset>
      {to === 'group' ? (
        <GroupSelect id="bulk-group" label="Group" value={groupId} onChange={setGroupId} groups={props.groups} error={fieldErrors.groupId} />
      ) : null}
      <div class="row">
        <SelectField
          label="Kind"
          name="bulk-kind"
          value={kind}
          onInput={(v) => {
            setKind(v)
            setContentId('')
            setContentName(null)
          }}
          options={BULK_KINDS.map((k) => [k, k] as const)}
          error={fieldErrors.contentKind}
        />
        <ContentPicker
          id="bulk-content"
          label="Content"
          kind={kind}
          value={contentId}
          name={contentName}
          onChange={(id, name) => {
            setContentId(id)
            setContentName(name)
          }}
          error={fieldErrors.contentId}
        />
      </div>
      <ErrorNote error={error ?? (fieldErrors.screenIds ? new Error(fieldErrors.screenIds) : null)} />
      <p aria-live="polite">{done}</p>
      <div class="form-buttons">
        <button type="submit" disabled={busy || (to === 'chosen' && n === 0)}>
          {busy ? 'Assigning…' : to === 'group' ? 'Assign to the group' : `Assign to ${n} ${n === 1 ? 'screen' : 'screens'}`}
        </button>
        <button type="button" class="secondary" onClick={props.onClear}>
          {n ? 'Clear the selection' : 'Close'}
        </button>
      </div>
    </form>
  )
}

const TAG_FIELDS = ['add', 'remove', 'screenIds'] as const

/** Tags added to and removed from the chosen screens in one request (POST /v1/screens/bulk-tag). */
function BulkTag(props: { selected: string[]; onDone: () => void }): JSX.Element {
  const [add, setAdd] = useState('')
  const [remove, setRemove] = useState('')
  const [done, setDone] = useState<string | null>(null)
  const n = props.selected.length
  const { busy, fieldErrors, error, submit } = useSubmit(TAG_FIELDS, async () => {
    setDone(null)
    const a = parseTags(add)
    const r = parseTags(remove)
    const got = (
      await call(api.POST('/v1/screens/bulk-tag', { body: { screenIds: props.selected, ...(a.length ? { add: a } : {}), ...(r.length ? { remove: r } : {}) } }))
    ).data
    setDone(`Changed the tags of ${got.changed} of ${got.matched} ${got.matched === 1 ? 'screen' : 'screens'}.`)
    setAdd('')
    setRemove('')
    props.onDone()
  })
  // A message naming no field (both lists empty, a tag in both) is shown under the buttons.
  return (
    <form class="panel bulk-tag" onSubmit={submit} aria-labelledby="h-bulk-tag" noValidate>
      <h2 id="h-bulk-tag" class="panel-title">
        Tag {n} chosen {n === 1 ? 'screen' : 'screens'}
      </h2>
      <div class="row">
        <Field label="Add tags" name="bulk-add" value={add} onInput={setAdd} error={fieldErrors.add} hint="Commas or spaces between tags" />
        <Field label="Remove tags" name="bulk-remove" value={remove} onInput={setRemove} error={fieldErrors.remove} />
      </div>
      <ErrorNote error={error ?? (fieldErrors.screenIds ? new Error(fieldErrors.screenIds) : null)} />
      <p aria-live="polite">{done}</p>
      <button type="submit" disabled={busy || n === 0}>
        {busy ? 'Changing…' : `Change the tags of ${n} ${n === 1 ? 'screen' : 'screens'}`}
      </button>
    </form>
  )
}

const ROW = 40
const PAGE = 500
/** Cards the grid draws at first and adds per "Show more" (a page of 500 cards cost the grid a second to first draw). */
const GRID_STEP = 48
const OVERSCAN = 10
/** A phone's width (styles.css uses the same bound). */
const NARROW = '(max-width: 40rem)'

export function Screens(props: PageProps): JSX.Element {
  const filters = {
    q: props.query.get('q') ?? '',
    status: props.query.get('status') ?? '',
    drift: props.query.get('drift') ?? '',
    nodeId: props.query.get('nodeId') ?? '',
    tags: props.query.getAll('tag'),
    group: props.query.get('group') ?? '',
  }
  const [reloads, setReloads] = useState(0)
  const key = JSON.stringify({ ...filters, reloads })
  const nodes = useLoad(async () => (await call(api.GET('/v1/nodes'))).data as { id: string; name: string }[], [])
  const nodeName = useMemo(() => new Map((nodes.data ?? []).map((n) => [n.id, n.name])), [nodes.data])

  const [rows, setRows] = useState<ScreenRow[]>([])
  const [total, setTotal] = useState<number | null>(null)
  const [error, setError] = useState<unknown>(null)
  const cursor = useRef<string | null>(null)
  const more = useRef(true)
  const loading = useRef(false)
  const generation = useRef(0)

  const query = useCallback(
    (extra: Record<string, string>) => {
      const q: Record<string, string | string[]> = { limit: String(PAGE), ...extra }
      if (filters.q.trim()) q.q = filters.q.trim()
      if (filters.status) q.status = filters.status
      if (filters.drift) q.drift = filters.drift
      if (filters.nodeId) q.nodeId = filters.nodeId
      if (filters.tags.length) q.tag = filters.tags
      if (filters.group) q.group = filters.group
      return q
    },
    [key],
  )

  const loadMore = useCallback(async () => {
    if (loading.current || !more.current) return
    loading.current = true
    const gen = generation.current
    try {
      const first = cursor.current === null
      const r = (await call(
        api.GET('/v1/screens', { params: { query: query({ ...(first ? { count: '1' } : { cursor: cursor.current! }) }) as never } }),
      )) as unknown as { data: ScreenRow[]; nextCursor: string | null; total?: number }
      if (gen !== generation.current) return
      cursor.current = r.nextCursor
      more.current = r.nextCursor !== null
      if (first) setTotal(r.total ?? r.data.length)
      setRows((old) => [...old, ...r.data])
    } catch (e) {
      setError(e)
    } finally {
      loading.current = false
    }
  }, [query])

  useEffect(() => {
    generation.current++
    cursor.current = null
    more.current = true
    loading.current = false
    setRows([])
    setTotal(null)
    setError(null)
    void loadMore()
  }, [key])

  /** The name and thumbnail of what a screen now plays, from its own answer. */
  const renamePlaying = async (id: string) => {
    const got = await api.GET('/v1/screens/{id}', { params: { path: { id } } }).catch(() => null)
    const s = got?.data?.data
    if (!s) return
    setRows((old) =>
      old.map((r) =>
        r.id === id && r.playing?.contentId === s.reported?.playing?.contentId
          ? { ...r, playingName: s.playingName ?? null, playingThumbnailUrl: s.playingThumbnailUrl ?? null }
          : r,
      ),
    )
  }

  // Live presence: the rows on hand change in place.
  useLive((e) => {
    const id = e.data.screenId as string
    // What a device reports (what plays, its agent) and its drift follow the stream too.
    const patch = livePatch(e)
    // Another item playing: its name and picture are the screen's to tell (asked for that row).
    if (patch)
      return setRows((old) =>
        old.map((r) => {
          if (r.id !== id) return r
          const other = patch.playing !== undefined && patch.playing?.contentId !== r.playing?.contentId
          if (other) void renamePlaying(id)
          return { ...r, ...patch, ...(other ? { playingName: null, playingThumbnailUrl: null } : {}) }
        }),
      )
    if (e.event !== 'screen.online' && e.event !== 'screen.offline') return
    const status = e.event === 'screen.online' ? 'online' : 'offline'
    setRows((old) =>
      old.map((r) =>
        r.id === id ? { ...r, status, lastSeenAt: e.event === 'screen.offline' ? ((e.data.since as string) ?? r.lastSeenAt) : r.lastSeenAt } : r,
      ),
    )
  })

  // Which rows are in view.
  const scroller = useRef<HTMLElement>(null)
  const [view, setView] = useState({ top: 0, height: 600 })
  useEffect(() => {
    const el = scroller.current
    if (!el) return
    const update = () => setView({ top: el.scrollTop, height: el.clientHeight })
    update()
    el.addEventListener('scroll', update, { passive: true })
    window.addEventListener('resize', update)
    return () => {
      el.removeEventListener('scroll', update)
      window.removeEventListener('resize', update)
    }
  }, [])
  // The rows in view (and OVERSCAN around them) among all `count`; those not loaded yet are
  // blank space until their page arrives. The two spacers keep the table `count` rows tall.
  const session = useSession()
  const count = total ?? rows.length
  const end = Math.min(count, Math.ceil((view.top + view.height) / ROW) + OVERSCAN)
  const first = Math.max(0, Math.min(end, Math.floor(view.top / ROW) - OVERSCAN))
  const shown = rows.slice(first, Math.min(end, rows.length))
  useEffect(() => {
    if (end >= rows.length - OVERSCAN && more.current) void loadMore()
  }, [end, rows.length])

  // Chosen screens for a bulk assignment (kept across filters and scrolling).
  const [chosen, setChosen] = useState<Set<string>>(new Set())
  const canAssign = session.can('screen.edit')
  const toggle = (id: string, on: boolean) =>
    setChosen((old) => {
      const next = new Set(old)
      if (on) next.add(id)
      else next.delete(id)
      return next
    })
  const allShown = shown.length > 0 && shown.every((r) => chosen.has(r.id))
  const groups = useGroups()
  const tagList = useTags(reloads)
  const [assigning, setAssigning] = useState(false)
  const [editing, setEditing] = useState<string | null>(null)
  const editRow = editing ? rows.find((r) => r.id === editing) : undefined
  const setFilter = (name: string, value: string) => {
    // A search typed just before leaving the page must not bring the operator back to it.
    if (current().path !== '/screens') return
    const q = new URLSearchParams(props.query)
    if (value) q.set(name, value)
    else q.delete(name)
    const s = q.toString()
    navigate(`/screens${s ? `?${s}` : ''}`, { replace: true })
  }
  // Table or grid (a wall of the screens' last screenshots), kept in the address like the filters.
  // On a phone the grid is the default (eleven columns do not fit 390 px); `view=table` asks for the table there.
  const chosenView = props.query.get('view')
  const grid = chosenView === 'grid' || (chosenView === null && typeof matchMedia === 'function' && matchMedia(NARROW).matches)
  const [text, setText] = useState(filters.q)
  useEffect(() => {
    const t = setTimeout(() => text !== filters.q && setFilter('q', text), 300)
    return () => clearTimeout(t)
  }, [text])

  return (
    <Page
      title="Screens"
      actions={
        canAssign ? (
          <>
            <PairScreen nodes={nodes.data ?? []} />
            <button type="button" class="secondary" onClick={() => setAssigning(true)}>
              Assign content to a group…
            </button>
          </>
        ) : null
      }
    >
      <form class="filters" aria-label="Filter screens" onSubmit={(e) => e.preventDefault()}>
        <label class="filter">
          Search
          <input type="search" name="q" value={text} onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)} placeholder="Name contains…" />
        </label>
        <label class="filter">
          State
          <select
            value={filters.status || filters.drift}
            onChange={(e) => {
              const v = (e.currentTarget as HTMLSelectElement).value
              const q = new URLSearchParams(props.query)
              q.delete('status')
              q.delete('drift')
              if (v === 'online' || v === 'offline') q.set('status', v)
              if (v === 'drifting') q.set('drift', v)
              const s = q.toString()
              navigate(`/screens${s ? `?${s}` : ''}`, { replace: true })
            }}
          >
            <option value="">Any</option>
            <option value="online">Online</option>
            <option value="offline">Offline</option>
            <option value="drifting">Needs attention</option>
          </select>
        </label>
        <label class="filter">
          Location
          <select value={filters.nodeId} onChange={(e) => setFilter('nodeId', (e.currentTarget as HTMLSelectElement).value)}>
            <option value="">All locations</option>
            {(nodes.data ?? []).map((n) => (
              <option key={n.id} value={n.id}>
                {n.name}
              </option>
            ))}
          </select>
        </label>
        <label class="filter">
          Tag
          <select name="tag" value={filters.tags[0] ?? ''} onChange={(e) => setFilter('tag', (e.currentTarget as HTMLSelectElement).value)}>
            <option value="">Any tag</option>
            {filters.tags[0] && !tagList.some((t) => t.tag === filters.tags[0]) ? <option value={filters.tags[0]}>{filters.tags[0]}</option> : null}
            {tagList.map((t) => (
              <option key={t.tag} value={t.tag}>
                {t.tag} ({t.count})
              </option>
            ))}
          </select>
        </label>
        <label class="filter">
          Group
          <select name="group" value={filters.group} onChange={(e) => setFilter('group', (e.currentTarget as HTMLSelectElement).value)}>
            <option value="">Any group</option>
            {(groups ?? []).map((g) => (
              <option key={g.id} value={g.id}>
                {g.name}
              </option>
            ))}
          </select>
        </label>
        <output aria-live="polite">{total === null ? 'Loading…' : `${count} ${count === 1 ? 'screen' : 'screens'}`}</output>
      </form>
      <fieldset class="view-switch">
        <legend class="sr-only">Show the screens as</legend>
        <button type="button" class="secondary" aria-pressed={!grid} onClick={() => setFilter('view', 'table')}>
          Table
        </button>
        <button type="button" class="secondary" aria-pressed={grid} onClick={() => setFilter('view', 'grid')}>
          Grid of screenshots
        </button>
      </fieldset>
      <ErrorNote error={error} />
      {canAssign && editRow ? (
        <section class="panel" aria-labelledby="h-row-tags">
          <h2 id="h-row-tags" class="panel-title">
            Tags of {editRow.name}
          </h2>
          <TagEditor
            screenId={editRow.id}
            screenName={editRow.name}
            tags={editRow.tags ?? []}
            onSaved={(tags) => setRows((old) => old.map((x) => (x.id === editRow.id ? { ...x, tags } : x)))}
          />
          <button type="button" class="secondary" onClick={() => setEditing(null)}>
            Close
          </button>
        </section>
      ) : null}
      <div class="bulk-panels">
        {canAssign && chosen.size > 0 ? <BulkTag selected={[...chosen]} onDone={() => setReloads((n) => n + 1)} /> : null}
        {canAssign && (chosen.size > 0 || assigning) ? (
          <BulkAssign
            key={chosen.size > 0 ? 'chosen' : 'group'}
            selected={[...chosen]}
            groups={groups}
            onClear={() => {
              setChosen(new Set())
              setAssigning(false)
            }}
            onDone={(r) => {
              const got = new Set(r.screenIds)
              setRows((old) => old.map((x) => (got.has(x.id) ? { ...x, contentKind: r.contentKind, contentId: r.contentId } : x)))
            }}
          />
        ) : null}
      </div>
      {grid ? (
        <ScreenGrid key={key} rows={rows} count={count} nodeName={nodeName} onMore={() => void loadMore()} />
      ) : (
        <section class="scroller" ref={scroller} aria-label="Screens table">
          <table aria-rowcount={count + 1}>
            <thead>
              <tr aria-rowindex={1}>
                {canAssign ? (
                  <th scope="col" class="check">
                    <input
                      type="checkbox"
                      aria-label="Choose every screen in view"
                      checked={allShown}
                      onChange={(e) => {
                        const on = (e.currentTarget as HTMLInputElement).checked
                        setChosen((old) => {
                          const next = new Set(old)
                          for (const r of shown) {
                            if (on) next.add(r.id)
                            else next.delete(r.id)
                          }
                          return next
                        })
                      }}
                    />
                  </th>
                ) : null}
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Assigned</th>
                <th scope="col">Now playing</th>
                <th scope="col">Location</th>
                <th scope="col">Last seen</th>
                <th scope="col">Agent version</th>
                <th scope="col">Drift</th>
                <th scope="col">Last screenshot</th>
                <th scope="col">Tags</th>
              </tr>
            </thead>
            <tbody>
              {first > 0 ? <tr class="spacer" style={{ height: `${first * ROW}px` }} /> : null}
              {shown.map((r, i) => (
                <tr key={r.id} aria-rowindex={first + i + 2} style={{ height: `${ROW}px` }}>
                  {canAssign ? (
                    <td class="check">
                      <input
                        type="checkbox"
                        aria-label={`Choose ${r.name}`}
                        checked={chosen.has(r.id)}
                        onChange={(e) => toggle(r.id, (e.currentTarget as HTMLInputElement).checked)}
                      />
                    </td>
                  ) : null}
                  <td>
                    <Link to={`/screens/${r.id}`}>{r.name}</Link>
                  </td>
                  <td>
                    <Status status={r.status} />
                  </td>
                  <td>{r.contentKind ? `${r.contentKind} ${r.contentName ?? r.contentId}` : 'nothing'}</td>
                  <td>
                    {r.playing && r.playing.source !== 'none' ? (
                      <span class="with-thumb">
                        {r.playing.contentKind === 'media' ? <Thumb item={{ thumbnailUrl: r.playingThumbnailUrl ?? null }} /> : null}
                        <span>{`${r.playingName ?? r.playing.contentId ?? '—'} (${r.playing.source})`}</span>
                      </span>
                    ) : (
                      'nothing'
                    )}
                  </td>
                  <td>{r.nodeId ? (nodeName.get(r.nodeId) ?? r.nodeId) : 'Workspace'}</td>
                  <td>
                    <Ago at={r.lastSeenAt} />
                  </td>
                  <td>{r.agentVersion ?? '—'}</td>
                  <td>
                    {r.drift.state === 'drifting' ? (
                      <span class="badge warn">Drifting: {r.drift.items.map((x) => x.field).join(', ')}</span>
                    ) : r.drift.state === 'in_sync' ? (
                      'In sync'
                    ) : (
                      'Unknown'
                    )}
                  </td>
                  <td>
                    {r.lastScreenshot ? (
                      <a class="with-thumb" href={`/v1/screenshots/${r.lastScreenshot.id}/image`} target="_blank" rel="noreferrer">
                        <img class="thumb small" src={`/v1/screenshots/${r.lastScreenshot.id}/thumbnail`} alt="" loading="lazy" decoding="async" />
                        <Ago at={r.lastScreenshot.at} />
                      </a>
                    ) : (
                      'none'
                    )}
                  </td>
                  <td class="tags-cell">
                    <Tags tags={r.tags} />
                    {canAssign ? (
                      <button type="button" class="link" aria-label={`Edit tags of ${r.name}`} onClick={() => setEditing(r.id)}>
                        Edit
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
              {count > first + shown.length ? <tr class="spacer" style={{ height: `${(count - first - shown.length) * ROW}px` }} /> : null}
            </tbody>
          </table>
        </section>
      )}
    </Page>
  )
}

/**
 * The screens as a wall of their last screenshots' thumbnails (the way peers show a fleet at
 * a glance): one card per screen, the whole card a link to its page, in the table's order;
 * GRID_STEP cards at first, more (loading the next page when needed) on demand.
 */
function ScreenGrid(p: { rows: ScreenRow[]; count: number; nodeName: Map<string, string>; onMore: () => void }): JSX.Element {
  const [limit, setLimit] = useState(GRID_STEP)
  const cards = p.rows.slice(0, limit)
  return (
    <section aria-label="Screens as a grid of screenshots">
      <ul class="screen-grid">
        {cards.map((r) => (
          <li key={r.id} class="screen-card">
            <Link to={`/screens/${r.id}`}>
              {r.lastScreenshot ? (
                <img
                  class="thumb large"
                  src={`/v1/screenshots/${r.lastScreenshot.id}/thumbnail`}
                  alt={`Last screenshot of ${r.name}`}
                  loading="lazy"
                  decoding="async"
                />
              ) : (
                <span class="thumb large no-shot">No screenshot yet</span>
              )}
              <span class="screen-card-name">{r.name}</span>
            </Link>
            <span class="screen-card-facts">
              <Status status={r.status} /> {r.nodeId ? (p.nodeName.get(r.nodeId) ?? r.nodeId) : 'Workspace'}
            </span>
            <span class="screen-card-facts">
              {r.playing && r.playing.source !== 'none' ? `Playing ${r.playingName ?? r.playing.contentId ?? '—'}` : 'Playing nothing'}
              {r.lastScreenshot ? (
                <>
                  {' · shot '}
                  <Ago at={r.lastScreenshot.at} />
                </>
              ) : null}
            </span>
          </li>
        ))}
      </ul>
      {cards.length < p.count ? (
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setLimit((n) => n + GRID_STEP)
            if (limit + GRID_STEP > p.rows.length) p.onMore()
          }}
        >
          Show more screens ({p.count - cards.length} more)
        </button>
      ) : null}
    </section>
  )
}
