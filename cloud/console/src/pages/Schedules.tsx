// Schedules: the list, a week view of a schedule's rules (seven day columns with the rules as
// blocks by time, and the same rules as a table for screen readers and keyboards), and a form
// to create or edit a schedule with its rules where the role holds schedule.edit.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { useSession } from '../session.js'
import { ContentPicker } from '../picker.js'
import { Ago, ConfirmButton, ErrorNote, Field, Page, SelectField, useLoad, useSubmit } from '../ui.js'

type RefKind = 'media' | 'playlist'
interface Rule {
  id: string
  content: { kind: string; id: string }
  priority: number
  days?: number[]
  start?: string
  end?: string
  dateFrom?: string
  dateTo?: string
  enabled?: boolean
}
interface Schedule {
  id: string
  name: string
  timezone?: string | null
  rules?: Rule[]
  fallback?: { kind: string; id: string } | null
  createdAt: string
}
interface Named {
  id: string
  name: string
}

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']
/** Columns Monday first. */
const WEEK = [1, 2, 3, 4, 5, 6, 0]
const FIELDS = ['name', 'timezone', 'rules', 'fallback'] as const

const minutes = (hhmm: string | undefined, dflt: number): number => {
  const m = /^(\d{1,2}):(\d{2})$/.exec(hhmm ?? '')
  return m ? Number(m[1]) * 60 + Number(m[2]) : dflt
}
const dayList = (days: number[] | undefined): string =>
  !days || days.length === 0 || days.length === 7
    ? 'Every day'
    : WEEK.filter((d) => days.includes(d))
        .map((d) => DAYS[d]!.slice(0, 3))
        .join(', ')

const onDay = (r: Rule, d: number): boolean => !r.days || r.days.length === 0 || r.days.includes(d)
/** An end at or before the start runs past midnight into the next day. */
const overnight = (r: Rule): boolean => r.end !== undefined && minutes(r.end, 1440) <= minutes(r.start, 0)

/** The parts of rules on day `d` (minutes of the day): windows starting that day, and the ends of overnight windows from the day before. */
function segments(rules: Rule[], d: number): { rule: Rule; from: number; to: number; key: string }[] {
  const out: { rule: Rule; from: number; to: number; key: string }[] = []
  const before = (d + 6) % 7
  for (const r of rules) {
    const from = minutes(r.start, 0)
    const end = minutes(r.end, 1440)
    if (onDay(r, d)) out.push({ rule: r, from, to: overnight(r) ? 1440 : end, key: r.id })
    if (overnight(r) && onDay(r, before) && end > 0) out.push({ rule: r, from: 0, to: end, key: `${r.id}-after` })
  }
  return out
}

interface Catalogue {
  media: Named[]
  playlists: Named[]
}

function useCatalogue(): Catalogue {
  const { can } = useSession()
  const got = useLoad(
    async () => ({
      media: can('media.view') ? ((await call(api.GET('/v1/media', { params: { query: { limit: '200' } } }))).data as Named[]) : [],
      playlists: can('playlist.view') ? ((await call(api.GET('/v1/playlists'))).data as Named[]) : [],
    }),
    [],
  )
  return got.data ?? { media: [], playlists: [] }
}

const nameOf = (cat: Catalogue, ref: { kind: string; id: string } | null | undefined): string => {
  if (!ref) return 'nothing'
  const list = ref.kind === 'media' ? cat.media : ref.kind === 'playlist' ? cat.playlists : []
  return `${list.find((x) => x.id === ref.id)?.name ?? ref.id} (${ref.kind})`
}

export function Schedules(): JSX.Element {
  const { can } = useSession()
  const list = useLoad(async () => (await call(api.GET('/v1/schedules'))).data as unknown as Schedule[], [])
  const cat = useCatalogue()
  const [shownId, setShownId] = useState<string | null>(null)
  const [editing, setEditing] = useState<Schedule | 'new' | null>(null)
  const edit = can('schedule.edit')
  const shown = list.data?.find((s) => s.id === shownId) ?? list.data?.[0] ?? null
  const [removeError, setRemoveError] = useState<unknown>(null)
  const [removed, setRemoved] = useState<string | null>(null)
  const remove = async (s: Schedule) => {
    setRemoveError(null)
    setRemoved(null)
    try {
      await call(api.DELETE('/v1/schedules/{id}', { params: { path: { id: s.id } } }))
      setRemoved(`${s.name} deleted.`)
      if (shownId === s.id) setShownId(null)
      list.reload()
    } catch (e) {
      setRemoveError(e)
    }
  }
  return (
    <Page
      title="Schedules"
      actions={
        edit && editing === null ? (
          <button type="button" onClick={() => setEditing('new')}>
            New schedule
          </button>
        ) : null
      }
    >
      {edit && editing !== null ? (
        <ScheduleForm
          schedule={editing === 'new' ? null : editing}
          cat={cat}
          onDone={(id) => {
            setEditing(null)
            setShownId(id)
            list.reload()
          }}
          onCancel={() => setEditing(null)}
        />
      ) : null}
      <ErrorNote error={list.error ?? removeError} />
      <p aria-live="polite">{removed}</p>
      {list.data ? (
        <table class="list">
          <caption>{list.data.length === 1 ? '1 schedule' : `${list.data.length} schedules`}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Rules</th>
              <th scope="col">Time zone</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((s) => (
              <tr key={s.id} aria-current={shown?.id === s.id ? 'true' : undefined}>
                <td>{s.name}</td>
                <td>{s.rules?.length ?? 0}</td>
                <td>{s.timezone ?? "the screen's"}</td>
                <td>
                  <Ago at={s.createdAt} />
                </td>
                <td class="row-actions">
                  <button type="button" class="link" onClick={() => setShownId(s.id)} aria-label={`Show the week of ${s.name}`}>
                    Week
                  </button>
                  {edit ? (
                    <>
                      {' '}
                      <button type="button" class="link" onClick={() => setEditing(s)} aria-label={`Edit ${s.name}`}>
                        Edit
                      </button>{' '}
                      <ConfirmButton label="Delete" name={s.name} onConfirm={() => remove(s)} />
                    </>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : list.loading ? (
        <p class="loading">Loading…</p>
      ) : null}
      {shown ? <Week schedule={shown} cat={cat} /> : null}
    </Page>
  )
}

/** The week of a schedule: the visual grid (hidden from screen readers) and the rules as a table. */
function Week(props: { schedule: Schedule; cat: Catalogue }): JSX.Element {
  const rules = props.schedule.rules ?? []
  return (
    <section aria-labelledby="h-week">
      <h2 id="h-week">Week of {props.schedule.name}</h2>
      <p class="hint">
        When no rule is on: {nameOf(props.cat, props.schedule.fallback)}. Where rules overlap, the higher priority plays. Each day runs from 00:00 at the top to
        24:00 at the bottom, with a line every 6 hours.
      </p>
      <div class="week" aria-hidden="true">
        {WEEK.map((d) => (
          <div key={d} class="week-day">
            <div class="week-head">{DAYS[d]!.slice(0, 3)}</div>
            <div class="week-col">
              {segments(rules, d).map(({ rule: r, from, to, key }) => (
                <div
                  key={key}
                  class={`week-block${r.enabled === false ? ' disabled' : ''}`}
                  style={{ top: `${(from / 1440) * 100}%`, height: `${((Math.max(to, from + 15) - from) / 1440) * 100}%` }}
                  title={`${nameOf(props.cat, r.content)} ${r.start ?? '00:00'}–${r.end ?? '24:00'}`}
                >
                  <span>{from === 0 && overnight(r) ? '…' : (r.start ?? '00:00')}</span> {nameOf(props.cat, r.content)}
                </div>
              ))}
            </div>
          </div>
        ))}
      </div>
      <table class="list week-table">
        <caption>Rules of {props.schedule.name}</caption>
        <thead>
          <tr>
            <th scope="col">Content</th>
            <th scope="col">Days</th>
            <th scope="col">From</th>
            <th scope="col">To</th>
            <th scope="col">Dates</th>
            <th scope="col">Priority</th>
            <th scope="col">On</th>
          </tr>
        </thead>
        <tbody>
          {rules.length === 0 ? (
            <tr>
              <td colSpan={7}>No rules.</td>
            </tr>
          ) : (
            rules.map((r) => (
              <tr key={r.id}>
                <td>{nameOf(props.cat, r.content)}</td>
                <td>{dayList(r.days)}</td>
                <td>{r.start ?? '00:00'}</td>
                <td>{overnight(r) ? `${r.end} (next day)` : (r.end ?? '24:00')}</td>
                <td>{r.dateFrom || r.dateTo ? `${r.dateFrom ?? '…'} to ${r.dateTo ?? '…'}` : 'Always'}</td>
                <td>{r.priority}</td>
                <td>{r.enabled === false ? 'No' : 'Yes'}</td>
              </tr>
            ))
          )}
        </tbody>
      </table>
    </section>
  )
}

interface RuleRow {
  id: string
  kind: RefKind
  contentId: string
  contentName: string | null
  days: number[]
  start: string
  end: string
  priority: string
}

const KIND_OPTIONS: readonly (readonly [RefKind, string])[] = [
  ['playlist', 'Playlist'],
  ['media', 'Media file'],
]

const knownName = (cat: Catalogue, kind: string, id: string): string | null =>
  (kind === 'media' ? cat.media : kind === 'playlist' ? cat.playlists : []).find((x) => x.id === id)?.name ?? null

let ruleSeq = 0
const newRuleId = () => `r${Date.now().toString(36)}${(ruleSeq++).toString(36)}`

function ScheduleForm(props: { schedule: Schedule | null; cat: Catalogue; onDone: (id: string) => void; onCancel: () => void }): JSX.Element {
  const s = props.schedule
  const [name, setName] = useState(s?.name ?? '')
  const [timezone, setTimezone] = useState(s?.timezone ?? '')
  const [fallback, setFallback] = useState<{ kind: RefKind | ''; id: string; name: string | null }>(
    s?.fallback
      ? { kind: s.fallback.kind as RefKind, id: s.fallback.id, name: knownName(props.cat, s.fallback.kind, s.fallback.id) }
      : { kind: '', id: '', name: null },
  )
  const [rows, setRows] = useState<RuleRow[]>(
    (s?.rules ?? []).map((r) => ({
      id: r.id,
      kind: r.content.kind as RefKind,
      contentId: r.content.id,
      contentName: knownName(props.cat, r.content.kind, r.content.id),
      days: r.days ?? [],
      start: r.start ?? '',
      end: r.end ?? '',
      priority: String(r.priority),
    })),
  )
  const { busy, fieldErrors, error, submit } = useSubmit(FIELDS, async () => {
    const old = new Map((s?.rules ?? []).map((r) => [r.id, r]))
    const rules = rows.map((r) => ({
      ...old.get(r.id),
      id: r.id,
      content: { kind: r.kind, id: r.contentId },
      priority: Number(r.priority || '0'),
      ...(r.days.length && r.days.length < 7 ? { days: [...r.days].sort((a, b) => a - b) } : { days: undefined }),
      start: r.start || undefined,
      end: r.end || undefined,
    }))
    const body = { name, timezone: timezone.trim() || null, rules, fallback: fallback.kind ? { kind: fallback.kind, id: fallback.id } : null }
    const got = s
      ? await call(api.PATCH('/v1/schedules/{id}', { params: { path: { id: s.id } }, body: body as never }))
      : await call(api.POST('/v1/schedules', { body: body as never }))
    props.onDone((got as { data: { id: string } }).data.id)
  })
  // Updates from the row as it is when applied (several quick changes in a row all count).
  const set = (i: number, r: Partial<RuleRow> | ((x: RuleRow) => Partial<RuleRow>)) =>
    setRows((all) => all.map((x, j) => (j === i ? { ...x, ...(typeof r === 'function' ? r(x) : r) } : x)))
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="h-schedule-form">
      <h2 id="h-schedule-form" class="panel-title">
        {s ? `Edit ${s.name}` : 'New schedule'}
      </h2>
      <Field label="Schedule name" name="name" value={name} onInput={setName} error={fieldErrors.name} />
      <Field
        label="Time zone"
        name="timezone"
        value={timezone}
        onInput={setTimezone}
        error={fieldErrors.timezone}
        hint="An IANA zone such as Europe/Paris; empty: each screen's own."
      />
      <SelectField
        label="When no rule is on"
        name="fallback-kind"
        value={fallback.kind}
        onInput={(v) => setFallback({ kind: v as RefKind | '', id: '', name: null })}
        options={[['', 'Nothing'], ...KIND_OPTIONS]}
        error={fallback.kind ? null : fieldErrors.fallback}
      />
      {fallback.kind ? (
        <ContentPicker
          id="f-fallback"
          label={fallback.kind === 'media' ? 'Fallback file' : 'Fallback playlist'}
          kind={fallback.kind}
          value={fallback.id}
          name={fallback.name}
          onChange={(id, name) => setFallback({ kind: fallback.kind, id, name })}
          error={fieldErrors.fallback}
        />
      ) : null}
      <fieldset class="items" aria-describedby={fieldErrors.rules ? 'f-rules-error' : undefined}>
        <legend>Rules</legend>
        {rows.length === 0 ? <p class="hint">No rules yet.</p> : null}
        <ol class="item-rows">
          {rows.map((r, i) => (
            <li key={r.id} class="rule-row">
              <fieldset class="rule">
                <legend>Rule {i + 1}</legend>
                <label for={`rule-kind-${i}`}>Kind</label>
                <select
                  id={`rule-kind-${i}`}
                  value={r.kind}
                  onChange={(e) => set(i, { kind: (e.currentTarget as HTMLSelectElement).value as RefKind, contentId: '', contentName: null })}
                >
                  {KIND_OPTIONS.map(([k, l]) => (
                    <option key={k} value={k}>
                      {l}
                    </option>
                  ))}
                </select>
                <ContentPicker
                  id={`rule-content-${i}`}
                  label="Content"
                  kind={r.kind}
                  value={r.contentId}
                  name={r.contentName}
                  onChange={(contentId, contentName) => set(i, { contentId, contentName })}
                />
                <label for={`rule-start-${i}`}>From</label>
                <input id={`rule-start-${i}`} type="time" value={r.start} onInput={(e) => set(i, { start: (e.currentTarget as HTMLInputElement).value })} />
                <label for={`rule-end-${i}`}>To</label>
                <input id={`rule-end-${i}`} type="time" value={r.end} onInput={(e) => set(i, { end: (e.currentTarget as HTMLInputElement).value })} />
                <label for={`rule-priority-${i}`}>Priority</label>
                <input
                  id={`rule-priority-${i}`}
                  class="short"
                  type="number"
                  value={r.priority}
                  onInput={(e) => set(i, { priority: (e.currentTarget as HTMLInputElement).value })}
                />
                <fieldset class="days">
                  <legend>Days (none: every day)</legend>
                  {WEEK.map((d) => (
                    <label key={d} class="day">
                      <input
                        type="checkbox"
                        checked={r.days.includes(d)}
                        onChange={(e) => {
                          const on = (e.currentTarget as HTMLInputElement).checked
                          set(i, (x) => ({ days: on ? [...x.days.filter((y) => y !== d), d] : x.days.filter((y) => y !== d) }))
                        }}
                      />
                      {DAYS[d]!.slice(0, 3)}
                    </label>
                  ))}
                </fieldset>
                <button type="button" class="link" onClick={() => setRows((all) => all.filter((_, j) => j !== i))}>
                  Remove rule {i + 1}
                </button>
              </fieldset>
            </li>
          ))}
        </ol>
        <button
          type="button"
          class="secondary"
          onClick={() =>
            setRows((all) => [
              ...all,
              { id: newRuleId(), kind: 'playlist', contentId: '', contentName: null, days: [], start: '09:00', end: '17:00', priority: '1' },
            ])
          }
        >
          Add rule
        </button>
        {fieldErrors.rules ? (
          <small id="f-rules-error" class="field-error">
            {fieldErrors.rules}
          </small>
        ) : null}
      </fieldset>
      <ErrorNote error={error} />
      <div class="form-buttons">
        <button type="submit" disabled={busy}>
          {s ? 'Save schedule' : 'Create schedule'}
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}
