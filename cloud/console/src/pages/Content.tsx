// The content library: media files (list, upload with a progress bar, delete) and playlists
// (list, create from media with durations, edit, delete). Only what the role may do is offered.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { ApiFailure, api, call, getCsrf } from '../api.js'
import { useLive } from '../live.js'
import { ContentPicker } from '../picker.js'
import { useSession } from '../session.js'
import { clock, facts, type Pictured, Thumb } from '../thumb.js'
import { Ago, ErrorNote, Field, FileField, Page, useLoad, useSubmit } from '../ui.js'

interface Media {
  id: string
  name: string
  kind: string
  mimeType: string
  sizeBytes: number
  createdAt: string
  recalledAt?: string | null
  thumbnailUrl?: string | null
  width?: number | null
  height?: number | null
  durationMs?: number | null
}
interface MediaPage {
  items: Media[]
  next: string | null
  total: number
}

/** A page of the library, newest first, with the count of all. */
async function mediaPage(cursor: string | null): Promise<MediaPage> {
  const got = await call(api.GET('/v1/media', { params: { query: { limit: '200', count: '1', ...(cursor ? { cursor } : {}) } } }))
  return { items: got.data as Media[], next: got.nextCursor ?? null, total: got.total ?? got.data.length }
}

interface Item {
  kind: 'media' | 'app' | 'creative'
  id: string
  durationMs?: number | null
}
interface Playlist {
  id: string
  name: string
  items?: Item[]
  createdAt: string
}

const UPLOAD_FIELDS = ['name', 'file'] as const
const PLAYLIST_FIELDS = ['name', 'items'] as const

export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}

/** POST /v1/media/upload as multipart through XMLHttpRequest, reporting upload progress (0–100). */
function upload(name: string, file: File, progress: (pct: number) => void): Promise<Media> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('POST', '/v1/media/upload')
    const csrf = getCsrf()
    if (csrf) xhr.setRequestHeader('x-svc-csrf', csrf)
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) progress(Math.round((e.loaded / e.total) * 100))
    }
    xhr.onload = () => {
      let body: Record<string, unknown> = {}
      try {
        body = JSON.parse(xhr.responseText) as Record<string, unknown>
      } catch {}
      if (xhr.status >= 200 && xhr.status < 300) {
        progress(100)
        resolve(body.data as Media)
      } else reject(new ApiFailure(xhr.status, String(body.error ?? 'error'), String(body.message ?? `HTTP ${xhr.status}`), body))
    }
    xhr.onerror = () => reject(new ApiFailure(0, 'network', 'The service did not answer.', {}))
    const form = new FormData()
    form.append('name', name)
    form.append('file', file)
    xhr.send(form)
  })
}

export function Content(): JSX.Element {
  const { can } = useSession()
  // Bumped when the library changes, so the playlist form offers what was just uploaded.
  const [mediaVersion, setMediaVersion] = useState(0)
  return (
    <Page title="Content">
      {can('media.view') ? <MediaLibrary onChange={() => setMediaVersion((n) => n + 1)} /> : null}
      {can('playlist.view') ? <Playlists mediaVersion={mediaVersion} /> : null}
    </Page>
  )
}

function MediaLibrary(props: { onChange: () => void }): JSX.Element {
  const { can } = useSession()
  const media = useLoad(() => mediaPage(null), [])
  const [deleteError, setDeleteError] = useState<unknown>(null)
  // A file recalled or restored elsewhere shows so without reloading.
  useLive((e) => {
    if (e.event === 'content.recalled' || e.event === 'content.restored') media.reload()
  })
  const more = async () => {
    const have = media.data
    if (!have?.next) return
    try {
      const got = await mediaPage(have.next)
      media.set({ items: [...have.items, ...got.items], next: got.next, total: got.total })
    } catch (e) {
      setDeleteError(e)
    }
  }
  const remove = async (m: Media) => {
    if (!confirm(`Delete ${m.name}?`)) return
    setDeleteError(null)
    try {
      await call(api.DELETE('/v1/media/{id}', { params: { path: { id: m.id } } }))
      media.reload()
      props.onChange()
    } catch (e) {
      setDeleteError(e)
    }
  }
  return (
    <section aria-labelledby="h-media">
      <h2 id="h-media">Media library</h2>
      {can('media.create') ? (
        <UploadForm
          onDone={() => {
            media.reload()
            props.onChange()
          }}
        />
      ) : null}
      <ErrorNote error={media.error ?? deleteError} />
      {media.data ? (
        <table class="list">
          <caption>
            {media.data.items.length < media.data.total ? `${media.data.items.length} of ` : ''}
            {media.data.total === 1 ? '1 file' : `${media.data.total} files`}
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Size</th>
              <th scope="col">Created</th>
              {can('media.delete') ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {media.data.items.map((m) => (
              <tr key={m.id}>
                <td>
                  <span class="with-thumb">
                    <Thumb item={m} />
                    <span>
                      {m.name}
                      {m.recalledAt ? <span class="badge off recalled">Recalled</span> : null}
                    </span>
                  </span>
                </td>
                <td>
                  {m.mimeType || m.kind}
                  {facts(m) ? <span class="media-facts">{facts(m)}</span> : null}
                </td>
                <td>{size(m.sizeBytes)}</td>
                <td>
                  <Ago at={m.createdAt} />
                </td>
                {can('media.delete') ? (
                  <td>
                    <button type="button" class="link" onClick={() => remove(m)} aria-label={`Delete ${m.name}`}>
                      Delete
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {media.data?.next ? (
        <button type="button" class="secondary" onClick={more}>
          Show more files
        </button>
      ) : null}
      {!media.data && media.loading ? <p class="loading">Loading…</p> : null}
    </section>
  )
}

function UploadForm(props: { onDone: () => void }): JSX.Element {
  const [name, setName] = useState('')
  const [file, setFile] = useState<File | null>(null)
  const [pct, setPct] = useState<number | null>(null)
  const { busy, fieldErrors, error, submit } = useSubmit(UPLOAD_FIELDS, async () => {
    if (!file) throw new ApiFailure(422, 'validation_error', 'file: choose a file to upload.', {})
    setPct(0)
    await upload(name || file.name, file, setPct)
    setName('')
    props.onDone()
  })
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="h-upload">
      <h3 id="h-upload" class="panel-title">
        Upload a file
      </h3>
      <FileField label="File" name="file" onPick={setFile} error={fieldErrors.file} />
      <Field label="Name" name="name" id="f-upload-name" value={name} onInput={setName} error={fieldErrors.name} hint="Empty: the file's name." />
      {pct !== null ? (
        <p class="progress-row">
          <label for="upload-progress">Upload progress</label>{' '}
          <progress id="upload-progress" max={100} value={pct}>
            {pct}%
          </progress>{' '}
          <span>{pct}%</span>
        </p>
      ) : null}
      <ErrorNote error={error} />
      <button type="submit" disabled={busy}>
        Upload
      </button>
    </form>
  )
}

function Playlists(props: { mediaVersion: number }): JSX.Element {
  const { can } = useSession()
  const lists = useLoad(async () => (await call(api.GET('/v1/playlists'))).data as unknown as Playlist[], [])
  const media = useLoad(
    async () => (can('media.view') ? ((await call(api.GET('/v1/media', { params: { query: { limit: '200' } } }))).data as Media[]) : []),
    [props.mediaVersion],
  )
  const [editing, setEditing] = useState<Playlist | 'new' | null>(null)
  const [deleteError, setDeleteError] = useState<unknown>(null)
  const remove = async (p: Playlist) => {
    if (!confirm(`Delete ${p.name}?`)) return
    setDeleteError(null)
    try {
      await call(api.DELETE('/v1/playlists/{id}', { params: { path: { id: p.id } } }))
      lists.reload()
    } catch (e) {
      setDeleteError(e)
    }
  }
  const edit = can('playlist.edit')
  return (
    <section aria-labelledby="h-playlists">
      <h2 id="h-playlists">Playlists</h2>
      {edit && editing === null ? (
        <button type="button" onClick={() => setEditing('new')}>
          New playlist
        </button>
      ) : null}
      {edit && editing !== null ? (
        <PlaylistForm
          playlist={editing === 'new' ? null : editing}
          media={media.data ?? []}
          onDone={() => {
            setEditing(null)
            lists.reload()
          }}
          onCancel={() => setEditing(null)}
        />
      ) : null}
      <ErrorNote error={lists.error ?? deleteError} />
      {lists.data ? (
        <table class="list">
          <caption>{lists.data.length === 1 ? '1 playlist' : `${lists.data.length} playlists`}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Items</th>
              <th scope="col">Created</th>
              {edit ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {lists.data.map((p) => (
              <tr key={p.id}>
                <td>{p.name}</td>
                <td>{p.items?.length ?? 0}</td>
                <td>
                  <Ago at={p.createdAt} />
                </td>
                {edit ? (
                  <td class="row-actions">
                    <button type="button" class="link" onClick={() => setEditing(p)} aria-label={`Edit ${p.name}`}>
                      Edit
                    </button>{' '}
                    <button type="button" class="link" onClick={() => remove(p)} aria-label={`Delete ${p.name}`}>
                      Delete
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : lists.loading ? (
        <p class="loading">Loading…</p>
      ) : null}
    </section>
  )
}

interface Row {
  id: string
  name: string | null
  seconds: string
  /** The picked file's picture and facts, for the row and the loop's preview. */
  item?: Pictured | undefined
}

/** Seconds an image (or any file without a length of its own) shows by default. */
const STILL_SECONDS = 10

/** The seconds a picked file plays by default: a video its own length, anything else STILL_SECONDS. */
function defaultSeconds(item: Pictured | undefined): string {
  return item?.kind === 'video' && item.durationMs ? String(Math.round(item.durationMs / 100) / 10) : String(STILL_SECONDS)
}

/** The API's complaint about one item (`body.items.2.id …`) in words, by row. */
function rowErrors(rows: Row[], message: string | undefined): (string | null)[] {
  const out = rows.map((r, i): string | null => (r.id.trim() ? null : `Choose a file for item ${i + 1}.`))
  const m = message ? /items\.(\d+)\.(\w+)/.exec(message) : null
  if (m) {
    const i = Number(m[1])
    if (i < out.length && !out[i])
      out[i] = m[2] === 'durationMs' ? `Item ${i + 1}: seconds must be a number of 0 or more.` : `Item ${i + 1}: choose a file from the library.`
  }
  return out
}

function PlaylistForm(props: { playlist: Playlist | null; media: Media[]; onDone: () => void; onCancel: () => void }): JSX.Element {
  const [name, setName] = useState(props.playlist?.name ?? '')
  const [rows, setRows] = useState<Row[]>(
    (props.playlist?.items ?? [])
      .filter((i) => i.kind === 'media')
      .map((i) => ({
        id: i.id,
        name: props.media.find((m) => m.id === i.id)?.name ?? null,
        seconds: i.durationMs ? String(i.durationMs / 1000) : '',
        item: props.media.find((m) => m.id === i.id),
      })),
  )
  const [tried, setTried] = useState(false)
  const [dragged, setDragged] = useState<number | null>(null)
  const { busy, fieldErrors, error, submit } = useSubmit(PLAYLIST_FIELDS, async () => {
    setTried(true)
    // An item without a file is named beside its picker (in words), not sent.
    if (rows.some((r) => !r.id.trim())) return
    const items = rows.map((r) => ({ kind: 'media' as const, id: r.id, durationMs: r.seconds.trim() ? Math.round(Number(r.seconds) * 1000) : null }))
    if (props.playlist) await call(api.PATCH('/v1/playlists/{id}', { params: { path: { id: props.playlist.id } }, body: { name, items } }))
    else await call(api.POST('/v1/playlists', { body: { name, items } }))
    props.onDone()
  })
  const set = (i: number, r: Partial<Row>) => setRows((all) => all.map((x, j) => (j === i ? { ...x, ...r } : x)))
  /** Moves row `from` to position `to` (the buttons, the keyboard and a drop). */
  const move = (from: number, to: number) =>
    setRows((all) => {
      if (to < 0 || to >= all.length || from === to) return all
      const next = [...all]
      const [r] = next.splice(from, 1)
      next.splice(to, 0, r!)
      return next
    })
  const errors = tried || fieldErrors.items ? rowErrors(rows, fieldErrors.items) : rows.map(() => null)
  const loopMs = rows.reduce((n, r) => n + (Number(r.seconds) > 0 ? Number(r.seconds) * 1000 : (r.item?.durationMs ?? STILL_SECONDS * 1000)), 0)
  const title = props.playlist ? `Edit ${props.playlist.name}` : 'New playlist'
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="h-playlist-form">
      <h3 id="h-playlist-form" class="panel-title">
        {title}
      </h3>
      <Field label="Playlist name" name="name" id="f-playlist-name" value={name} onInput={setName} error={fieldErrors.name} />
      <fieldset class="items" aria-describedby={fieldErrors.items ? 'f-items-error' : undefined}>
        <legend>Items, played in this order</legend>
        {rows.length === 0 ? <p class="hint">No items yet.</p> : null}
        <ol class="item-rows">
          {rows.map((r, i) => (
            <li
              key={`${r.id}-${i}`}
              class={dragged === i ? 'item-row dragging' : 'item-row'}
              draggable
              onDragStart={(e) => {
                setDragged(i)
                e.dataTransfer?.setData('text/plain', String(i))
              }}
              onDragOver={(e) => e.preventDefault()}
              onDrop={(e) => {
                e.preventDefault()
                const from = Number(e.dataTransfer?.getData('text/plain') ?? dragged)
                if (Number.isInteger(from)) move(from, i)
                setDragged(null)
              }}
              onDragEnd={() => setDragged(null)}
              onKeyDown={(e) => {
                // Alt+Up / Alt+Down move the row the focus is in.
                if (!e.altKey || (e.key !== 'ArrowUp' && e.key !== 'ArrowDown')) return
                e.preventDefault()
                move(i, e.key === 'ArrowUp' ? i - 1 : i + 1)
              }}
            >
              <Thumb item={r.item ?? {}} />
              <ContentPicker
                id={`item-${i}`}
                label={`Media ${i + 1}`}
                kind="media"
                value={r.id}
                name={r.name}
                error={errors[i] ?? null}
                onChange={(id, name, item) => set(i, { id, name, item, ...(item ? { seconds: defaultSeconds(item) } : {}) })}
              />
              <label for={`dur-${i}`}>Seconds</label>
              <input
                id={`dur-${i}`}
                class="short"
                type="number"
                min="0"
                step="any"
                value={r.seconds}
                placeholder="own"
                onInput={(e) => set(i, { seconds: (e.currentTarget as HTMLInputElement).value })}
              />
              <button type="button" class="link" disabled={i === 0} onClick={() => move(i, i - 1)} aria-label={`Move item ${i + 1} up`}>
                Up
              </button>
              <button type="button" class="link" disabled={i === rows.length - 1} onClick={() => move(i, i + 1)} aria-label={`Move item ${i + 1} down`}>
                Down
              </button>
              <button type="button" class="link" onClick={() => setRows((all) => all.filter((_, j) => j !== i))} aria-label={`Remove item ${i + 1}`}>
                Remove
              </button>
            </li>
          ))}
        </ol>
        <button type="button" class="secondary" onClick={() => setRows((all) => [...all, { id: '', name: null, seconds: '' }])}>
          Add media
        </button>
        <p class="hint">
          Drag an item, use Up and Down, or Alt+Up and Alt+Down in its row, to change the order. Empty seconds: a video plays its length, a picture{' '}
          {STILL_SECONDS} s.
        </p>
        {rows.length ? (
          <section class="loop-preview" aria-label="The loop">
            <p>
              The loop: {rows.length === 1 ? '1 item' : `${rows.length} items`}, {clock(loopMs)}, then again from the first.
            </p>
            <ol class="loop-strip">
              {rows.map((r, i) => (
                <li key={`${r.id}-${i}`}>
                  <Thumb item={r.item ?? {}} />
                  <span>{r.name ?? 'no file yet'}</span>
                </li>
              ))}
            </ol>
          </section>
        ) : null}
        {props.media.length ? null : <p class="hint">Upload media first to add it here.</p>}
        {fieldErrors.items && !/items\.\d+\./.test(fieldErrors.items) ? (
          <small id="f-items-error" class="field-error">
            {fieldErrors.items}
          </small>
        ) : null}
      </fieldset>
      <ErrorNote error={error} />
      <div class="form-buttons">
        <button type="submit" disabled={busy}>
          {props.playlist ? 'Save playlist' : 'Create playlist'}
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}
