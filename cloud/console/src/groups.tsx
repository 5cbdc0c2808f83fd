// What every target form shares about tags and groups: the workspace's groups (GET
// /v1/groups) as a labelled select naming each group's member count, the tags in use (GET
// /v1/tags), tags typed as text (commas or spaces between them), and tags shown as badges.
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, call } from './api.js'
import { errProps, Shell } from './ui.js'

export interface GroupItem {
  id: string
  name: string
  nodeId: string | null
  kind: 'static' | 'dynamic'
  screenIds: string[] | null
  rule: unknown
  memberCount: number
}

/** The groups this credential sees, read once per form (null while reading). */
export function useGroups(enabled = true): GroupItem[] | null {
  const [groups, setGroups] = useState<GroupItem[] | null>(null)
  useEffect(() => {
    if (!enabled || groups) return
    call(api.GET('/v1/groups')).then(
      (r) => setGroups((r as { data: GroupItem[] }).data),
      () => setGroups([]),
    )
  }, [enabled])
  return groups
}

/** The tags in use with how many screens hold each. */
export function useTags(n = 0): { tag: string; count: number }[] {
  const [tags, setTags] = useState<{ tag: string; count: number }[]>([])
  useEffect(() => {
    call(api.GET('/v1/tags')).then(
      (r) => setTags(r.data),
      () => setTags([]),
    )
  }, [n])
  return tags
}

/** "a, b c" → ['a', 'b', 'c'] (the API checks each and stores it in lower case). */
export function parseTags(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean)
}

export function groupLabel(g: GroupItem): string {
  return `${g.name} (${g.memberCount} ${g.memberCount === 1 ? 'screen' : 'screens'}, ${g.kind})`
}

/** A labelled select of the groups; the API's 422 next to it. */
export function GroupSelect(p: {
  id: string
  label: string
  value: string
  onChange: (id: string) => void
  groups: GroupItem[] | null
  error?: string | null | undefined
}): JSX.Element {
  return (
    <Shell id={p.id} label={p.label} error={p.error ?? null}>
      <select {...errProps(p.id, p.error)} name={p.id} value={p.value} onChange={(e) => p.onChange((e.currentTarget as HTMLSelectElement).value)}>
        <option value="">{p.groups === null ? 'Loading the groups…' : p.groups.length ? 'Choose a group' : 'No groups yet (see Groups)'}</option>
        {(p.groups ?? []).map((g) => (
          <option key={g.id} value={g.id}>
            {groupLabel(g)}
          </option>
        ))}
      </select>
    </Shell>
  )
}

/** A screen's tags as badges ("none" without any). */
export function Tags(p: { tags: readonly string[] | undefined }): JSX.Element {
  if (!p.tags?.length) return <span class="hint">none</span>
  return (
    <span class="tags">
      {p.tags.map((t) => (
        <span key={t} class="badge tag">
          {t}
        </span>
      ))}
    </span>
  )
}

/**
 * A screen's tags, edited in place (PATCH /v1/screens/<id> with the whole list): each tag
 * with its Remove button, and a field that adds one or more. A refused tag is shown in
 * words under the field and nothing changes.
 */
export function TagEditor(p: { screenId: string; screenName: string; tags: readonly string[]; onSaved: (tags: string[]) => void }): JSX.Element {
  const [text, setText] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [done, setDone] = useState<string | null>(null)
  const id = `tags-${p.screenId}`
  const save = async (tags: string[], what: string) => {
    setBusy(true)
    setError(null)
    setDone(null)
    try {
      const r = await call(api.PATCH('/v1/screens/{id}', { params: { path: { id: p.screenId } }, body: { tags } }))
      p.onSaved((r.data as { tags?: string[] }).tags ?? tags)
      setDone(what)
      return true
    } catch (e) {
      setError((e as Error).message)
      return false
    } finally {
      setBusy(false)
    }
  }
  const add = async (e: Event) => {
    e.preventDefault()
    const more = parseTags(text)
    if (!more.length) {
      setError('Type a tag to add (letters, digits and -_.:/).')
      return
    }
    if (await save([...p.tags, ...more], `Added ${more.join(', ')}.`)) setText('')
  }
  return (
    <form class="tag-editor" onSubmit={add} noValidate aria-label={`Tags of ${p.screenName}`}>
      <ul class="tag-list">
        {p.tags.length ? (
          p.tags.map((t) => (
            <li key={t}>
              <span class="badge tag">{t}</span>{' '}
              <button
                type="button"
                class="link"
                disabled={busy}
                aria-label={`Remove tag ${t}`}
                onClick={() =>
                  save(
                    p.tags.filter((x) => x !== t),
                    `Removed ${t}.`,
                  )
                }
              >
                Remove
              </button>
            </li>
          ))
        ) : (
          <li class="hint">No tags.</li>
        )}
      </ul>
      <div class="row">
        <div class={`field${error ? ' invalid' : ''}`}>
          <label for={id}>Add tags</label>
          <input
            id={id}
            name="tags"
            value={text}
            placeholder="floor:2, format:kiosk"
            aria-invalid={error ? 'true' : undefined}
            aria-describedby={error ? `${id}-error` : `${id}-hint`}
            onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
          />
          {error ? (
            <small id={`${id}-error`} class="field-error">
              {error}
            </small>
          ) : (
            <small id={`${id}-hint`} class="hint">
              Commas or spaces between tags; stored in lower case.
            </small>
          )}
        </div>
        <button type="submit" disabled={busy}>
          Add
        </button>
      </div>
      <p aria-live="polite">{done}</p>
    </form>
  )
}
