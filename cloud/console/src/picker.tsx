// A content picker: a labelled combobox that searches the library by name through the API
// (`search`, a page at a time with the cursor and "Load more"), so any item is reachable
// however large the library. Typing an id (`pl_…`, `med_…`) still works: it is taken as is.
// Keyboard: type to search, Down/Up move through the matches, Enter picks, Escape closes.
import type { JSX } from 'preact'
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { ApiFailure } from './api.js'
import { facts, type Pictured, Thumb } from './thumb.js'

/** Where each content kind is listed (GET, paged, `search` by name). */
export const CONTENT_LISTS: Record<string, string> = {
  media: '/v1/media',
  playlist: '/v1/playlists',
  schedule: '/v1/schedules',
  creative: '/v1/creatives',
  layout: '/v1/layouts',
  signage: '/v1/signage-templates',
  app: '/v1/app-instances',
}

/** An id as the API makes them: a short prefix, an underscore, the rest. */
const ID_LIKE = /^[a-z]{2,5}_[A-Za-z0-9_-]+$/

export interface Named extends Pictured {
  id: string
  name: string
}

interface ListPage {
  data: ({ id: string; name?: string } & Pictured)[]
  nextCursor?: string | null
}

async function listPage(path: string, search: string, cursor: string | null, size: number): Promise<ListPage> {
  const qs = new URLSearchParams({ limit: String(size) })
  if (search) qs.set('search', search)
  if (cursor) qs.set('cursor', cursor)
  const r = await fetch(`${path}?${qs}`, { credentials: 'same-origin' })
  const body = (await r.json().catch(() => ({}))) as Record<string, unknown>
  if (!r.ok) throw new ApiFailure(r.status, String(body.error ?? 'error'), String(body.message ?? `HTTP ${r.status}`), body)
  return body as unknown as ListPage
}

export interface PickerProps {
  /** The input's id; the list's and options' ids derive from it. */
  id: string
  label: string
  /** A key of CONTENT_LISTS. */
  kind: string
  /** The chosen id ('' for none). */
  value: string
  /** The chosen item's name, when known. */
  name?: string | null
  /** The chosen id and name, and the item as the list answered it when it was picked from the list. */
  onChange: (id: string, name: string | null, item?: Named) => void
  error?: string | null
  /** How many a page (25). */
  pageSize?: number
}

export function ContentPicker(p: PickerProps): JSX.Element {
  const [text, setText] = useState(p.name ?? p.value)
  const [open, setOpen] = useState(false)
  const [items, setItems] = useState<Named[]>([])
  const [next, setNext] = useState<string | null>(null)
  /** How many of `items` are in the list: lists the API answers whole (playlists, schedules) are shown a page at a time too. */
  const [shown, setShown] = useState(0)
  const [active, setActive] = useState(-1)
  const [busy, setBusy] = useState(false)
  const [failed, setFailed] = useState<unknown>(null)
  const gen = useRef(0)
  const box = useRef<HTMLDivElement>(null)
  const path = CONTENT_LISTS[p.kind]
  const size = p.pageSize ?? 25
  const listId = `${p.id}-list`
  const optId = (i: number) => `${p.id}-opt-${i}`
  const query = ID_LIKE.test(text.trim()) || text === p.name ? '' : text.trim()

  // Another kind, or the value cleared from outside: start over. Both resets run as the
  // change renders (layout effects), not after the next paint: a key typed in between would
  // otherwise be wiped by a reset that still sees the value as it was before the typing.
  const first = useRef(true)
  useLayoutEffect(() => {
    if (first.current) {
      first.current = false
      return
    }
    setItems([])
    setNext(null)
    if (!p.value) setText('')
  }, [p.kind])
  // The form emptied after a submit: so does the field.
  const picked = useRef<string | null>(null)
  useLayoutEffect(() => {
    if (!p.value && picked.current !== null && text === picked.current) setText('')
    if (!p.value) picked.current = null
  }, [p.value])

  useEffect(() => {
    if (!open || !path) return
    const g = ++gen.current
    const timer = setTimeout(() => {
      setBusy(true)
      listPage(path, query, null, size).then(
        (r) => {
          if (g !== gen.current) return
          setItems(r.data.map((x) => ({ ...x, id: x.id, name: x.name ?? x.id })))
          setShown(Math.min(size, r.data.length))
          setNext(r.nextCursor ?? null)
          setActive(-1)
          setFailed(null)
          setBusy(false)
        },
        (e) => {
          if (g !== gen.current) return
          setFailed(e)
          setBusy(false)
        },
      )
    }, 200)
    return () => clearTimeout(timer)
  }, [open, path, query])

  useEffect(() => {
    if (active >= 0) document.getElementById(optId(active))?.scrollIntoView({ block: 'nearest' })
  }, [active])

  const loadMore = async () => {
    if (shown < items.length) {
      setShown((n) => Math.min(n + size, items.length))
      return
    }
    if (!path || !next) return
    const g = gen.current
    setBusy(true)
    try {
      const r = await listPage(path, query, next, size)
      if (g !== gen.current) return
      setItems((old) => [...old, ...r.data.map((x) => ({ ...x, id: x.id, name: x.name ?? x.id }))])
      setShown((n) => n + r.data.length)
      setNext(r.nextCursor ?? null)
    } catch (e) {
      setFailed(e)
    } finally {
      setBusy(false)
    }
  }

  const pick = (x: Named) => {
    picked.current = x.name
    setText(x.name)
    setOpen(false)
    setActive(-1)
    p.onChange(x.id, x.name, x)
  }

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'ArrowDown') {
      e.preventDefault()
      if (!open) setOpen(true)
      else setActive((a) => Math.min(a + 1, shown - 1))
    } else if (e.key === 'ArrowUp') {
      e.preventDefault()
      setActive((a) => Math.max(a - 1, 0))
    } else if (e.key === 'Enter' && open && active >= 0 && active < shown && items[active]) {
      e.preventDefault()
      pick(items[active]!)
    } else if (e.key === 'Escape' && open) {
      e.preventDefault()
      setOpen(false)
    }
  }

  const hintId = `${p.id}-hint`
  const errorId = `${p.id}-error`
  const shownList = open && shown > 0
  const more = shown < items.length || next !== null
  const status = busy
    ? 'Searching…'
    : failed
      ? failed instanceof ApiFailure && failed.status === 403
        ? `You may not list these: ${failed.message}`
        : `The list could not be read: ${(failed as Error).message}`
      : shown
        ? `${shown} shown${more ? '; Load more for the next' : ''}. Down arrow to choose.`
        : query
          ? `Nothing named like “${query}”.`
          : 'Nothing to choose from.'
  return (
    <div
      class={`field picker${p.error ? ' invalid' : ''}`}
      ref={box}
      onFocusOut={(e) => {
        const to = (e as FocusEvent).relatedTarget as Node | null
        if (!to || !box.current?.contains(to)) setOpen(false)
      }}
    >
      <label for={p.id}>{p.label}</label>
      <input
        id={p.id}
        name={p.id}
        type="text"
        role="combobox"
        autoComplete="off"
        placeholder={path ? 'Type a name to search, or an id' : 'An id'}
        aria-autocomplete="list"
        aria-expanded={shownList ? 'true' : 'false'}
        aria-controls={shownList ? listId : undefined}
        aria-activedescendant={shownList && active >= 0 ? optId(active) : undefined}
        aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={[hintId, p.error ? errorId : ''].filter(Boolean).join(' ')}
        value={text}
        onInput={(e) => {
          const v = (e.currentTarget as HTMLInputElement).value
          setText(v)
          // An id typed (or pasted) is the choice: no list over the form's buttons.
          const id = ID_LIKE.test(v.trim())
          setOpen(!id)
          p.onChange(id ? v.trim() : '', null)
        }}
        onClick={() => setOpen(true)}
        onKeyDown={onKeyDown}
      />
      <small id={hintId} class="hint">
        {p.value ? `Chosen: ${p.name ? `${p.name} (${p.value})` : p.value}` : path ? 'Nothing chosen yet.' : 'Type the id.'}
      </small>
      {open && path ? (
        <div class="picker-pop">
          {shownList ? (
            <div class="picker-list" role="listbox" id={listId} aria-label={`${p.label}: matches`}>
              {items.slice(0, shown).map((x, i) => (
                <div
                  key={x.id}
                  tabIndex={-1}
                  id={optId(i)}
                  role="option"
                  aria-selected={i === active ? 'true' : 'false'}
                  class={i === active ? 'picker-option active' : 'picker-option'}
                  onMouseDown={(e) => e.preventDefault()}
                  onClick={() => pick(x)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter') pick(x)
                  }}
                >
                  {p.kind === 'media' ? <Thumb item={x} /> : null} {x.name}{' '}
                  <span class="picker-id">
                    {facts(x) ? `${facts(x)} · ` : ''}
                    {x.id}
                  </span>
                </div>
              ))}
            </div>
          ) : null}
          <p class="picker-status" aria-live="polite">
            {status}
          </p>
          {more ? (
            <button type="button" class="secondary picker-more" onMouseDown={(e) => e.preventDefault()} onClick={loadMore} disabled={busy}>
              Load more
            </button>
          ) : null}
        </div>
      ) : null}
      {p.error ? (
        <small id={errorId} class="field-error">
          {p.error}
        </small>
      ) : null}
    </div>
  )
}
