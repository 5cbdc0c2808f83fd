// Groups: named sets of screens beside the location tree. The list (name, kind, members now,
// home location; a name leads to the screens table filtered to the group); with screen.edit
// a group is created or edited — static (screens picked by name) or dynamic (a rule built
// condition by condition, its live member count and first members shown while editing) —
// and deleted after a confirmation. The API's refusals are shown next to what they name.
import type { JSX } from 'preact'
import { useEffect, useMemo, useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { type GroupItem, useTags } from '../groups.js'
import { Link } from '../router.js'
import { type Cond, fromRule, newCond, RuleBuilder, toRule } from '../rules.js'
import { useSession } from '../session.js'
import { ConfirmButton, ErrorNote, Field, Page, SelectField, useLoad, useSubmit } from '../ui.js'

const FIELDS = ['name', 'nodeId', 'kind', 'screenIds', 'rule'] as const

interface Draft {
  id: string | null
  name: string
  nodeId: string
  kind: 'static' | 'dynamic'
  screens: { id: string; name: string }[]
  rule: Cond
}

const emptyDraft = (): Draft => ({ id: null, name: '', nodeId: '', kind: 'dynamic', screens: [], rule: newCond('all', [newCond()]) })

/** A static group's screens: a search by name (the API's `q`), each found screen ticked in or out. */
function ScreenChooser(p: { value: { id: string; name: string }[]; onChange: (v: { id: string; name: string }[]) => void; error?: string | undefined }) {
  const [q, setQ] = useState('')
  const [found, setFound] = useState<{ id: string; name: string }[]>([])
  useEffect(() => {
    const t = setTimeout(() => {
      const query: Record<string, string> = { limit: '50' }
      if (q.trim()) query.q = q.trim()
      call(api.GET('/v1/screens', { params: { query: query as never } })).then(
        (r) => setFound((r as { data: { id: string; name: string }[] }).data),
        () => setFound([]),
      )
    }, 250)
    return () => clearTimeout(t)
  }, [q])
  const chosen = new Set(p.value.map((s) => s.id))
  const toggle = (s: { id: string; name: string }, on: boolean) => p.onChange(on ? [...p.value, s] : p.value.filter((x) => x.id !== s.id))
  return (
    <fieldset class="choices" aria-describedby={p.error ? 'group-screens-error' : undefined}>
      <legend class="legend">Screens ({p.value.length} chosen)</legend>
      <Field label="Find screens by name" name="group-screen-search" type="search" value={q} onInput={setQ} />
      <fieldset class="checks">
        <legend class="sr-only">Screens found</legend>
        {found.map((s) => (
          <label key={s.id} class="choice">
            <input type="checkbox" value={s.id} checked={chosen.has(s.id)} onChange={(e) => toggle(s, (e.currentTarget as HTMLInputElement).checked)} />{' '}
            {s.name}
          </label>
        ))}
      </fieldset>
      {p.value.length ? (
        <ul class="chosen-screens" aria-label="Chosen screens">
          {p.value.map((s) => (
            <li key={s.id}>
              {s.name}{' '}
              <button type="button" class="link" aria-label={`Take ${s.name} out`} onClick={() => toggle(s, false)}>
                Take out
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {p.error ? (
        <small id="group-screens-error" class="field-error">
          {p.error}
        </small>
      ) : null}
    </fieldset>
  )
}

function GroupForm(p: { draft: Draft; nodes: { id: string; name: string }[]; groups: GroupItem[]; onDone: () => void; onCancel: () => void }): JSX.Element {
  const [d, setD] = useState<Draft>(p.draft)
  const tags = useTags()
  const set = (patch: Partial<Draft>) => setD((x) => ({ ...x, ...patch }))
  const save = useSubmit(FIELDS, async () => {
    const body = {
      name: d.name,
      nodeId: d.nodeId || null,
      kind: d.kind,
      ...(d.kind === 'static' ? { screenIds: d.screens.map((s) => s.id) } : { rule: toRule(d.rule) as never }),
    }
    if (d.id) await call(api.PATCH('/v1/groups/{id}', { params: { path: { id: d.id } }, body }))
    else await call(api.POST('/v1/groups', { body }))
    p.onDone()
  })
  const title = d.id ? `Edit “${p.draft.name}”` : 'New group'
  return (
    <form class="form-box group-form" noValidate onSubmit={save.submit} aria-labelledby="h-group-form">
      <h2 id="h-group-form">{title}</h2>
      <Field label="Name" name="group-name" value={d.name} onInput={(v) => set({ name: v })} error={save.fieldErrors.name} />
      <SelectField
        label="Home location"
        name="group-node"
        value={d.nodeId}
        onInput={(v) => set({ nodeId: v })}
        options={[['', 'Workspace'] as const, ...p.nodes.map((n) => [n.id, n.name] as const)]}
        error={save.fieldErrors.nodeId}
      />
      <fieldset class="choices">
        <legend class="legend">Kind</legend>
        <label class="choice">
          <input type="radio" name="group-kind" value="dynamic" checked={d.kind === 'dynamic'} onChange={() => set({ kind: 'dynamic' })} /> Dynamic: the screens
          a rule matches, as they change
        </label>
        <label class="choice">
          <input type="radio" name="group-kind" value="static" checked={d.kind === 'static'} onChange={() => set({ kind: 'static' })} /> Static: screens picked
          one by one
        </label>
        {save.fieldErrors.kind ? <small class="field-error">{save.fieldErrors.kind}</small> : null}
      </fieldset>
      {d.kind === 'static' ? (
        <ScreenChooser value={d.screens} onChange={(screens) => set({ screens })} error={save.fieldErrors.screenIds} />
      ) : (
        <RuleBuilder
          value={d.rule}
          onChange={(rule) => set({ rule })}
          nodes={p.nodes}
          groups={p.groups}
          tags={tags.map((t) => t.tag)}
          selfId={d.id}
          error={save.fieldErrors.rule ?? null}
        />
      )}
      <ErrorNote error={save.error} />
      <div class="row">
        <button type="submit" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save group'}
        </button>
        <button type="button" class="secondary" onClick={p.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}

export function Groups(): JSX.Element {
  const s = useSession()
  const edit = s.can('screen.edit')
  const list = useLoad(async () => (await call(api.GET('/v1/groups'))).data as GroupItem[], [])
  const nodes = useLoad(async () => (await call(api.GET('/v1/nodes'))).data as { id: string; name: string }[], [])
  const nodeName = useMemo(() => new Map((nodes.data ?? []).map((n) => [n.id, n.name])), [nodes.data])
  const [draft, setDraft] = useState<Draft | null>(null)
  const [rowError, setRowError] = useState<unknown>(null)
  const [opening, setOpening] = useState<string | null>(null)
  const openEdit = async (g: GroupItem) => {
    setRowError(null)
    setOpening(g.id)
    try {
      // A static group's screens with their names (the group answers ids).
      const screens =
        g.kind === 'static' ? ((await call(api.GET('/v1/groups/{id}/members', { params: { path: { id: g.id } } }))).data as { id: string; name: string }[]) : []
      setDraft({
        id: g.id,
        name: g.name,
        nodeId: g.nodeId ?? '',
        kind: g.kind,
        screens: screens.map((x) => ({ id: x.id, name: x.name })),
        rule: g.kind === 'dynamic' ? fromRule(g.rule) : newCond('all', [newCond()]),
      })
    } catch (e) {
      setRowError(e)
    } finally {
      setOpening(null)
    }
  }
  const groups = list.data ?? []
  return (
    <Page
      title="Groups"
      actions={
        edit && !draft ? (
          <button type="button" onClick={() => setDraft(emptyDraft())}>
            New group
          </button>
        ) : null
      }
    >
      <p class="hint">
        A group is a named set of screens beside the locations: static (picked one by one) or dynamic (a rule on tags, names, locations, panels and agent
        versions, followed as the screens change). Casts, emergencies, bulk assignment, agent rollouts and alert rules can aim at one.
      </p>
      {draft ? (
        <GroupForm
          key={draft.id ?? 'new'}
          draft={draft}
          nodes={nodes.data ?? []}
          groups={groups}
          onCancel={() => setDraft(null)}
          onDone={() => {
            setDraft(null)
            list.reload()
          }}
        />
      ) : null}
      <ErrorNote error={list.error ?? rowError} />
      {list.data ? (
        list.data.length ? (
          <table class="list">
            <caption>
              {list.data.length} {list.data.length === 1 ? 'group' : 'groups'}
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Members</th>
                <th scope="col">Home</th>
                {edit ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {list.data.map((g) => (
                <tr key={g.id} data-group={g.id}>
                  <td>
                    <Link to={`/screens?group=${encodeURIComponent(g.id)}`}>{g.name}</Link>
                  </td>
                  <td>{g.kind}</td>
                  <td class="member-count">{g.memberCount}</td>
                  <td>{g.nodeId ? (nodeName.get(g.nodeId) ?? g.nodeId) : 'Workspace'}</td>
                  {edit ? (
                    <td>
                      <div class="row">
                        <button type="button" class="secondary" aria-label={`Edit ${g.name}`} disabled={opening === g.id} onClick={() => void openEdit(g)}>
                          Edit
                        </button>
                        <ConfirmButton
                          label="Delete"
                          name={g.name}
                          onConfirm={async () => {
                            setRowError(null)
                            try {
                              await call(api.DELETE('/v1/groups/{id}', { params: { path: { id: g.id } } }))
                              if (draft?.id === g.id) setDraft(null)
                              list.reload()
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
          <p>No groups yet.</p>
        )
      ) : list.loading ? (
        <p>Loading…</p>
      ) : null}
    </Page>
  )
}
