// The console's small set of parts: a page frame, form fields that show the API's 422 next
// to the field it names, an error note (a 403 says what is missing, never a blank page),
// loading of API data, and the formats used across pages.
import type { ComponentChildren, JSX } from 'preact'
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { ApiFailure } from './api.js'

export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }): JSX.Element {
  useEffect(() => {
    document.title = `${props.title} · Signage console`
  }, [props.title])
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title">{props.title}</h1>
        {props.actions ? <div class="actions">{props.actions}</div> : null}
      </header>
      {props.children}
    </section>
  )
}

/** What went wrong, in words: the API's own message, a 403 naming the permission. */
export function ErrorNote(props: { error: unknown }): JSX.Element | null {
  const e = props.error
  if (!e) return null
  const text =
    e instanceof ApiFailure
      ? e.status === 403
        ? `You may not do this: ${e.message}`
        : e.status === 404
          ? `Not found: ${e.message}`
          : e.message
      : String((e as Error).message ?? e)
  return (
    <p class="error" role="alert">
      {text}
    </p>
  )
}

export interface FieldProps {
  label: string
  name: string
  /** The input's id when `f-<name>` would repeat one on the page. */
  id?: string
  value: string
  onInput: (v: string) => void
  type?: 'text' | 'email' | 'password' | 'search' | 'url'
  error?: string | null
  autoComplete?: string
  required?: boolean
  hint?: string
}

/** The ids of a field's hint and error, as its control's aria-describedby names them. */
function describedBy(id: string, hint?: string | null, error?: string | null): string | undefined {
  return [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined
}

/** A field's hint and the API's message for it, under the control. */
function FieldNotes(p: { id: string; hint?: string | null | undefined; error?: string | null | undefined }): JSX.Element {
  return (
    <>
      {p.hint ? (
        <small id={`${p.id}-hint`} class="hint">
          {p.hint}
        </small>
      ) : null}
      {p.error ? (
        <small id={`${p.id}-error`} class="field-error">
          {p.error}
        </small>
      ) : null}
    </>
  )
}

export function Field(p: FieldProps): JSX.Element {
  const id = p.id ?? `f-${p.name}`
  const described = describedBy(id, p.hint, p.error)
  return (
    <div class={`field${p.error ? ' invalid' : ''}`}>
      <label for={id}>{p.label}</label>
      <input
        id={id}
        name={p.name}
        type={(p.type ?? 'text') as 'text'}
        value={p.value}
        required={p.required}
        autoComplete={p.autoComplete}
        aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={described}
        onInput={(e) => p.onInput((e.currentTarget as HTMLInputElement).value)}
      />
      <FieldNotes id={id} hint={p.hint} error={p.error} />
    </div>
  )
}

/** A labelled control with the API's 422 next to it (the select/textarea sibling of `Field`). */
export function Shell(p: { id: string; label: string; error?: string | null; children: ComponentChildren }): JSX.Element {
  return (
    <div class={`field${p.error ? ' invalid' : ''}`}>
      <label for={p.id}>{p.label}</label>
      {p.children}
      {p.error ? (
        <small id={`${p.id}-error`} class="field-error">
          {p.error}
        </small>
      ) : null}
    </div>
  )
}

export function errProps(id: string, error?: string | null) {
  return { id, 'aria-invalid': error ? ('true' as const) : undefined, 'aria-describedby': error ? `${id}-error` : undefined }
}

/**
 * A form's submit: runs `action`, and on failure puts a 422 next to the field its message
 * names (one of `fields`), anything else above the button.
 */
export function useSubmit(fields: readonly string[], action: () => Promise<void>) {
  const [busy, setBusy] = useState(false)
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({})
  const [error, setError] = useState<unknown>(null)
  const submit = useCallback(
    async (e?: Event) => {
      e?.preventDefault()
      setBusy(true)
      setFieldErrors({})
      setError(null)
      try {
        await action()
      } catch (err) {
        const f = err instanceof ApiFailure ? err.field(fields) : null
        if (f) setFieldErrors({ [f]: (err as ApiFailure).message })
        else setError(err)
      } finally {
        setBusy(false)
      }
    },
    [action, fields],
  )
  return { busy, fieldErrors, error, submit }
}

/** API data for a component: loaded on mount and when `deps` change; `reload` loads again. */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
): { data: T | undefined; error: unknown; loading: boolean; reload: () => void; set: (v: T) => void } {
  const [data, setData] = useState<T | undefined>(undefined)
  const [error, setError] = useState<unknown>(null)
  const [loading, setLoading] = useState(true)
  const [n, setN] = useState(0)
  useEffect(() => {
    // Each load has its own flag: an answer to an earlier load (a reload asked for by a live
    // event while it was in flight) that arrives after a later one is dropped, not shown.
    let current = true
    setLoading(true)
    load().then(
      (v) => {
        if (!current) return
        setData(v)
        setError(null)
        setLoading(false)
      },
      (e) => {
        if (!current) return
        setError(e)
        setLoading(false)
      },
    )
    return () => {
      current = false
    }
  }, [...deps, n])
  return { data, error, loading, reload: () => setN((x) => x + 1), set: setData }
}

export function Status(props: { status: string }): JSX.Element {
  const online = props.status === 'online'
  return <span class={`badge ${online ? 'ok' : 'off'}`}>{online ? 'Online' : 'Offline'}</span>
}

const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })

/** "3 minutes ago" (with the exact time in a title), or "never". */
export function Ago(props: { at: string | null; now?: number }): JSX.Element {
  if (!props.at) return <span>never</span>
  const ms = Date.parse(props.at) - (props.now ?? Date.now())
  const abs = Math.abs(ms)
  const text =
    abs < 60_000
      ? rtf.format(Math.round(ms / 1000), 'second')
      : abs < 3_600_000
        ? rtf.format(Math.round(ms / 60_000), 'minute')
        : abs < 86_400_000
          ? rtf.format(Math.round(ms / 3_600_000), 'hour')
          : rtf.format(Math.round(ms / 86_400_000), 'day')
  return (
    <time dateTime={props.at} title={new Date(props.at).toLocaleString()}>
      {text}
    </time>
  )
}

/**
 * A secret shown once (an API key, a signing secret, an invite link): in a panel that says
 * it will not be shown again, with a copy button, until dismissed.
 */
export function SecretOnce(props: { title: string; value: string; note: string; onDismiss: () => void }): JSX.Element {
  const [copied, setCopied] = useState(false)
  return (
    <section class="secret" role="status" aria-label={props.title}>
      <h3 class="secret-title">{props.title}</h3>
      <p>{props.note}</p>
      <code class="secret-value">{props.value}</code>
      <div class="row">
        <button
          type="button"
          onClick={() =>
            navigator.clipboard?.writeText(props.value).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" class="secondary" onClick={props.onDismiss}>
          Done
        </button>
      </div>
    </section>
  )
}

/** A labelled file input with the API's refusal under it (as Field is for text). */
export function FileField(p: { label: string; name: string; accept?: string; onPick: (f: File | null) => void; error?: string | undefined }): JSX.Element {
  const id = `f-${p.name}`
  return (
    <div class={`field${p.error ? ' invalid' : ''}`}>
      <label for={id}>{p.label}</label>
      <input
        id={id}
        name={p.name}
        type="file"
        accept={p.accept}
        onChange={(e) => p.onPick((e.currentTarget as HTMLInputElement).files?.[0] ?? null)}
        aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={p.error ? `${id}-error` : undefined}
      />
      {p.error ? (
        <small id={`${id}-error`} class="field-error">
          {p.error}
        </small>
      ) : null}
    </div>
  )
}

/** A labelled select whose 422 shows next to it, like Field. */
export function SelectField(p: {
  label: string
  name: string
  value: string
  onInput: (v: string) => void
  options: readonly (readonly [string, string])[]
  error?: string | null
}): JSX.Element {
  const id = `f-${p.name}`
  return (
    <div class={`field${p.error ? ' invalid' : ''}`}>
      <label for={id}>{p.label}</label>
      <select
        id={id}
        name={p.name}
        value={p.value}
        aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={p.error ? `${id}-error` : undefined}
        onChange={(e) => p.onInput((e.currentTarget as HTMLSelectElement).value)}
      >
        {p.options.map(([v, l]) => (
          <option key={v} value={v}>
            {l}
          </option>
        ))}
      </select>
      {p.error ? (
        <small id={`${id}-error`} class="field-error">
          {p.error}
        </small>
      ) : null}
    </div>
  )
}

/** A destructive action asked twice: the button, then "Yes, …" (focused) and "Cancel". */
export function ConfirmButton(props: { label: string; name: string; onConfirm: () => void }): JSX.Element {
  const [asking, setAsking] = useState(false)
  const yes = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (asking) yes.current?.focus()
  }, [asking])
  if (!asking)
    return (
      <button type="button" class="danger" aria-label={`${props.label} ${props.name}`} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    )
  return (
    <span class="row">
      <button
        ref={yes}
        type="button"
        class="danger"
        aria-label={`Yes, ${props.label} ${props.name}`}
        onClick={() => {
          setAsking(false)
          props.onConfirm()
        }}
      >
        Yes, {props.label}
      </button>
      <button type="button" class="secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  )
}

/** A labelled textarea whose 422 shows next to it, like Field (a hint under it when given). */
export function TextArea(p: {
  label: string
  name: string
  value: string
  onInput: (v: string) => void
  rows?: number
  error?: string | null
  hint?: string
}): JSX.Element {
  const id = `f-${p.name}`
  const described = describedBy(id, p.hint, p.error)
  return (
    <div class={`field${p.error ? ' invalid' : ''}`}>
      <label for={id}>{p.label}</label>
      <textarea
        id={id}
        name={p.name}
        rows={p.rows ?? 3}
        value={p.value}
        aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={described}
        onInput={(e) => p.onInput((e.currentTarget as HTMLTextAreaElement).value)}
      />
      <FieldNotes id={id} hint={p.hint} error={p.error} />
    </div>
  )
}
