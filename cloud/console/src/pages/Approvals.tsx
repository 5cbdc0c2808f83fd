// Approvals: the inbox of pending requests (and a filter for decided ones), each showing
// what would change, the current version beside the held one, field by field; approve or
// reject with an optional note where the role holds approval.decide. approval.* events
// keep the inbox current.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { useLive } from '../live.js'
import { useSession } from '../session.js'
import { Ago, ErrorNote, errProps, Page, Shell, useLoad, useSubmit } from '../ui.js'
import type { PageProps } from './types.js'

type Request = Awaited<ReturnType<typeof load>>['data'][number]
type State = 'pending' | 'approved' | 'rejected' | 'withdrawn'
const STATES: State[] = ['pending', 'approved', 'rejected', 'withdrawn']

async function load(state: State) {
  return { ...(await call(api.GET('/v1/approvals', { params: { query: { state, limit: '100', count: '1' } } }))), state }
}

/** A change's two sides: "a → b" details split; a new item has no current side. */
function sides(c: { kind: string; detail: string }): [string, string] {
  if (c.kind === 'created') return ['(none: new)', c.detail]
  const i = c.detail.indexOf(' → ')
  return i < 0 ? ['', c.detail] : [c.detail.slice(0, i), c.detail.slice(i + 3)]
}

function Diff(props: { r: Request }): JSX.Element {
  return (
    <table class="diff">
      <caption>What would change</caption>
      <thead>
        <tr>
          <th scope="col">What</th>
          <th scope="col">Current</th>
          <th scope="col">Held change</th>
        </tr>
      </thead>
      <tbody>
        {props.r.changes.map((c, i) => {
          const [before, after] = sides(c)
          return (
            <tr key={`${i}-${c.label}`}>
              <th scope="row">{c.label}</th>
              <td class="removed">{before}</td>
              <td class="added">{after}</td>
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}

function Decide(props: { r: Request; onDone: () => void }): JSX.Element {
  const [note, setNote] = useState('')
  const [action, setAction] = useState<'approve' | 'reject'>('approve')
  const id = `note-${props.r.id}`
  const { busy, fieldErrors, error, submit } = useSubmit(['note'], async () => {
    const body = note.trim() ? { note: note.trim() } : {}
    const path = { id: props.r.id }
    if (action === 'approve') await call(api.POST('/v1/approvals/{id}/approve', { params: { path }, body }))
    else await call(api.POST('/v1/approvals/{id}/reject', { params: { path }, body }))
    props.onDone()
  })
  return (
    <form class="decide" onSubmit={submit} aria-label={`Decide on ${props.r.contentName}`}>
      <Shell id={id} label="Note (optional)" error={fieldErrors.note}>
        <input {...errProps(id, fieldErrors.note)} name="note" value={note} onInput={(e) => setNote((e.currentTarget as HTMLInputElement).value)} />
      </Shell>
      <ErrorNote error={error} />
      <button type="submit" disabled={busy} onClick={() => setAction('approve')}>
        Approve
      </button>{' '}
      <button type="submit" class="secondary" disabled={busy} onClick={() => setAction('reject')}>
        Reject
      </button>
    </form>
  )
}

export function Approvals(props: PageProps): JSX.Element {
  const s = useSession()
  const [state, setState] = useState<State>((props.query.get('state') as State | null) ?? 'pending')
  const list = useLoad(() => load(state), [state])
  useLive((e) => {
    if (e.event.startsWith('approval.')) list.reload()
  })
  const data = list.data?.data
  return (
    <Page title="Approvals">
      <div class="filters">
        <label class="filter">
          Show
          <select value={state} onChange={(e) => setState((e.currentTarget as HTMLSelectElement).value as State)}>
            {STATES.map((x) => (
              <option key={x} value={x}>
                {x}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNote error={list.error} />
      {data ? (
        <>
          <p class="count" aria-live="polite">
            {list.data?.total ?? data.length} {list.data?.state} request{(list.data?.total ?? data.length) === 1 ? '' : 's'}
          </p>
          <ul class="requests">
            {data.map((r) => (
              <li key={r.id} class="request">
                <h2 class="request-title">
                  {r.contentName} <span class="badge warn">{r.contentKind}</span>
                </h2>
                <p>
                  Requested by {r.requestedByName} <Ago at={r.requestedAt} /> at {r.nodeName || 'the workspace root'}
                  {r.note ? `: “${r.note}”` : ''}. Level {Math.min(r.currentLevel + 1, r.levels.length)} of {r.levels.length}
                  {r.levels[r.currentLevel] ? ` (approvers: ${r.levels[r.currentLevel]!.approverNames.join(', ') || 'any with approval.decide'})` : ''}.
                </p>
                <Diff r={r} />
                {r.decisions.length ? (
                  <ul>
                    {r.decisions.map((d) => (
                      <li key={`${d.level}-${d.decidedAt}`}>
                        Level {d.level + 1}: {d.decidedByName ?? d.decidedById} <Ago at={d.decidedAt} />
                        {d.note ? `: “${d.note}”` : ''}
                      </li>
                    ))}
                  </ul>
                ) : null}
                {r.state === 'pending' && s.can('approval.decide') ? <Decide r={r} onDone={list.reload} /> : null}
              </li>
            ))}
          </ul>
        </>
      ) : list.loading ? (
        <p>Loading…</p>
      ) : null}
    </Page>
  )
}
