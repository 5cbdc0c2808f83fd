// What casts and emergencies share: the form part that picks content (kind, and an id from
// the library, searched by name, or typed) and the scope (every screen, a location, a group, chosen screens),
// and the reach receipts (counts per state and a paged list of screens) that follow live
// events and re-read at most every 2 s.
import type { JSX } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, call } from './api.js'
import { useLive } from './live.js'
import { ContentPicker } from './picker.js'
import { GroupSelect, groupLabel, useGroups } from './groups.js'
import { Link } from './router.js'
import { Ago, ErrorNote, errProps, Shell } from './ui.js'

export const KINDS = ['media', 'playlist', 'creative', 'schedule', 'app'] as const
export type Kind = (typeof KINDS)[number]

export interface Target {
  contentKind: Kind
  contentId: string
  scopeKind: 'all' | 'node' | 'group' | 'screens'
  scopeNodeId: string
  groupId: string
  /** The chosen group's name and member count, for the confirmation's words. */
  groupLabel?: string
  screenIds: string[]
}

export const EMPTY_TARGET: Target = { contentKind: 'media', contentId: '', scopeKind: 'all', scopeNodeId: '', groupId: '', screenIds: [] }

/** The body fields a target sends. */
export function targetBody(t: Target) {
  return {
    contentKind: t.contentKind,
    contentId: t.contentId.trim(),
    scopeKind: t.scopeKind,
    ...(t.scopeKind === 'node' ? { scopeNodeId: t.scopeNodeId } : {}),
    ...(t.scopeKind === 'group' ? { groupId: t.groupId } : {}),
    ...(t.scopeKind === 'screens' ? { screenIds: t.screenIds } : {}),
  }
}

/** Content and scope inputs; `prefix` keeps ids unique on a page. */
export function TargetFields(p: { prefix: string; value: Target; onChange: (t: Target) => void; errors: Record<string, string> }): JSX.Element {
  const v = p.value
  const set = (patch: Partial<Target>) => p.onChange({ ...v, ...patch })
  const [contentName, setContentName] = useState<string | null>(null)
  const [nodes, setNodes] = useState<{ id: string; name: string }[]>([])
  const [screens, setScreens] = useState<{ id: string; name: string }[]>([])
  const groups = useGroups(v.scopeKind === 'group')
  useEffect(() => {
    if (v.scopeKind === 'node' && !nodes.length)
      call(api.GET('/v1/nodes')).then(
        (r) => setNodes((r as { data: { id: string; name: string }[] }).data),
        () => {},
      )
    if (v.scopeKind === 'screens' && !screens.length)
      call(api.GET('/v1/screens', { params: { query: { limit: '200' } } })).then(
        (r) => setScreens((r as { data: { id: string; name: string }[] }).data),
        () => {},
      )
  }, [v.scopeKind])
  const id = (n: string) => `${p.prefix}-${n}`
  const e = p.errors
  return (
    <>
      <Shell id={id('kind')} label="Content kind" error={e.contentKind}>
        <select
          {...errProps(id('kind'), e.contentKind)}
          value={v.contentKind}
          onChange={(ev) => set({ contentKind: (ev.currentTarget as HTMLSelectElement).value as Kind, contentId: '' })}
        >
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </Shell>
      <ContentPicker
        id={id('content')}
        label="Content"
        kind={v.contentKind}
        value={v.contentId}
        name={contentName}
        onChange={(contentId, name) => {
          setContentName(name)
          set({ contentId })
        }}
        error={e.contentId}
      />
      <fieldset class="choices">
        <legend class="legend">Screens</legend>
        {(
          [
            ['all', 'Every screen'],
            ['node', 'A location (and everything under it)'],
            ['group', 'A group'],
            ['screens', 'Chosen screens'],
          ] as const
        ).map(([k, label]) => (
          <label key={k} class="choice">
            <input type="radio" name={id('scope')} value={k} checked={v.scopeKind === k} onChange={() => set({ scopeKind: k })} /> {label}
          </label>
        ))}
        {e.scopeKind ? <small class="field-error">{e.scopeKind}</small> : null}
      </fieldset>
      {v.scopeKind === 'node' ? (
        <Shell id={id('node')} label="Location" error={e.scopeNodeId}>
          <select
            {...errProps(id('node'), e.scopeNodeId)}
            value={v.scopeNodeId}
            onChange={(ev) => set({ scopeNodeId: (ev.currentTarget as HTMLSelectElement).value })}
          >
            <option value="">Choose a location</option>
            {nodes.map((n) => (
              <option key={n.id} value={n.id}>
                {n.name}
              </option>
            ))}
          </select>
        </Shell>
      ) : null}
      {v.scopeKind === 'group' ? (
        <GroupSelect
          id={id('group')}
          label="Group"
          value={v.groupId}
          groups={groups}
          error={e.groupId}
          onChange={(groupId) => {
            const g = groups?.find((x) => x.id === groupId)
            set({ groupId, groupLabel: g ? groupLabel(g) : '' })
          }}
        />
      ) : null}
      {v.scopeKind === 'screens' ? (
        <fieldset class="choices" aria-describedby={e.screenIds ? id('screens-error') : undefined}>
          <legend class="legend">Which screens</legend>
          {screens.map((s) => (
            <label key={s.id} class="choice">
              <input
                type="checkbox"
                value={s.id}
                checked={v.screenIds.includes(s.id)}
                onChange={(ev) =>
                  set({ screenIds: (ev.currentTarget as HTMLInputElement).checked ? [...v.screenIds, s.id] : v.screenIds.filter((x) => x !== s.id) })
                }
              />{' '}
              {s.name}
            </label>
          ))}
          {e.screenIds ? (
            <small id={id('screens-error')} class="field-error">
              {e.screenIds}
            </small>
          ) : null}
        </fieldset>
      ) : null}
    </>
  )
}

export const TARGET_FIELDS = ['contentKind', 'contentId', 'scopeKind', 'scopeNodeId', 'groupId', 'screenIds'] as const

type State = 'targeted' | 'published' | 'applied' | 'displayed' | 'unreachable'
interface Receipt {
  screenId: string
  screenName: string
  state: State
  at: string
  panelPower: string
}
const PAGE = 25

type Tally = 'targeted' | 'delivered' | 'playing' | 'displayed' | 'unreachable'
const TALLIES: [Tally, string][] = [
  ['targeted', 'targeted'],
  ['delivered', 'delivered'],
  ['playing', 'playing'],
  ['displayed', 'displayed'],
  ['unreachable', 'unreachable'],
]

/**
 * Counts over the takeover's life, not the screens' current step: every screen was
 * targeted; delivered = sent its desired state (or further); playing = reported it playing
 * (displayed ones too); displayed = playing with the panel on; unreachable = offline before
 * it played.
 */
export function reachTally(rows: readonly { state: State }[]): Record<Tally, number> {
  const c: Record<Tally, number> = { targeted: rows.length, delivered: 0, playing: 0, displayed: 0, unreachable: 0 }
  for (const r of rows) {
    if (r.state === 'published' || r.state === 'applied' || r.state === 'displayed') c.delivered++
    if (r.state === 'applied' || r.state === 'displayed') c.playing++
    if (r.state === 'displayed') c.displayed++
    if (r.state === 'unreachable') c.unreachable++
  }
  return c
}

async function receipts(kind: 'casts' | 'emergencies', id: string): Promise<Receipt[]> {
  const all: Receipt[] = []
  let cursor: string | undefined
  // Every page (500 a page): the counts are over all screens.
  for (let i = 0; i < 40; i++) {
    const query = { limit: '500', ...(cursor ? { cursor } : {}) }
    const r = (
      kind === 'casts'
        ? await call(api.GET('/v1/casts/{id}/screens', { params: { path: { id }, query } }))
        : await call(api.GET('/v1/emergencies/{id}/screens', { params: { path: { id }, query } }))
    ) as { data: Receipt[]; nextCursor?: string | null }
    all.push(...r.data)
    if (!r.nextCursor) break
    cursor = r.nextCursor
  }
  return all
}

/**
 * Reach: counts per state and the screens, re-read when a live event may have moved them
 * (at most every 2 s) and, while the takeover is active and screens are still on their way,
 * every 2 s until they arrive.
 */
export function Reach(p: { kind: 'casts' | 'emergencies'; id: string; active: boolean }): JSX.Element {
  const [rows, setRows] = useState<Receipt[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [page, setPage] = useState(0)
  const last = useRef(0)
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null)
  const busy = useRef(false)
  const alive = useRef(true)
  const read = async () => {
    if (busy.current) return
    busy.current = true
    last.current = Date.now()
    try {
      const r = await receipts(p.kind, p.id)
      if (alive.current) {
        setRows(r)
        setError(null)
      }
    } catch (e) {
      if (alive.current) setError(e)
    } finally {
      busy.current = false
    }
  }
  const soon = () => {
    if (timer.current) return
    const wait = Math.max(0, 2000 - (Date.now() - last.current))
    timer.current = setTimeout(() => {
      timer.current = null
      void read()
    }, wait)
  }
  useEffect(() => {
    alive.current = true
    void read()
    return () => {
      alive.current = false
      if (timer.current) clearTimeout(timer.current)
      timer.current = null
    }
  }, [p.id])
  useLive(
    (e) => {
      if (e.event.startsWith('screen.') || e.event.startsWith('emergency.')) soon()
    },
    [p.id],
  )
  const moving = p.active && !!rows?.some((r) => r.state === 'targeted' || r.state === 'published')
  useEffect(() => {
    if (moving) soon()
  }, [rows, moving])
  if (error && !rows) return <ErrorNote error={error} />
  if (!rows) return <p>Loading reach…</p>
  const counts = reachTally(rows)
  const pages = Math.max(1, Math.ceil(rows.length / PAGE))
  const shown = rows.slice(page * PAGE, page * PAGE + PAGE)
  return (
    <section aria-labelledby="h-reach">
      <h2 id="h-reach">Reach</h2>
      <ul class="tiles" aria-label="Reach counts" aria-live="polite">
        {TALLIES.map(([s, label]) => (
          <li key={s} class={`tile reach-${s}`} data-state={s}>
            <span class="tile-link">
              <strong>{counts[s]}</strong> {label}
            </span>
          </li>
        ))}
      </ul>
      <p class="hint">Each screen counts in every step it got through: a screen showing it counts as targeted, delivered, playing and displayed.</p>
      <ErrorNote error={error} />
      <table>
        <caption>
          {rows.length} screen{rows.length === 1 ? '' : 's'}
          {pages > 1 ? `, page ${page + 1} of ${pages}` : ''}
        </caption>
        <thead>
          <tr>
            <th scope="col">Screen</th>
            <th scope="col">State</th>
            <th scope="col">Since</th>
            <th scope="col">Panel</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <tr key={r.screenId}>
              <td>
                <Link to={`/screens/${r.screenId}`}>{r.screenName}</Link>
              </td>
              <td class="receipt-state">{r.state}</td>
              <td>
                <Ago at={r.at} />
              </td>
              <td>{r.panelPower}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {pages > 1 ? (
        <div class="pager">
          <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
            Previous
          </button>
          <button type="button" disabled={page >= pages - 1} onClick={() => setPage(page + 1)}>
            Next
          </button>
        </div>
      ) : null}
    </section>
  )
}

/** What names an emergency in lists and titles: its content, else (message only) its message's first line. */
export function emergencyLabel(e: { contentName: string | null; contentId: string | null; message: string | null }): string {
  return e.contentName ?? e.contentId ?? e.message?.split('\n')[0] ?? 'Message only'
}
