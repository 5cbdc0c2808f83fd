// Alerts: the alert events (open and closed, newest first: screen, code, message, what to do
// next), the alert rules (created, edited, deleted with alert.edit; watching every screen or
// a group's members) and the webhooks
// (integration.view): endpoints, a new endpoint's signing secret shown once, an endpoint's
// delivery log with each attempt's status, "Send test" and "Replay" with integration.edit.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { GroupSelect, type GroupItem, useGroups } from '../groups.js'
import { useLive } from '../live.js'
import { Link } from '../router.js'
import { useSession } from '../session.js'
import { Ago, ConfirmButton, ErrorNote, Field, Page, SecretOnce, SelectField, useLoad, useSubmit } from '../ui.js'

const CODES = ['connection-lost', 'display-off', 'storage-critical', 'play-log-limited', 'drift', 'panel-not-obeying'] as const
const SEVERITIES = [
  ['info', 'Info'],
  ['warning', 'Warning'],
  ['critical', 'Critical'],
] as const

export function Alerts(): JSX.Element {
  const s = useSession()
  return (
    <Page title="Alerts">
      <nav aria-label="Alerts sections">
        <ul class="section-nav">
          <li>
            <a href="#events">Events</a>
          </li>
          <li>
            <a href="#rules">Rules</a>
          </li>
          {s.can('integration.view') ? (
            <li>
              <a href="#webhooks">Webhooks</a>
            </li>
          ) : null}
        </ul>
      </nav>
      <Events />
      <Rules />
      {s.can('integration.view') ? <Webhooks /> : null}
    </Page>
  )
}

function Events(): JSX.Element {
  const [state, setState] = useState('')
  const events = useLoad(
    async () => (await call(api.GET('/v1/alert-events', { params: { query: { limit: '100', ...(state ? { state } : {}) } } }))).data,
    [state],
  )
  useLive((e) => {
    if (e.event.startsWith('alert.')) events.reload()
  })
  const rows = [...(events.data ?? [])].sort((a, b) => b.openedAt.localeCompare(a.openedAt))
  return (
    <section aria-labelledby="events">
      <h2 id="events">Events</h2>
      <div class="filters">
        <SelectField
          label="Show"
          name="event-state"
          value={state}
          onInput={setState}
          options={[
            ['', 'Open and closed'],
            ['open', 'Open'],
            ['closed', 'Closed'],
          ]}
        />
      </div>
      <ErrorNote error={events.error} />
      {events.data ? (
        rows.length ? (
          <table>
            <caption>{rows.length} alert events, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Opened</th>
                <th scope="col">Screen</th>
                <th scope="col">Code</th>
                <th scope="col">Severity</th>
                <th scope="col">Message</th>
                <th scope="col">Next action</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((a) => (
                <tr key={a.id}>
                  <td>
                    <Ago at={a.openedAt} />
                  </td>
                  <td>
                    <Link to={`/screens/${a.screenId}`}>{a.screenName ?? a.screenId}</Link>
                  </td>
                  <td>{a.code}</td>
                  <td>
                    <span class={`badge ${a.severity === 'critical' ? 'off' : a.severity === 'warning' ? 'warn' : 'ok'}`}>{a.severity}</span>
                  </td>
                  <td class="wrap-cell">{a.message}</td>
                  <td class="wrap-cell">{a.nextAction}</td>
                  <td>
                    {a.closedAt ? (
                      <>
                        closed <Ago at={a.closedAt} />
                      </>
                    ) : (
                      <span class="badge warn">open</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p>No alert events.</p>
        )
      ) : null}
    </section>
  )
}

const RULE_FIELDS = ['name', 'config', 'codes', 'severity', 'enabled', 'recipients', 'thresholds', 'scopeId', 'scopeKind'] as const

interface RuleDraft {
  id: string | null
  name: string
  code: string
  severity: string
  minutes: string
  recipients: string
  enabled: boolean
  /** What it watches: `workspace` (every screen), `group` (a group's members, `scopeId` its id) or a kind set through the API, kept. */
  scopeKind: string
  scopeId: string
}

const EMPTY: RuleDraft = {
  id: null,
  name: '',
  code: 'connection-lost',
  severity: 'warning',
  minutes: '',
  recipients: '',
  enabled: true,
  scopeKind: 'workspace',
  scopeId: '',
}

/** What a rule watches, in words. */
function watches(kind: string | undefined, id: string | undefined, groups: GroupItem[] | null): string {
  if (!kind || kind === 'workspace') return 'every screen'
  if (kind === 'group') return `group ${groups?.find((g) => g.id === id)?.name ?? id}`
  return `${kind.replace('_', ' ')} ${id}`
}

function Rules(): JSX.Element {
  const s = useSession()
  const edit = s.can('alert.edit')
  const rules = useLoad(async () => (await call(api.GET('/v1/alert-rules', { params: { query: { limit: '200' } } }))).data, [])
  const [draft, setDraft] = useState<RuleDraft | null>(null)
  const [rowError, setRowError] = useState<unknown>(null)
  const groups = useGroups()
  const save = useSubmit(RULE_FIELDS, async () => {
    if (!draft) return
    const config: Record<string, unknown> = {
      codes: [draft.code],
      severity: draft.severity,
      recipients: draft.recipients
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    }
    if (draft.minutes) config.thresholds = { minutes: Number(draft.minutes) }
    config.scopeKind = draft.scopeKind
    if (draft.scopeKind !== 'workspace') config.scopeId = draft.scopeId
    if (draft.id)
      await call(api.PATCH('/v1/alert-rules/{id}', { params: { path: { id: draft.id } }, body: { name: draft.name, enabled: draft.enabled, config } }))
    else await call(api.POST('/v1/alert-rules', { body: { name: draft.name, enabled: draft.enabled, config } }))
    setDraft(null)
    rules.reload()
  })
  const set = (patch: Partial<RuleDraft>) => setDraft((d) => ({ ...(d ?? EMPTY), ...patch }))
  // `config.scopeId …` / `config.scopeKind …`: shown next to what the rule watches.
  const scopeError = /^config\.scope/.test(save.fieldErrors.config ?? '') ? save.fieldErrors.config : null
  return (
    <section aria-labelledby="rules">
      <h2 id="rules">Rules</h2>
      {edit && !draft ? (
        <button type="button" onClick={() => setDraft(EMPTY)}>
          New rule
        </button>
      ) : null}
      {edit && draft ? (
        <form class="form-box" noValidate onSubmit={save.submit} aria-label={draft.id ? 'Edit rule' : 'New rule'}>
          <h3>{draft.id ? `Edit “${draft.name}”` : 'New rule'}</h3>
          <Field label="Name" name="rule-name" value={draft.name} onInput={(v) => set({ name: v })} error={save.fieldErrors.name} />
          <SelectField
            label="When"
            name="rule-code"
            value={draft.code}
            onInput={(v) => set({ code: v })}
            options={CODES.map((c) => [c, c] as const)}
            error={save.fieldErrors.codes ?? (scopeError ? null : save.fieldErrors.config)}
          />
          <SelectField
            label="Severity"
            name="rule-severity"
            value={draft.severity}
            onInput={(v) => set({ severity: v })}
            options={SEVERITIES}
            error={save.fieldErrors.severity}
          />
          <SelectField
            label="Watch"
            name="rule-scope"
            value={draft.scopeKind}
            onInput={(v) => set({ scopeKind: v, scopeId: v === 'group' ? '' : draft.scopeId })}
            options={[
              ['workspace', 'Every screen'] as const,
              ['group', 'The screens of a group'] as const,
              ...(draft.scopeKind !== 'workspace' && draft.scopeKind !== 'group'
                ? [[draft.scopeKind, `${watches(draft.scopeKind, draft.scopeId, groups)} (as set through the API)`] as const]
                : []),
            ]}
            error={draft.scopeKind === 'group' ? null : (save.fieldErrors.scopeKind ?? scopeError)}
          />
          {draft.scopeKind === 'group' ? (
            <GroupSelect
              id="rule-group"
              label="Group"
              value={draft.scopeId}
              onChange={(v) => set({ scopeId: v })}
              groups={groups}
              error={save.fieldErrors.scopeId ?? scopeError}
            />
          ) : null}
          <Field
            label="After (minutes, optional)"
            name="rule-minutes"
            value={draft.minutes}
            onInput={(v) => set({ minutes: v })}
            error={save.fieldErrors.thresholds}
          />
          <Field
            label="Email recipients (comma separated, optional)"
            name="rule-recipients"
            value={draft.recipients}
            onInput={(v) => set({ recipients: v })}
            error={save.fieldErrors.recipients}
            hint="Addresses, or role:owner / role:admin"
          />
          <label class="row">
            <input type="checkbox" checked={draft.enabled} onChange={(e) => set({ enabled: (e.currentTarget as HTMLInputElement).checked })} /> Enabled
          </label>
          <ErrorNote error={save.error} />
          <div class="row">
            <button type="submit" disabled={save.busy}>
              Save rule
            </button>
            <button type="button" class="secondary" onClick={() => setDraft(null)}>
              Cancel
            </button>
          </div>
        </form>
      ) : null}
      <ErrorNote error={rules.error ?? rowError} />
      {rules.data ? (
        rules.data.length ? (
          <table>
            <caption>{rules.data.length} alert rules</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">When</th>
                <th scope="col">Severity</th>
                <th scope="col">Watches</th>
                <th scope="col">Enabled</th>
                {edit ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {rules.data.map((r) => (
                <tr key={r.id}>
                  <td>{r.name}</td>
                  <td>{(r.config.codes ?? [r.trigger]).join(', ')}</td>
                  <td>{r.config.severity}</td>
                  <td>{watches(r.config.scopeKind, r.config.scopeId, groups)}</td>
                  <td>{r.enabled ? 'yes' : 'no'}</td>
                  {edit ? (
                    <td>
                      <div class="row">
                        <button
                          type="button"
                          class="secondary"
                          aria-label={`Edit ${r.name}`}
                          onClick={() =>
                            setDraft({
                              id: r.id,
                              name: r.name,
                              code: r.config.codes?.[0] ?? r.trigger,
                              severity: r.config.severity ?? 'warning',
                              minutes: typeof r.config.thresholds?.minutes === 'number' ? String(r.config.thresholds.minutes) : '',
                              recipients: (r.config.recipients ?? []).join(', '),
                              enabled: r.enabled,
                              scopeKind: r.config.scopeKind ?? 'workspace',
                              scopeId: r.config.scopeKind === 'workspace' ? '' : (r.config.scopeId ?? ''),
                            })
                          }
                        >
                          Edit
                        </button>
                        <ConfirmButton
                          label="Delete"
                          name={r.name}
                          onConfirm={async () => {
                            setRowError(null)
                            try {
                              await call(api.DELETE('/v1/alert-rules/{id}', { params: { path: { id: r.id } } }))
                              rules.reload()
                            } catch (e) {
                              setRowError(e)
                            }
                          }}
                        />
                      </div>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p>No alert rules.</p>
        )
      ) : null}
    </section>
  )
}

const HOOK_FIELDS = ['url', 'events', 'description'] as const
const HOOK_EDIT_FIELDS = ['url', 'events', 'description', 'enabled'] as const

interface Hook {
  id: string
  url: string
  description: string | null
  events: string[]
  enabled: boolean
  autoDisabledAt: string | null
}

/** The events an endpoint is sent, as checkboxes (none: every event). */
function EventChecks(props: {
  prefix: string
  catalog: readonly { event: string; label: string; what: string }[]
  value: Set<string>
  onChange: (v: Set<string>) => void
  error?: string
}): JSX.Element {
  return (
    <fieldset class="checks" aria-describedby={props.error ? `${props.prefix}-events-error` : undefined}>
      <legend class="checks-legend">Events</legend>
      {props.catalog.map((e) => (
        <label key={e.event} title={e.what}>
          <input
            type="checkbox"
            name={`${props.prefix}-event`}
            value={e.event}
            checked={props.value.has(e.event)}
            onChange={(ev) => {
              const next = new Set(props.value)
              if ((ev.currentTarget as HTMLInputElement).checked) next.add(e.event)
              else next.delete(e.event)
              props.onChange(next)
            }}
          />{' '}
          {e.label}
        </label>
      ))}
      {props.error ? (
        <small id={`${props.prefix}-events-error`} class="field-error">
          {props.error}
        </small>
      ) : null}
    </fieldset>
  )
}

/** PATCH /v1/webhooks/{id}: URL, description, events, enabled (enabling also clears an automatic switch-off). */
function EditHook(props: {
  hook: Hook
  catalog: readonly { event: string; label: string; what: string }[]
  onDone: () => void
  onCancel: () => void
}): JSX.Element {
  const h = props.hook
  const [url, setUrl] = useState(h.url)
  const [description, setDescription] = useState(h.description ?? '')
  const [events, setEvents] = useState<Set<string>>(new Set(h.events))
  const [enabled, setEnabled] = useState(h.enabled && !h.autoDisabledAt)
  const save = useSubmit(HOOK_EDIT_FIELDS, async () => {
    await call(
      api.PATCH('/v1/webhooks/{id}', {
        params: { path: { id: h.id } },
        body: { url, description: description.trim() || null, events: [...events], enabled },
      }),
    )
    props.onDone()
  })
  return (
    <form class="form-box" noValidate onSubmit={save.submit} aria-labelledby="h-edit-hook">
      <h3 id="h-edit-hook">Edit {h.url}</h3>
      <Field label="URL (https)" name="url" id="edit-hook-url" type="url" value={url} onInput={setUrl} error={save.fieldErrors.url} />
      <Field
        label="Description"
        name="description"
        id="edit-hook-description"
        value={description}
        onInput={setDescription}
        error={save.fieldErrors.description}
      />
      <EventChecks prefix="edit-hook" catalog={props.catalog} value={events} onChange={setEvents} error={save.fieldErrors.events} />
      <div class={`field${save.fieldErrors.enabled ? ' invalid' : ''}`}>
        <label class="choice">
          <input id="edit-hook-enabled" type="checkbox" checked={enabled} onChange={(e) => setEnabled((e.currentTarget as HTMLInputElement).checked)} /> Enabled
          {h.autoDisabledAt ? ' (switched off after failures: ticking it switches it on again)' : ''}
        </label>
        {save.fieldErrors.enabled ? <small class="field-error">{save.fieldErrors.enabled}</small> : null}
      </div>
      <ErrorNote error={save.error} />
      <div class="row">
        <button type="submit" disabled={save.busy}>
          Save endpoint
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}

function Webhooks(): JSX.Element {
  const s = useSession()
  const edit = s.can('integration.edit')
  const hooks = useLoad(async () => (await call(api.GET('/v1/webhooks'))).data, [])
  const catalog = useLoad(async () => (await call(api.GET('/v1/webhooks/events'))).data, [])
  const [url, setUrl] = useState('')
  const [description, setDescription] = useState('')
  const [events, setEvents] = useState<Set<string>>(new Set())
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null)
  const [open, setOpen] = useState<string | null>(null)
  const [editing, setEditing] = useState<string | null>(null)
  const [saved, setSaved] = useState<string | null>(null)
  const create = useSubmit(HOOK_FIELDS, async () => {
    const r = await call(api.POST('/v1/webhooks', { body: { url, events: [...events], description: description || null } }))
    setSecret({ url: r.data.url, secret: r.data.secret })
    setUrl('')
    setDescription('')
    setEvents(new Set())
    hooks.reload()
  })
  return (
    <section aria-labelledby="webhooks">
      <h2 id="webhooks">Webhooks</h2>
      {secret ? (
        <SecretOnce
          title={`Signing secret of ${secret.url}`}
          value={secret.secret}
          note="Check each delivery's signature with it. Copy it now: it will not be shown again."
          onDismiss={() => setSecret(null)}
        />
      ) : null}
      {edit ? (
        <form class="form-box" noValidate onSubmit={create.submit} aria-label="Add a webhook endpoint">
          <h3>Add an endpoint</h3>
          <Field label="URL (https)" name="hook-url" type="url" value={url} onInput={setUrl} error={create.fieldErrors.url} />
          <Field label="Description" name="hook-description" value={description} onInput={setDescription} error={create.fieldErrors.description} />
          <EventChecks prefix="hook" catalog={catalog.data ?? []} value={events} onChange={setEvents} error={create.fieldErrors.events} />
          <ErrorNote error={create.error ?? catalog.error} />
          <button type="submit" disabled={create.busy}>
            Add endpoint
          </button>
        </form>
      ) : null}
      <ErrorNote error={hooks.error} />
      {edit && editing && hooks.data?.some((h) => h.id === editing) ? (
        <EditHook
          key={editing}
          hook={hooks.data.find((h) => h.id === editing)!}
          catalog={catalog.data ?? []}
          onCancel={() => setEditing(null)}
          onDone={() => {
            setSaved(`Saved ${hooks.data?.find((h) => h.id === editing)?.url ?? 'the endpoint'}.`)
            setEditing(null)
            hooks.reload()
          }}
        />
      ) : null}
      <p aria-live="polite">{saved}</p>
      {hooks.data ? (
        hooks.data.length ? (
          <table>
            <caption>{hooks.data.length} endpoints</caption>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">Last delivery</th>
                <th scope="col">State</th>
                <th scope="col">{edit ? 'Actions' : 'Deliveries'}</th>
              </tr>
            </thead>
            <tbody>
              {hooks.data.map((h) => (
                <tr key={h.id}>
                  <td>
                    {h.url}
                    {h.description ? <small class="hint"> — {h.description}</small> : null}
                  </td>
                  <td class="wrap-cell">{h.events.join(', ') || 'all'}</td>
                  <td>
                    {h.lastStatus ?? '—'} <Ago at={h.lastDeliveryAt} />
                  </td>
                  <td>{h.autoDisabledAt ? `disabled: ${h.autoDisabledReason ?? ''}` : h.enabled ? 'enabled' : 'disabled'}</td>
                  <td>
                    <button
                      type="button"
                      class="secondary"
                      aria-expanded={open === h.id ? 'true' : 'false'}
                      aria-label={`${open === h.id ? 'Hide log' : 'Delivery log'} of ${h.url}`}
                      onClick={() => setOpen(open === h.id ? null : h.id)}
                    >
                      {open === h.id ? 'Hide log' : 'Delivery log'}
                    </button>
                    {edit ? (
                      <>
                        {' '}
                        <button
                          type="button"
                          class="secondary"
                          aria-label={`Edit ${h.url}`}
                          onClick={() => {
                            setSaved(null)
                            setEditing(h.id)
                          }}
                        >
                          Edit
                        </button>
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p>No endpoints.</p>
        )
      ) : null}
      {open ? <Deliveries endpointId={open} url={hooks.data?.find((h) => h.id === open)?.url ?? open} edit={edit} onChange={hooks.reload} /> : null}
    </section>
  )
}

function Deliveries(props: { endpointId: string; url: string; edit: boolean; onChange: () => void }): JSX.Element {
  const log = useLoad(
    async () => (await call(api.GET('/v1/webhooks/deliveries', { params: { query: { endpointId: props.endpointId, limit: '50' } } }))).data,
    [props.endpointId],
  )
  const [note, setNote] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  async function run(what: string, p: Promise<{ ok: boolean; status: number | null; error: string | null }>): Promise<void> {
    setNote(null)
    setError(null)
    try {
      const r = await p
      setNote(`${what}: ${r.ok ? 'delivered' : 'failed'}${r.status ? ` (HTTP ${r.status})` : ''}${r.error ? ` — ${r.error}` : ''}`)
      log.reload()
      props.onChange()
    } catch (e) {
      setError(e)
    }
  }
  return (
    <section aria-labelledby="deliveries" class="form-box">
      <h3 id="deliveries">Delivery log of {props.url}</h3>
      {props.edit ? (
        <button
          type="button"
          onClick={() =>
            run(
              'Test',
              call(api.POST('/v1/webhooks/{id}/test', { params: { path: { id: props.endpointId } } })).then((r) => r.data),
            )
          }
        >
          Send test
        </button>
      ) : null}
      {note ? (
        <p role="status" class="hint">
          {note}
        </p>
      ) : null}
      <ErrorNote error={error ?? log.error} />
      {log.data ? (
        log.data.length ? (
          <table>
            <caption>{log.data.length} deliveries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Occurred</th>
                <th scope="col">Status</th>
                <th scope="col">HTTP</th>
                <th scope="col">Attempts</th>
                <th scope="col">Error</th>
                {props.edit ? <th scope="col">Replay</th> : null}
              </tr>
            </thead>
            <tbody>
              {log.data.map((d) => (
                <tr key={d.id} class="delivery">
                  <td>
                    {d.event}
                    {d.replayOf ? <small class="hint"> (replay)</small> : null}
                  </td>
                  <td>
                    <Ago at={d.occurredAt} />
                  </td>
                  <td>
                    <span class={`badge ${d.status === 'delivered' ? 'ok' : d.status === 'pending' ? 'warn' : 'off'}`}>{d.status}</span>
                  </td>
                  <td>{d.responseStatus ?? '—'}</td>
                  <td>{d.attempts}</td>
                  <td class="wrap-cell">{d.error ?? ''}</td>
                  {props.edit ? (
                    <td>
                      <button
                        type="button"
                        class="secondary"
                        aria-label={`Replay ${d.event} of ${d.occurredAt}`}
                        onClick={() =>
                          run(
                            'Replay',
                            call(api.POST('/v1/webhooks/deliveries/{id}/replay', { params: { path: { id: d.id } } })).then((r) => r.data),
                          )
                        }
                      >
                        Replay
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p>No deliveries yet.</p>
        )
      ) : null}
    </section>
  )
}
