// The rule builder of a dynamic group: conditions (a tag, a tag prefix, a name pattern, a
// location and below, a panel protocol, an agent version comparison, another group, "not"
// a condition, or a nested "all of"/"any of") edited as a tree, turned into the API's rule
// JSON, and an API refusal (`rule.all[1].agentVersion.lt: a version "x.y.z".`) shown next to
// the condition it names. While the operator edits, the rule is previewed (POST
// /v1/groups/preview, debounced, nothing stored): how many screens match and the first.
import type { JSX } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiFailure, api, call } from './api.js'
import type { GroupItem } from './groups.js'

export const KINDS = [
  ['tag', 'Has the tag'],
  ['tagPrefix', 'Has a tag starting with'],
  ['name', 'Name matches (* for any text)'],
  ['nodeId', 'Is at or under the location'],
  ['panelProtocol', 'Panel protocol is'],
  ['agentVersion', 'Agent version is'],
  ['group', 'Is a member of the group'],
  ['not', 'Not'],
  ['all', 'All of'],
  ['any', 'Any of'],
] as const
export type CondKind = (typeof KINDS)[number][0]
const OPS = [
  ['lt', 'older than'],
  ['lte', 'at most'],
  ['gt', 'newer than'],
  ['gte', 'at least'],
] as const
type Op = (typeof OPS)[number][0]

/** One condition of the tree being edited; `key` keeps the rows stable for Preact. */
export interface Cond {
  key: number
  kind: CondKind
  value: string
  op: Op
  children: Cond[]
}

let keys = 0
export function newCond(kind: CondKind = 'tag', children: Cond[] = []): Cond {
  return { key: ++keys, kind, value: '', op: 'gte', children }
}

/** The API's rule from the tree (the root is an all/any). */
export function toRule(c: Cond): unknown {
  switch (c.kind) {
    case 'all':
    case 'any':
      return { [c.kind]: c.children.map(toRule) }
    case 'not':
      return { not: c.children[0] ? toRule(c.children[0]) : {} }
    case 'agentVersion':
      return { agentVersion: { [c.op]: c.value.trim() } }
    default:
      return { [c.kind]: c.value.trim() }
  }
}

/** The tree from the API's rule (an unknown shape becomes an empty tag condition). */
export function fromRule(r: unknown): Cond {
  const o = (r ?? {}) as Record<string, unknown>
  const k = Object.keys(o)[0] as CondKind | undefined
  if (k === 'all' || k === 'any') return newCond(k, ((o[k] as unknown[]) ?? []).map(fromRule))
  if (k === 'not') return newCond('not', [fromRule(o.not)])
  if (k === 'agentVersion') {
    const v = (o.agentVersion ?? {}) as Record<string, string>
    const op = (Object.keys(v)[0] ?? 'gte') as Op
    return { ...newCond('agentVersion'), op, value: v[op] ?? '' }
  }
  if (k && KINDS.some(([x]) => x === k)) return { ...newCond(k), value: String(o[k] ?? '') }
  return newCond('tag')
}

/** Whether every condition has what it needs (an empty one is not previewed). */
export function complete(c: Cond): boolean {
  if (c.kind === 'all' || c.kind === 'any') return c.children.length > 0 && c.children.every(complete)
  if (c.kind === 'not') return !!c.children[0] && complete(c.children[0])
  return c.value.trim() !== ''
}

/** Where each condition is in the API's terms: the root `rule.all`, a child `rule.all[1]`, a not's `….not`. */
function paths(c: Cond, at: string, out: Map<string, number>): Map<string, number> {
  out.set(at, c.key)
  if (c.kind === 'all' || c.kind === 'any') c.children.forEach((x, i) => paths(x, `${at}.${c.kind}[${i}]`, out))
  if (c.kind === 'not' && c.children[0]) paths(c.children[0], `${at}.not`, out)
  return out
}

/** The condition an API message names (the deepest whose place starts it), or null for the rule as a whole. */
export function errorAt(root: Cond, message: string): number | null {
  const place = message.split(':')[0] ?? ''
  let best: [string, number] | null = null
  for (const [p, key] of paths(root, 'rule', new Map())) {
    if (p === 'rule') continue
    if ((place === p || place.startsWith(`${p}.`) || place.startsWith(`${p}[`)) && (!best || p.length > best[0].length)) best = [p, key]
  }
  // `rule.all: a list of at least one condition` names the root itself.
  if (!best && place === `rule.${root.kind}`) return root.key
  return best ? best[1] : null
}

function replace(c: Cond, key: number, next: Cond | null): Cond | null {
  if (c.key === key) return next
  const children = c.children.map((x) => replace(x, key, next)).filter((x): x is Cond => x !== null)
  return { ...c, children }
}

interface Ctx {
  nodes: { id: string; name: string }[]
  groups: GroupItem[]
  tags: string[]
  selfId: string | null
  error: { key: number | null; message: string } | null
  set: (key: number, next: Cond | null) => void
}

function CondRow(p: { c: Cond; ctx: Ctx; depth: number; label: string }): JSX.Element {
  const { c, ctx } = p
  const id = `cond-${c.key}`
  const err = ctx.error && ctx.error.key === c.key ? ctx.error.message : null
  const described = err ? `${id}-error` : undefined
  const update = (patch: Partial<Cond>) => ctx.set(c.key, { ...c, ...patch })
  const nested = c.kind === 'all' || c.kind === 'any'
  let input: JSX.Element | null = null
  const text = (label: string, placeholder: string, list?: string) => (
    <span class="cond-value">
      <label for={`${id}-value`} class="sr-only">
        {label}
      </label>
      <input
        id={`${id}-value`}
        value={c.value}
        placeholder={placeholder}
        list={list}
        aria-invalid={err ? 'true' : undefined}
        aria-describedby={described}
        onInput={(e) => update({ value: (e.currentTarget as HTMLInputElement).value })}
      />
    </span>
  )
  const select = (label: string, options: { id: string; name: string }[], none: string) => (
    <span class="cond-value">
      <label for={`${id}-value`} class="sr-only">
        {label}
      </label>
      <select
        id={`${id}-value`}
        value={c.value}
        aria-invalid={err ? 'true' : undefined}
        aria-describedby={described}
        onChange={(e) => update({ value: (e.currentTarget as HTMLSelectElement).value })}
      >
        <option value="">{none}</option>
        {options.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
          </option>
        ))}
      </select>
    </span>
  )
  if (c.kind === 'tag') input = text(`${p.label}: the tag`, 'floor:2', 'rule-tags')
  else if (c.kind === 'tagPrefix') input = text(`${p.label}: the beginning of a tag`, 'panel:', undefined)
  else if (c.kind === 'name') input = text(`${p.label}: the name pattern`, 'Lobby*', undefined)
  else if (c.kind === 'panelProtocol') input = text(`${p.label}: the panel protocol`, 'samsung-mdc', undefined)
  else if (c.kind === 'nodeId') input = select(`${p.label}: the location`, ctx.nodes, 'Choose a location')
  else if (c.kind === 'group')
    input = select(
      `${p.label}: the group`,
      ctx.groups.filter((g) => g.id !== ctx.selfId),
      'Choose a group',
    )
  else if (c.kind === 'agentVersion')
    input = (
      <>
        <span class="cond-value">
          <label for={`${id}-op`} class="sr-only">
            {p.label}: the comparison
          </label>
          <select id={`${id}-op`} value={c.op} onChange={(e) => update({ op: (e.currentTarget as HTMLSelectElement).value as Op })}>
            {OPS.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </span>
        {text(`${p.label}: the version`, '1.4.0', undefined)}
      </>
    )
  return (
    <li class={`cond${err ? ' invalid' : ''}`} data-cond={c.key}>
      <div class="row">
        <label for={`${id}-kind`} class="sr-only">
          {p.label}: what it checks
        </label>
        <select
          id={`${id}-kind`}
          value={c.kind}
          onChange={(e) => {
            const kind = (e.currentTarget as HTMLSelectElement).value as CondKind
            const kept = kind === 'all' || kind === 'any' ? (nested ? c.children : [newCond()]) : kind === 'not' ? [c.children[0] ?? newCond()] : []
            update({ kind, value: '', children: kept })
          }}
        >
          {KINDS.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
        {input}
        <button type="button" class="link" aria-label={`Remove ${p.label}`} onClick={() => ctx.set(c.key, null)}>
          Remove
        </button>
      </div>
      {err ? (
        <small id={`${id}-error`} class="field-error">
          {err}
        </small>
      ) : null}
      {c.kind === 'not' && c.children[0] ? (
        <ul class="conds">
          <CondRow c={c.children[0]} ctx={ctx} depth={p.depth + 1} label={`${p.label}, not`} />
        </ul>
      ) : null}
      {nested ? <CondList parent={c} ctx={ctx} depth={p.depth + 1} label={p.label} /> : null}
    </li>
  )
}

function CondList(p: { parent: Cond; ctx: Ctx; depth: number; label: string }): JSX.Element {
  const { parent, ctx } = p
  return (
    <div class="cond-list">
      <ul class="conds">
        {parent.children.map((c, i) => (
          <CondRow key={c.key} c={c} ctx={ctx} depth={p.depth} label={`${p.label ? `${p.label}, ` : ''}condition ${i + 1}`} />
        ))}
      </ul>
      <button type="button" class="secondary" onClick={() => ctx.set(parent.key, { ...parent, children: [...parent.children, newCond()] })}>
        {p.label ? `Add a condition to ${p.label}` : 'Add a condition'}
      </button>
    </div>
  )
}

/**
 * The builder: "Screens matching all/any of" the conditions, with the live preview below.
 * `error` is the API's refusal of the rule on save (shown next to the condition it names).
 */
export function RuleBuilder(p: {
  value: Cond
  onChange: (c: Cond) => void
  nodes: { id: string; name: string }[]
  groups: GroupItem[]
  tags: string[]
  selfId: string | null
  error: string | null
}): JSX.Element {
  const root = p.value
  const [preview, setPreview] = useState<{ count: number; screens: { id: string; name: string }[] } | null>(null)
  const [previewError, setPreviewError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const gen = useRef(0)
  const rule = JSON.stringify(toRule(root))
  const ready = complete(root)
  useEffect(() => {
    const g = ++gen.current
    if (!ready) {
      setBusy(false)
      return
    }
    setBusy(true)
    const timer = setTimeout(() => {
      call(api.POST('/v1/groups/preview', { body: { rule: JSON.parse(rule) } })).then(
        (r) => {
          if (g !== gen.current) return
          setPreview(r.data)
          setPreviewError(null)
          setBusy(false)
        },
        (e) => {
          if (g !== gen.current) return
          setPreview(null)
          setPreviewError(e instanceof ApiFailure ? e.message : String((e as Error).message))
          setBusy(false)
        },
      )
    }, 300)
    return () => clearTimeout(timer)
  }, [rule, ready])
  // The save's refusal is about the rule as it was saved: once the rule changes, the preview speaks.
  const savedWith = useRef<{ error: string | null; rule: string }>({ error: null, rule: '' })
  if (p.error !== savedWith.current.error) savedWith.current = { error: p.error, rule }
  const saveError = p.error && savedWith.current.rule === rule ? p.error : null
  const shownError = saveError ?? previewError
  const at = shownError ? errorAt(root, shownError) : null
  const ctx: Ctx = {
    nodes: p.nodes,
    groups: p.groups,
    tags: p.tags,
    selfId: p.selfId,
    error: shownError && at !== null && at !== root.key ? { key: at, message: shownError } : null,
    set: (key, next) => {
      if (key === root.key) {
        if (next) p.onChange(next)
        return
      }
      p.onChange(replace(root, key, next) ?? root)
    },
  }
  const rootError = shownError && (at === null || at === root.key) ? shownError : null
  const status = !ready
    ? 'Fill in each condition to see which screens it matches.'
    : busy
      ? 'Counting…'
      : previewError
        ? 'The rule cannot be used yet: see the condition marked.'
        : preview
          ? `${preview.count} ${preview.count === 1 ? 'screen matches' : 'screens match'} now.`
          : ''
  return (
    <fieldset class="rule-builder" aria-describedby={rootError ? 'rule-error' : undefined}>
      <legend class="legend">Rule</legend>
      <datalist id="rule-tags">
        {p.tags.map((t) => (
          <option key={t} value={t} />
        ))}
      </datalist>
      <div class="row">
        <label for="rule-match">Screens matching</label>
        <select
          id="rule-match"
          value={root.kind}
          onChange={(e) => p.onChange({ ...root, kind: (e.currentTarget as HTMLSelectElement).value as 'all' | 'any' })}
        >
          <option value="all">all of these conditions</option>
          <option value="any">any of these conditions</option>
        </select>
      </div>
      <CondList parent={root} ctx={ctx} depth={0} label="" />
      {rootError ? (
        <small id="rule-error" class="field-error">
          {rootError}
        </small>
      ) : null}
      <section class="preview" aria-labelledby="h-preview">
        <h3 id="h-preview">Who it matches</h3>
        <p class="preview-count" aria-live="polite">
          {status}
        </p>
        {ready && preview && !busy && !previewError && preview.screens.length ? (
          <ul class="preview-list" aria-label="The first screens it matches">
            {preview.screens.map((s) => (
              <li key={s.id}>{s.name}</li>
            ))}
            {preview.count > preview.screens.length ? <li class="hint">and {preview.count - preview.screens.length} more</li> : null}
          </ul>
        ) : null}
      </section>
    </fieldset>
  )
}
