// The audit log (permission audit.view): the workspace's entries newest first, a page at a
// time (Older / Newer through the API's cursor), filtered by actor, action and time range;
// an entry's details (its field-level changes, request, address, hashes); "Verify chain"
// (GET /v1/audit-log/verify) said in words; the filtered entries as CSV (the API streams it).
import { Fragment, type JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { useSession } from '../session.js'
import { Ago, ErrorNote, Field, Page, SelectField, useLoad } from '../ui.js'

const PAGE_SIZE = 50

interface Filter {
  actorId: string
  action: string
  /** datetime-local values (the browser's time zone). */
  from: string
  to: string
}
const NO_FILTER: Filter = { actorId: '', action: '', from: '', to: '' }

type Entry = Awaited<ReturnType<typeof loadPage>>['data'][number]

/** The API's query for a filter (times as UTC instants); an unreadable time is left out. */
function queryOf(f: Filter): Record<string, string> {
  const q: Record<string, string> = {}
  if (f.actorId) q.actorId = f.actorId
  if (f.action.trim()) q.action = f.action.trim()
  for (const k of ['from', 'to'] as const) {
    const ms = f[k] ? Date.parse(f[k]) : Number.NaN
    if (!Number.isNaN(ms)) q[k] = new Date(ms).toISOString()
  }
  return q
}

async function loadPage(f: Filter, cursor: string | null) {
  const r = await call(api.GET('/v1/audit-log', { params: { query: { ...queryOf(f), limit: String(PAGE_SIZE), ...(cursor ? { cursor } : {}) } } }))
  // The route also answers CSV (format=csv, not asked for here).
  if (!('data' in r)) throw new Error('The audit log answered no entries.')
  return r
}

const OUTCOMES: Record<string, string> = { success: 'done', denied: 'refused', failed: 'failed' }
const VIAS: Record<string, string> = {
  api: 'API',
  console: 'console',
  mcp: 'MCP',
  scim: 'SCIM',
  sso: 'single sign-on',
  cli: 'command line',
  device: 'device',
}
const BROKEN: Record<string, string> = {
  hash: 'the entry was changed after it was recorded',
  link: 'the entry does not follow the one before it',
  missing: 'entries before it were removed',
  head: 'entries after the last one were removed',
}

function actorText(a: Entry['actor']): string {
  if (a.kind === 'system') return 'the service'
  const kind = a.kind === 'apiKey' ? 'API key' : a.kind === 'anonymous' ? 'anonymous' : a.kind
  return a.name ? `${a.name} (${kind})` : a.id ? `${kind} ${a.id}` : kind
}

function resourceText(r: Entry['resource']): string {
  return r.name ? `${r.kind} “${r.name}”` : r.id ? `${r.kind} ${r.id}` : r.kind
}

function value(v: unknown): string {
  if (v === undefined || v === null) return '—'
  return typeof v === 'string' ? v : JSON.stringify(v)
}

export function AuditLog(): JSX.Element {
  const s = useSession()
  const [draft, setDraft] = useState<Filter>(NO_FILTER)
  const [filter, setFilter] = useState<Filter>(NO_FILTER)
  // The cursors of the pages before this one (Newer goes back), and this page's.
  const [back, setBack] = useState<(string | null)[]>([])
  const [cursor, setCursor] = useState<string | null>(null)
  const [open, setOpen] = useState<string | null>(null)
  // The page's number travels with its rows: while the next page loads, the table (rows and
  // caption alike) still shows the one before it.
  const entries = useLoad(async () => ({ ...(await loadPage(filter, cursor)), page: back.length + 1 }), [filter, cursor])
  const actors = useLoad(async () => {
    const users = s.can('user.view') ? (await call(api.GET('/v1/users', { params: { query: { limit: '500' } } }))).data : []
    const keys = s.can('api-key.view') ? (await call(api.GET('/v1/api-keys', { params: { query: { limit: '200' } } }))).data : []
    return [...users.map((u) => [u.id, `${u.name ?? u.email} (user)`] as const), ...keys.map((k) => [k.id, `${k.name} (API key)`] as const)]
  }, [])
  const [verify, setVerify] = useState<{ busy: boolean; text: string | null; ok: boolean; error: unknown }>({ busy: false, text: null, ok: true, error: null })

  function apply(e: Event): void {
    e.preventDefault()
    setFilter(draft)
    setBack([])
    setCursor(null)
    setOpen(null)
  }
  async function runVerify(): Promise<void> {
    setVerify({ busy: true, text: null, ok: true, error: null })
    try {
      const r = await call(api.GET('/v1/audit-log/verify'))
      const n = `${r.checked} ${r.checked === 1 ? 'entry' : 'entries'} checked`
      const text = r.ok
        ? `The chain is intact: ${n}.`
        : r.firstBroken
          ? `The chain is broken at entry #${r.firstBroken.seq}${r.firstBroken.id ? ` (${r.firstBroken.id})` : ''}: ${BROKEN[r.firstBroken.reason] ?? r.firstBroken.reason} (${n}).`
          : `The chain is broken (${n}).`
      setVerify({ busy: false, text, ok: r.ok, error: null })
    } catch (e) {
      setVerify({ busy: false, text: null, ok: true, error: e })
    }
  }
  const csv = `/v1/audit-log?${new URLSearchParams({ ...queryOf(filter), format: 'csv' })}`
  const seen = [...new Set((entries.data?.data ?? []).map((e) => e.action))].sort()
  return (
    <Page
      title="Audit log"
      actions={
        <>
          <button type="button" class="secondary" onClick={runVerify} disabled={verify.busy}>
            Verify chain
          </button>
          <a class="button secondary" href={csv} download="audit-log.csv">
            Download CSV
          </a>
        </>
      }
    >
      <p class="hint">
        Every change, sign-in and refused sign-in in this workspace, newest first. Entries are chained by hash: Verify chain checks none was altered.
      </p>
      {verify.text ? (
        <p class={verify.ok ? 'notice' : 'error'} role={verify.ok ? 'status' : 'alert'}>
          {verify.text}
        </p>
      ) : null}
      <ErrorNote error={verify.error} />
      <form class="form-box filters" onSubmit={apply} aria-label="Filter the audit log" noValidate>
        <SelectField
          label="Actor"
          name="audit-actor"
          value={draft.actorId}
          onInput={(v) => setDraft({ ...draft, actorId: v })}
          options={[['', 'Anyone'] as const, ...(actors.data ?? [])]}
        />
        <Field
          label="Action"
          name="audit-action"
          value={draft.action}
          onInput={(v) => setDraft({ ...draft, action: v })}
          hint="Such as playlist.update or session.create."
        />
        <div class="field">
          <label for="f-audit-from">From</label>
          <input
            id="f-audit-from"
            type="datetime-local"
            value={draft.from}
            onInput={(e) => setDraft({ ...draft, from: (e.currentTarget as HTMLInputElement).value })}
          />
        </div>
        <div class="field">
          <label for="f-audit-to">Until</label>
          <input
            id="f-audit-to"
            type="datetime-local"
            value={draft.to}
            onInput={(e) => setDraft({ ...draft, to: (e.currentTarget as HTMLInputElement).value })}
          />
        </div>
        <div class="row">
          <button type="submit">Apply</button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setDraft(NO_FILTER)
              setFilter(NO_FILTER)
              setBack([])
              setCursor(null)
            }}
          >
            Clear
          </button>
        </div>
        {seen.length ? (
          <p class="hint">
            Actions on this page:{' '}
            {seen.map((a, i) => (
              <Fragment key={a}>
                {i ? ', ' : ''}
                <code>{a}</code>
              </Fragment>
            ))}
          </p>
        ) : null}
      </form>
      <ErrorNote error={entries.error} />
      {entries.data ? (
        entries.data.data.length ? (
          <table class="audit">
            <caption>
              {entries.data.data.length === 1 ? '1 entry' : `${entries.data.data.length} entries`} on this page
              {entries.data.page > 1 ? ` (page ${entries.data.page})` : ''}
            </caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Actor</th>
                <th scope="col">Action</th>
                <th scope="col">Resource</th>
                <th scope="col">Via</th>
                <th scope="col">Outcome</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {entries.data.data.map((e) => (
                <Fragment key={e.id}>
                  <tr>
                    <td>
                      <Ago at={e.at} />
                    </td>
                    <td class="wrap-cell">{actorText(e.actor)}</td>
                    <td>
                      <code>{e.action}</code>
                    </td>
                    <td class="wrap-cell">{resourceText(e.resource)}</td>
                    <td>{VIAS[e.via] ?? e.via}</td>
                    <td>
                      <span class={`badge ${e.outcome === 'success' ? 'ok' : 'off'}`}>{OUTCOMES[e.outcome] ?? e.outcome}</span>
                    </td>
                    <td>
                      <button
                        type="button"
                        class="link"
                        aria-expanded={open === e.id}
                        aria-controls={`audit-${e.id}`}
                        aria-label={`Details of entry #${e.seq}`}
                        onClick={() => setOpen(open === e.id ? null : e.id)}
                      >
                        {open === e.id ? 'Hide' : 'Details'}
                      </button>
                    </td>
                  </tr>
                  {open === e.id ? (
                    <tr id={`audit-${e.id}`}>
                      <td colSpan={7}>
                        <EntryDetails entry={e} />
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              ))}
            </tbody>
          </table>
        ) : (
          <p>{back.length || Object.keys(queryOf(filter)).length ? 'No entries match.' : 'No entries yet.'}</p>
        )
      ) : null}
      <nav class="row" aria-label="Audit log pages">
        <button
          type="button"
          class="secondary"
          disabled={!back.length}
          onClick={() => {
            setCursor(back[back.length - 1] ?? null)
            setBack(back.slice(0, -1))
          }}
        >
          Newer
        </button>
        <button
          type="button"
          class="secondary"
          disabled={!entries.data?.nextCursor}
          onClick={() => {
            setBack([...back, cursor])
            setCursor(entries.data?.nextCursor ?? null)
          }}
        >
          Older
        </button>
      </nav>
    </Page>
  )
}

function EntryDetails(props: { entry: Entry }): JSX.Element {
  const e = props.entry
  return (
    <div class="audit-details">
      <dl class="facts">
        <dt>Entry</dt>
        <dd>
          #{e.seq} <code>{e.id}</code>
        </dd>
        <dt>Recorded</dt>
        <dd>{new Date(e.at).toLocaleString()}</dd>
        <dt>Actor</dt>
        <dd>
          {actorText(e.actor)}
          {e.actor.id ? (
            <>
              {' '}
              <code>{e.actor.id}</code>
            </>
          ) : null}
        </dd>
        <dt>Resource</dt>
        <dd>
          {resourceText(e.resource)}
          {e.resource.id && e.resource.name ? (
            <>
              {' '}
              <code>{e.resource.id}</code>
            </>
          ) : null}
        </dd>
        <dt>Request</dt>
        <dd>{e.requestId ? <code>{e.requestId}</code> : '—'}</dd>
        <dt>Address</dt>
        <dd>{e.ip ?? '—'}</dd>
        <dt>Hash</dt>
        <dd>
          <code class="wrap-cell">{e.hash}</code>
        </dd>
        <dt>Previous hash</dt>
        <dd>
          <code class="wrap-cell">{e.prevHash}</code>
        </dd>
      </dl>
      {e.changes.length ? (
        <table>
          <caption>Changes</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Before</th>
              <th scope="col">After</th>
            </tr>
          </thead>
          <tbody>
            {e.changes.map((c) => (
              <tr key={c.path}>
                <td>
                  <code>{c.path}</code>
                </td>
                <td class="wrap-cell">{value(c.before)}</td>
                <td class="wrap-cell">{value(c.after)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="hint">No field-level changes recorded.</p>
      )}
    </div>
  )
}
