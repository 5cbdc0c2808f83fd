// What an operator sets up on a screen's page and a location's page without the API: the
// screen's name, location and time zone (PATCH /v1/screens/:id), its panel profile (protocol
// from the presets, set id, where it is wired, poll interval; "Test connection" sends the
// protocol's power.status and shows the reply), operating hours with the effective hours and
// where they come from (a screen's or a location's: GET|PUT|DELETE …/operating-hours), and
// deleting a screen after a confirmation.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, call } from './api.js'
import { navigate } from './router.js'
import { ConfirmButton, ErrorNote, errProps, Field, SelectField, Shell, useLoad, useSubmit } from './ui.js'

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms))
const FINAL_JOB = new Set(['ok', 'nak', 'timeout', 'failed', 'expired'])

/** Every IANA zone the browser knows (the API checks the one given). */
function zones(): string[] {
  const all = (Intl as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? []
  return all.includes('UTC') ? all : ['UTC', ...all]
}

const DETAIL_FIELDS = ['name', 'nodeId', 'timezone'] as const

/** Name, location and time zone of a screen. */
export function ScreenDetails(props: {
  id: string
  name: string
  nodeId: string | null
  timezone: string
  onSaved: (s: { name: string; nodeId: string | null; timezone: string }) => void
}): JSX.Element {
  const [name, setName] = useState(props.name)
  const [nodeId, setNodeId] = useState(props.nodeId ?? '')
  const [timezone, setTimezone] = useState(props.timezone)
  const [done, setDone] = useState<string | null>(null)
  const nodes = useLoad(async () => (await call(api.GET('/v1/nodes'))).data as { id: string; name: string }[], [])
  const { busy, fieldErrors, error, submit } = useSubmit(DETAIL_FIELDS, async () => {
    setDone(null)
    const r = (
      await call(
        api.PATCH('/v1/screens/{id}', { params: { path: { id: props.id } }, body: { name: name.trim(), nodeId: nodeId || null, timezone: timezone.trim() } }),
      )
    ).data
    setDone('Saved.')
    props.onSaved({ name: r.name, nodeId: r.nodeId ?? null, timezone: r.timezone })
  })
  return (
    <form onSubmit={submit} noValidate>
      <Field label="Name" name="name" id="screen-name" value={name} onInput={setName} error={fieldErrors.name} required />
      <Shell id="screen-node" label="Location" error={fieldErrors.nodeId}>
        <select {...errProps('screen-node', fieldErrors.nodeId)} value={nodeId} onChange={(e) => setNodeId((e.currentTarget as HTMLSelectElement).value)}>
          <option value="">Workspace (no location)</option>
          {(nodes.data ?? []).map((n) => (
            <option key={n.id} value={n.id}>
              {n.name}
            </option>
          ))}
        </select>
      </Shell>
      <Shell id="screen-timezone" label="Time zone" error={fieldErrors.timezone}>
        <input
          {...errProps('screen-timezone', fieldErrors.timezone)}
          list="screen-timezones"
          value={timezone}
          onInput={(e) => setTimezone((e.currentTarget as HTMLInputElement).value)}
        />
      </Shell>
      <datalist id="screen-timezones">
        {zones().map((z) => (
          <option key={z} value={z} />
        ))}
      </datalist>
      <ErrorNote error={error} />
      <p aria-live="polite">{done}</p>
      <button type="submit" disabled={busy}>
        Save details
      </button>
    </form>
  )
}

const PANEL_FIELDS = ['protocol', 'setId', 'pollSeconds', 'portHint'] as const

interface Preset {
  protocol: string
  label: string
  commands: { key: string; name: string; value: string; encoding: 'ascii' | 'hex'; eol: 'none' | 'cr' }[]
}

/** The panel profile: protocol (from the presets), set id, port hint, poll interval; and a connection test. */
export function PanelProfileForm(props: { id: string; onSaved: () => void }): JSX.Element {
  const loaded = useLoad(async () => {
    const [profile, presets] = await Promise.all([
      call(api.GET('/v1/screens/{id}/panel', { params: { path: { id: props.id } } })),
      call(api.GET('/v1/serial-presets', { params: { query: {} } })),
    ])
    return { profile: profile.data, presets: presets.data as Preset[] }
  }, [props.id])
  if (loaded.error) return <ErrorNote error={loaded.error} />
  if (!loaded.data) return <p>Loading…</p>
  return <PanelProfileFields id={props.id} {...loaded.data} onSaved={props.onSaved} />
}

function PanelProfileFields(props: {
  id: string
  profile: { protocol: string; setId: number; pollSeconds: number; portHint?: string | null } | null
  presets: Preset[]
  onSaved: () => void
}): JSX.Element {
  const p = props.profile
  const [protocol, setProtocol] = useState(p?.protocol ?? '')
  const [setId, setSetId] = useState(String(p?.setId ?? 1))
  const [portHint, setPortHint] = useState(p?.portHint ?? '')
  const [poll, setPoll] = useState(String(p?.pollSeconds ?? 60))
  const [saved, setSaved] = useState<typeof p>(p)
  const [done, setDone] = useState<string | null>(null)
  const [test, setTest] = useState<string | null>(null)
  const [testError, setTestError] = useState<unknown>(null)
  const { busy, fieldErrors, error, submit } = useSubmit(PANEL_FIELDS, async () => {
    setDone(null)
    const body = protocol
      ? { protocol: protocol as never, setId: Number(setId), pollSeconds: Number(poll), portHint: portHint.trim() || null }
      : { protocol: null }
    const r = (await call(api.PATCH('/v1/screens/{id}/panel', { params: { path: { id: props.id } }, body }))).data
    setSaved(r)
    setDone(r ? `Saved: ${props.presets.find((x) => x.protocol === r.protocol)?.label ?? r.protocol}, set id ${r.setId}.` : 'Panel profile removed.')
    props.onSaved()
  })
  const testConnection = async () => {
    setTestError(null)
    setTest('Asking the panel for its power…')
    try {
      const preset = (await call(api.GET('/v1/serial-presets', { params: { query: { protocol: saved!.protocol, setId: String(saved!.setId) } } }))).data[0] as
        | Preset
        | undefined
      const status = preset?.commands.find((c) => c.key === 'power.status')
      if (!status) throw new Error(`The ${saved!.protocol} presets have no power status command.`)
      let job = (
        await call(
          api.POST('/v1/screens/{id}/serial', {
            params: { path: { id: props.id } },
            body: { value: status.value, encoding: status.encoding, eol: status.eol, protocol: saved!.protocol } as never,
          }),
        )
      ).data
      while (!FINAL_JOB.has(job.status)) {
        setTest(`Asking the panel for its power: ${job.status}…`)
        await wait(1000)
        job = (await call(api.GET('/v1/serial-jobs/{id}', { params: { path: { id: job.id } } }))).data
      }
      const j = job as { status: string; replyHex?: string | null; error?: string | null }
      setTest(
        j.status === 'ok'
          ? `The panel answered${j.replyHex ? ` (${j.replyHex})` : ''}: the connection works.`
          : `No good answer: ${j.status}${j.error ? ` (${j.error})` : ''}. Check the cable, the port and the set id.`,
      )
    } catch (e) {
      setTest(null)
      setTestError(e)
    }
  }
  return (
    <form onSubmit={submit} noValidate>
      <SelectField
        label="Protocol"
        name="panel-protocol"
        value={protocol}
        onInput={setProtocol}
        options={[['', 'None (no panel control)'], ...props.presets.map((x) => [x.protocol, x.label] as const)]}
        error={fieldErrors.protocol}
      />
      {protocol ? (
        <>
          <Shell id="panel-setid" label="Set id (the panel's RS232 id, 0–255)" error={fieldErrors.setId}>
            <input
              {...errProps('panel-setid', fieldErrors.setId)}
              type="number"
              min="0"
              max="255"
              value={setId}
              onInput={(e) => setSetId((e.currentTarget as HTMLInputElement).value)}
            />
          </Shell>
          <Field
            label="Port (where it is wired)"
            name="portHint"
            id="panel-port"
            value={portHint}
            onInput={setPortHint}
            hint="For whoever services it: /dev/ttyUSB0, or an RS232-over-TCP adapter's host:port."
            error={fieldErrors.portHint}
          />
          <Shell id="panel-poll" label="Poll the power every (seconds, 0 = never)" error={fieldErrors.pollSeconds}>
            <input
              {...errProps('panel-poll', fieldErrors.pollSeconds)}
              type="number"
              min="0"
              value={poll}
              onInput={(e) => setPoll((e.currentTarget as HTMLInputElement).value)}
            />
          </Shell>
        </>
      ) : null}
      <ErrorNote error={error} />
      <p aria-live="polite">{done}</p>
      <div class="row">
        <button type="submit" disabled={busy}>
          Save panel
        </button>
        {saved ? (
          <button type="button" class="secondary" onClick={testConnection}>
            Test connection
          </button>
        ) : null}
      </div>
      <p aria-live="polite">{test}</p>
      <ErrorNote error={testError} />
    </form>
  )
}

const DAYS = [
  ['mon', 'Mon'],
  ['tue', 'Tue'],
  ['wed', 'Wed'],
  ['thu', 'Thu'],
  ['fri', 'Fri'],
  ['sat', 'Sat'],
  ['sun', 'Sun'],
] as const

type Day = (typeof DAYS)[number][0]
interface Window {
  days: Day[]
  on: string
  off: string
}
interface Exception {
  date: string
  closed: boolean
  on: string
  off: string
}
interface Hours {
  weekly: { days: Day[]; on: string; off: string }[]
  exceptions: ({ date: string; off: true } | { date: string; on: string; off: string })[]
}
interface HoursView {
  hours: Hours | null
  effective: { hours: Hours; source: { kind: 'node' | 'screen'; id: string } } | null
}

/** "Mon–Fri 08:00–20:00; Sat 10:00–16:00; closed 2026-12-25" */
export function describeHours(h: Hours): string {
  const order = DAYS.map(([d]) => d)
  const days = (ds: Day[]) => {
    const idx = [...new Set(ds)].map((d) => order.indexOf(d)).sort((a, b) => a - b)
    const runs: string[] = []
    for (let i = 0; i < idx.length; ) {
      let j = i
      while (j + 1 < idx.length && idx[j + 1] === idx[j]! + 1) j++
      runs.push(
        j - i >= 2
          ? `${DAYS[idx[i]!]![1]}–${DAYS[idx[j]!]![1]}`
          : idx
              .slice(i, j + 1)
              .map((k) => DAYS[k]![1])
              .join(', '),
      )
      i = j + 1
    }
    return runs.join(', ')
  }
  const parts = h.weekly.map((w) => `${days(w.days)} ${w.on}–${w.off}`)
  for (const e of h.exceptions) parts.push('on' in e ? `${e.date} ${e.on}–${e.off}` : `closed ${e.date}`)
  return parts.length ? parts.join('; ') : 'never on'
}

/**
 * Operating hours of a screen or a location: the effective hours and where they come from,
 * and its own hours edited (weekly windows, exceptions by date), or removed to inherit.
 */
export function HoursEditor(props: { kind: 'screen' | 'node'; id: string; canEdit: boolean }): JSX.Element {
  const nodes = useLoad(async () => (await call(api.GET('/v1/nodes'))).data as { id: string; name: string }[], [])
  const view = useLoad(
    async () =>
      (props.kind === 'screen'
        ? (await call(api.GET('/v1/screens/{id}/operating-hours', { params: { path: { id: props.id } } }))).data
        : (await call(api.GET('/v1/nodes/{id}/operating-hours', { params: { path: { id: props.id } } }))).data) as HoursView,
    [props.kind, props.id],
  )
  // Kept here: a save re-creates the form (its key is the saved hours), the message stays.
  const [done, setDone] = useState<string | null>(null)
  if (view.error) return <ErrorNote error={view.error} />
  if (!view.data) return <p>Loading…</p>
  const v = view.data
  const from = (s: { kind: 'node' | 'screen'; id: string }) =>
    s.kind === props.kind && s.id === props.id
      ? props.kind === 'screen'
        ? "this screen's own hours"
        : "this location's own hours"
      : `the location ${nodes.data?.find((n) => n.id === s.id)?.name ?? s.id}`
  return (
    <div>
      <p class="effective-hours">
        {v.effective
          ? `In effect: ${describeHours(v.effective.hours)} (from ${from(v.effective.source)}).`
          : 'In effect: none. The panel is not switched by time.'}
      </p>
      {props.canEdit ? (
        <HoursForm
          key={JSON.stringify(v.hours)}
          {...props}
          own={v.hours}
          onSaved={(x, message) => {
            view.set(x)
            setDone(message)
          }}
        />
      ) : null}
      <p aria-live="polite">{done}</p>
    </div>
  )
}

function HoursForm(props: { kind: 'screen' | 'node'; id: string; own: Hours | null; onSaved: (v: HoursView, message: string) => void }): JSX.Element {
  const [weekly, setWeekly] = useState<Window[]>(props.own?.weekly.map((w) => ({ ...w, days: [...w.days] })) ?? [])
  const [exceptions, setExceptions] = useState<Exception[]>(
    props.own?.exceptions.map((e) => ('on' in e ? { date: e.date, closed: false, on: e.on, off: e.off } : { date: e.date, closed: true, on: '', off: '' })) ??
      [],
  )
  const path = { params: { path: { id: props.id } } }
  const save = useSubmit([], async () => {
    const body = {
      weekly,
      exceptions: exceptions.map((e) => (e.closed ? { date: e.date, off: true as const } : { date: e.date, on: e.on, off: e.off })),
    }
    const r =
      props.kind === 'screen'
        ? (await call(api.PUT('/v1/screens/{id}/operating-hours', { ...path, body: body as never }))).data
        : (await call(api.PUT('/v1/nodes/{id}/operating-hours', { ...path, body: body as never }))).data
    props.onSaved(r as HoursView, 'Hours saved.')
  })
  const remove = useSubmit([], async () => {
    const r =
      props.kind === 'screen'
        ? (await call(api.DELETE('/v1/screens/{id}/operating-hours', path))).data
        : (await call(api.DELETE('/v1/nodes/{id}/operating-hours', path))).data
    props.onSaved(r as HoursView, props.kind === 'screen' ? 'Own hours removed: the location’s apply.' : 'Own hours removed: the parent location’s apply.')
  })
  const setW = (i: number, w: Partial<Window>) => setWeekly(weekly.map((x, j) => (j === i ? { ...x, ...w } : x)))
  const setE = (i: number, e: Partial<Exception>) => setExceptions(exceptions.map((x, j) => (j === i ? { ...x, ...e } : x)))
  const p = `${props.kind}-hours`
  return (
    <form onSubmit={save.submit} noValidate class="hours">
      <p>{props.own ? 'Its own hours:' : 'No hours of its own: set some to override what is in effect.'}</p>
      {weekly.map((w, i) => (
        <fieldset key={`w${i}`} class="hours-window">
          <legend>Weekly window {i + 1}</legend>
          <div class="row">
            {DAYS.map(([d, label]) => (
              <label key={d} class="check-label">
                <input
                  type="checkbox"
                  checked={w.days.includes(d)}
                  onChange={(e) => setW(i, { days: (e.currentTarget as HTMLInputElement).checked ? [...w.days, d] : w.days.filter((x) => x !== d) })}
                />{' '}
                {label}
              </label>
            ))}
          </div>
          <div class="row">
            <Shell id={`${p}-w${i}-on`} label="On at">
              <input id={`${p}-w${i}-on`} type="time" value={w.on} onInput={(e) => setW(i, { on: (e.currentTarget as HTMLInputElement).value })} />
            </Shell>
            <Shell id={`${p}-w${i}-off`} label="Off at">
              <input id={`${p}-w${i}-off`} type="time" value={w.off} onInput={(e) => setW(i, { off: (e.currentTarget as HTMLInputElement).value })} />
            </Shell>
            <button type="button" class="link" onClick={() => setWeekly(weekly.filter((_, j) => j !== i))}>
              Remove window {i + 1}
            </button>
          </div>
        </fieldset>
      ))}
      {exceptions.map((e, i) => (
        <fieldset key={`e${i}`} class="hours-window">
          <legend>Exception {i + 1}</legend>
          <div class="row">
            <Shell id={`${p}-e${i}-date`} label="Date">
              <input id={`${p}-e${i}-date`} type="date" value={e.date} onInput={(x) => setE(i, { date: (x.currentTarget as HTMLInputElement).value })} />
            </Shell>
            <label class="check-label">
              <input type="checkbox" checked={e.closed} onChange={(x) => setE(i, { closed: (x.currentTarget as HTMLInputElement).checked })} /> Off all day
            </label>
            {e.closed ? null : (
              <>
                <Shell id={`${p}-e${i}-on`} label="On at">
                  <input id={`${p}-e${i}-on`} type="time" value={e.on} onInput={(x) => setE(i, { on: (x.currentTarget as HTMLInputElement).value })} />
                </Shell>
                <Shell id={`${p}-e${i}-off`} label="Off at">
                  <input id={`${p}-e${i}-off`} type="time" value={e.off} onInput={(x) => setE(i, { off: (x.currentTarget as HTMLInputElement).value })} />
                </Shell>
              </>
            )}
            <button type="button" class="link" onClick={() => setExceptions(exceptions.filter((_, j) => j !== i))}>
              Remove exception {i + 1}
            </button>
          </div>
        </fieldset>
      ))}
      <div class="row">
        <button
          type="button"
          class="secondary"
          onClick={() => setWeekly([...weekly, { days: ['mon', 'tue', 'wed', 'thu', 'fri'], on: '08:00', off: '20:00' }])}
        >
          Add a weekly window
        </button>
        <button type="button" class="secondary" onClick={() => setExceptions([...exceptions, { date: '', closed: true, on: '', off: '' }])}>
          Add an exception
        </button>
      </div>
      <ErrorNote error={save.error ?? remove.error} />
      <div class="row">
        <button type="submit" disabled={save.busy}>
          Save hours
        </button>
        {props.own ? (
          <button type="button" class="secondary" disabled={remove.busy} onClick={() => remove.submit()}>
            {props.kind === 'screen' ? "Remove its own hours (use the location's)" : "Remove its own hours (use the parent's)"}
          </button>
        ) : null}
      </div>
    </form>
  )
}

/** Deletes a screen after a confirmation, then goes back to the screens. */
export function DeleteScreen(props: { id: string; name: string }): JSX.Element {
  const [error, setError] = useState<unknown>(null)
  return (
    <div>
      <p>Its device stops working with this service at once and its connection is closed.</p>
      <ConfirmButton
        label="Delete screen"
        name={props.name}
        onConfirm={async () => {
          setError(null)
          try {
            await call(api.DELETE('/v1/screens/{id}', { params: { path: { id: props.id } } }))
            navigate('/screens?deleted=1')
          } catch (e) {
            setError(e)
          }
        }}
      />
      <ErrorNote error={error} />
    </div>
  )
}
