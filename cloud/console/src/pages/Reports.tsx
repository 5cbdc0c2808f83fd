// Reports (permission screen.view): over the last 7, 30 or 90 days, availability by location
// over time (a line per location, a point per day or week), the screens with the lowest
// availability, and the plays per day of a chosen content. Charts are drawn by uPlot (kept,
// small, canvas); each has its figures as a table beside it (a screen reader or a
// keyboard user reads the table, the canvas is one labelled image) and a CSV download.
import 'uplot/dist/uPlot.min.css'
import type { JSX } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import uPlot from 'uplot'
import { api, call } from '../api.js'
import { Link } from '../router.js'
import { ErrorNote, Page, SelectField, useLoad } from '../ui.js'

const DAY = 86_400_000
/** Locations drawn at most (the largest); the table holds them all. */
const MAX_LINES = 8
const WORST = 10
/** Line colours: distinct, readable on light and dark backgrounds. */
const COLOURS = ['#2f6fdf', '#d9480f', '#2b8a3e', '#ae3ec9', '#e8590c', '#0c8599', '#c2255c', '#5c940d']
const RANGES = [
  ['7', 'Last 7 days'],
  ['30', 'Last 30 days'],
  ['90', 'Last 90 days'],
] as const

interface Window {
  from: number
  to: number
  /** The chart's period: a day, or a week over more than 31 days. */
  step: number
}

function windowOf(days: number, now: number): Window {
  const to = Math.floor(now / DAY) * DAY + DAY
  const from = to - days * DAY
  const step = days > 31 ? 7 * DAY : DAY
  return { from, to, step }
}

const iso = (ms: number) => new Date(ms).toISOString()
const day = (ms: number) => iso(ms).slice(0, 10)
const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${(x * 100).toFixed(1)} %`)
const hours = (s: number) => `${(s / 3600).toFixed(1)} h`

function availabilityQuery(w: { from: number; to: number }, groupBy: 'screen' | 'node') {
  return { from: iso(w.from), to: iso(w.to), groupBy }
}

/** A uPlot chart in a labelled figure; redrawn when its data changes, sized to its box. */
function Chart(p: {
  label: string
  data: uPlot.AlignedData
  series: { label: string; colour: string }[]
  bars?: boolean
  /** x values are indexes into these names (bars of screens); otherwise times in seconds. */
  names?: string[]
  yPercent?: boolean
}): JSX.Element {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const el = box.current
    if (!el) return
    const fg = getComputedStyle(el).color
    const axis = { stroke: fg, grid: { stroke: 'rgba(128,128,128,0.25)' }, ticks: { stroke: 'rgba(128,128,128,0.4)' } }
    const opts: uPlot.Options = {
      width: Math.max(320, el.clientWidth || 640),
      height: 260,
      legend: { show: false },
      cursor: { show: false },
      scales: { x: { time: !p.names }, y: p.yPercent ? { range: [0, 1] } : { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      axes: [
        {
          ...axis,
          ...(p.names ? { values: (_u: uPlot, ticks: number[]) => ticks.map((t) => (Number.isInteger(t) ? (p.names![t] ?? '') : '')) } : {}),
        },
        { ...axis, ...(p.yPercent ? { values: (_u: uPlot, ticks: number[]) => ticks.map((t) => `${Math.round(t * 100)} %`) } : {}) },
      ],
      series: [
        {},
        ...p.series.map((s) => ({
          label: s.label,
          stroke: s.colour,
          width: 2,
          ...(p.bars ? { fill: s.colour, paths: uPlot.paths.bars!({ size: [0.6, 60] }), points: { show: false } } : { points: { show: true, size: 5 } }),
        })),
      ],
    }
    const chart = new uPlot(opts, p.data, el)
    return () => chart.destroy()
  }, [p.data])
  return (
    <figure class="chart">
      <div ref={box} class="chart-canvas" role="img" aria-label={p.label} />
      {p.series.length > 1 ? (
        <figcaption class="chart-key">
          {p.series.map((s) => (
            <span key={s.label}>
              <span class="swatch" style={{ background: s.colour }} aria-hidden="true" /> {s.label}
            </span>
          ))}
        </figcaption>
      ) : null}
    </figure>
  )
}

/** The chart, and the same figures as a table under "Show as a table". */
function ChartAndTable(p: { chart: JSX.Element; table: JSX.Element; csv: string; csvName: string }): JSX.Element {
  return (
    <>
      {p.chart}
      <details class="chart-table">
        <summary>Show as a table</summary>
        {p.table}
      </details>
      <p>
        <a class="button secondary" href={p.csv} download={p.csvName}>
          Download CSV
        </a>
      </p>
    </>
  )
}

function ByLocation(p: { w: Window }): JSX.Element {
  const { w } = p
  // One request for the whole chart: the report cut into days (or weeks) by the API.
  const data = useLoad(async () => {
    const a = await call(api.GET('/v1/reports/availability', { params: { query: { ...availabilityQuery(w, 'node'), per: w.step === DAY ? 'day' : 'week' } } }))
    return ('data' in a ? (a.data.periods ?? []) : []).map((period) => ({ at: Date.parse(period.from), rows: period.rows }))
  }, [w.from, w.to])
  if (data.error) return <ErrorNote error={data.error} />
  if (!data.data) return <p aria-busy="true">Loading…</p>
  // Locations, the largest first (by screens in the last bucket that has them).
  const names = new Map<string, { name: string; screens: number }>()
  for (const b of data.data) for (const r of b.rows) names.set(r.id ?? '', { name: r.name, screens: Math.max(names.get(r.id ?? '')?.screens ?? 0, r.screens) })
  const ids = [...names.keys()].sort((a, b) => names.get(b)!.screens - names.get(a)!.screens)
  if (!ids.length) return <p class="hint">No screens in this period.</p>
  const value = (b: (typeof data.data)[number], id: string) => b.rows.find((r) => (r.id ?? '') === id)?.displayAvailability ?? null
  const drawn = ids.slice(0, MAX_LINES)
  const plotData: uPlot.AlignedData = [data.data.map((b) => b.at / 1000), ...drawn.map((id) => data.data!.map((b) => value(b, id)))]
  const unit = w.step === DAY ? 'Day' : 'Week of'
  return (
    <ChartAndTable
      chart={
        <Chart
          label={`Showing content over scheduled hours by location, per ${w.step === DAY ? 'day' : 'week'}: ${drawn.map((id) => names.get(id)!.name).join(', ')}. The table below holds the figures.`}
          data={plotData}
          series={drawn.map((id, i) => ({ label: names.get(id)!.name, colour: COLOURS[i % COLOURS.length]! }))}
          yPercent
        />
      }
      table={
        <table class="report-table">
          <caption>Showing content over scheduled hours, by location</caption>
          <thead>
            <tr>
              <th scope="col">{unit}</th>
              {ids.map((id) => (
                <th scope="col" key={id}>
                  {names.get(id)!.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {data.data.map((b) => (
              <tr key={b.at}>
                <th scope="row">{day(b.at)}</th>
                {ids.map((id) => (
                  <td key={id}>{pct(value(b, id))}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      }
      csv={`/v1/reports/availability?${new URLSearchParams({ ...availabilityQuery(w, 'node'), format: 'csv' })}`}
      csvName="availability-by-location.csv"
    />
  )
}

function WorstScreens(p: { w: Window }): JSX.Element {
  const { w } = p
  const data = useLoad(async () => {
    const a = await call(api.GET('/v1/reports/availability', { params: { query: availabilityQuery(w, 'screen') } }))
    const rows = 'data' in a ? a.data.rows : []
    return rows
      .filter((r) => r.availability !== null)
      .sort((x, y) => x.availability! - y.availability! || (x.displayAvailability ?? 1) - (y.displayAvailability ?? 1))
      .slice(0, WORST)
  }, [w.from, w.to])
  if (data.error) return <ErrorNote error={data.error} />
  if (!data.data) return <p aria-busy="true">Loading…</p>
  const rows = data.data
  if (!rows.length) return <p class="hint">No screens in this period.</p>
  return (
    <ChartAndTable
      chart={
        <Chart
          label={`The ${rows.length} screens online the least of the period: ${rows.map((r) => `${r.name} ${pct(r.availability)}`).join(', ')}.`}
          data={[rows.map((_, i) => i), rows.map((r) => r.availability)]}
          series={[{ label: 'Online', colour: COLOURS[1]! }]}
          names={rows.map((r) => r.name)}
          bars
          yPercent
        />
      }
      table={
        <table class="report-table">
          <caption>The screens online the least</caption>
          <thead>
            <tr>
              <th scope="col">Screen</th>
              <th scope="col">Online</th>
              <th scope="col">Showing content (scheduled hours)</th>
              <th scope="col">Outages</th>
              <th scope="col">Longest outage</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id}>
                <th scope="row">
                  <Link to={`/screens/${r.id}`}>{r.name}</Link>
                </th>
                <td>{pct(r.availability)}</td>
                <td>{pct(r.displayAvailability)}</td>
                <td>{r.outages}</td>
                <td>{hours(r.longestOutageSeconds)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      }
      csv={`/v1/reports/availability?${new URLSearchParams({ ...availabilityQuery(w, 'screen'), format: 'csv' })}`}
      csvName="availability-by-screen.csv"
    />
  )
}

function PlaysPerDay(p: { w: Window }): JSX.Element {
  const { w } = p
  const range = { from: iso(w.from), to: iso(w.to) }
  const contents = useLoad(async () => {
    const r = await call(api.GET('/v1/play-log/summary', { params: { query: { ...range, limit: '500' } } }))
    return ('data' in r ? r.data : []).map((c) => [`${c.contentKind}|${c.contentId}`, `${c.contentKind} ${c.contentId} (${c.plays} plays)`] as const)
  }, [w.from, w.to])
  const [chosen, setChosen] = useState('')
  const pick = chosen || contents.data?.[0]?.[0] || ''
  const [kind, id] = pick ? (pick.split('|') as [string, string]) : ['', '']
  const query = { ...range, groupBy: 'day' as const, contentKind: kind, contentId: id }
  const days = useLoad(async () => {
    if (!pick) return []
    const r = await call(api.GET('/v1/play-log/summary', { params: { query } }))
    return 'data' in r ? r.data : []
  }, [pick, w.from, w.to])
  if (contents.error) return <ErrorNote error={contents.error} />
  if (!contents.data) return <p aria-busy="true">Loading…</p>
  if (!contents.data.length) return <p class="hint">Nothing was played in this period.</p>
  const byDay = new Map((days.data ?? []).map((d) => [d.day!, d]))
  const all: number[] = []
  for (let at = w.from; at < w.to; at += DAY) all.push(at)
  return (
    <>
      <SelectField label="Content" name="report-content" value={pick} onInput={setChosen} options={contents.data} />
      <ErrorNote error={days.error} />
      {days.data ? (
        <ChartAndTable
          chart={
            <Chart
              label={`Plays per day of ${kind} ${id}: ${[...byDay.values()].reduce((n, d) => n + d.plays, 0)} plays over ${byDay.size} days with plays.`}
              data={[all.map((at) => at / 1000), all.map((at) => byDay.get(day(at))?.plays ?? 0)]}
              series={[{ label: 'Plays', colour: COLOURS[0]! }]}
              bars
            />
          }
          table={
            <table class="report-table">
              <caption>
                Plays per day of {kind} {id}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Day (UTC)</th>
                  <th scope="col">Plays</th>
                  <th scope="col">Played</th>
                  <th scope="col">With the panel on</th>
                  <th scope="col">Screens</th>
                </tr>
              </thead>
              <tbody>
                {all.map((at) => {
                  const d = byDay.get(day(at))
                  return (
                    <tr key={at}>
                      <th scope="row">{day(at)}</th>
                      <td>{d?.plays ?? 0}</td>
                      <td>{hours(d?.seconds ?? 0)}</td>
                      <td>{hours(d?.secondsPanelOn ?? 0)}</td>
                      <td>{d?.screens ?? 0}</td>
                    </tr>
                  )
                })}
              </tbody>
            </table>
          }
          csv={`/v1/play-log/summary?${new URLSearchParams({ ...query, format: 'csv' })}`}
          csvName="plays-per-day.csv"
        />
      ) : (
        <p aria-busy="true">Loading…</p>
      )}
    </>
  )
}

export function Reports(): JSX.Element {
  const [days, setDays] = useState('30')
  // The window is fixed when the range is chosen (not on every render).
  const [w, setW] = useState(() => windowOf(30, Date.now()))
  return (
    <Page title="Reports">
      <p class="hint">
        Availability is the share of time a screen was connected; showing content is the share of its operating hours it was connected, its panel not read back
        off, and content playing. Days are UTC.
      </p>
      <SelectField
        label="Period"
        name="report-period"
        value={days}
        onInput={(v) => {
          setDays(v)
          setW(windowOf(Number(v), Date.now()))
        }}
        options={RANGES}
      />
      <section aria-labelledby="r-locations">
        <h2 id="r-locations">Availability by location</h2>
        <ByLocation w={w} />
      </section>
      <section aria-labelledby="r-worst">
        <h2 id="r-worst">Screens online the least</h2>
        <WorstScreens w={w} />
      </section>
      <section aria-labelledby="r-plays">
        <h2 id="r-plays">Plays per day</h2>
        <PlaysPerDay w={w} />
      </section>
    </Page>
  )
}
