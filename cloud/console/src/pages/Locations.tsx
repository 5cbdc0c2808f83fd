// Locations: the list (name, parent), and a location's page with its operating hours (the
// effective hours and where they come from, its own edited) and its approval policy (whether
// changes to content homed here wait for approval, inherited or its own, who decides).
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { Link } from '../router.js'
import { HoursEditor } from '../screenSettings.js'
import { useSession } from '../session.js'
import { ErrorNote, Page, useLoad, useSubmit } from '../ui.js'
import type { PageProps } from './types.js'

interface NodeItem {
  id: string
  name: string
  parentId?: string | null
}

export function Locations(): JSX.Element {
  const nodes = useLoad(async () => (await call(api.GET('/v1/nodes'))).data as NodeItem[], [])
  const name = new Map((nodes.data ?? []).map((n) => [n.id, n.name]))
  return (
    <Page title="Locations">
      <ErrorNote error={nodes.error} />
      {nodes.data ? (
        nodes.data.length ? (
          <table>
            <caption>
              {nodes.data.length} location{nodes.data.length === 1 ? '' : 's'}
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Inside</th>
              </tr>
            </thead>
            <tbody>
              {nodes.data.map((n) => (
                <tr key={n.id}>
                  <td>
                    <Link to={`/locations/${n.id}`}>{n.name}</Link>
                  </td>
                  <td>{n.parentId ? (name.get(n.parentId) ?? n.parentId) : 'Workspace'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p>No locations yet.</p>
        )
      ) : (
        <p>Loading…</p>
      )}
    </Page>
  )
}

interface Policy {
  required: boolean
  inheritFromParent: boolean
  escalateUpTiers: boolean
  approvers: string[]
  effective: { required: boolean; approvers: string[]; sourceNodeId: string | null }
}

function ApprovalPolicyForm(props: { id: string; canEdit: boolean }): JSX.Element {
  const s = useSession()
  const policy = useLoad(
    async () => (await call(api.GET('/v1/nodes/{id}/approval-policy', { params: { path: { id: props.id } } }))).data as unknown as Policy,
    [props.id],
  )
  const users = useLoad(
    async () =>
      s.can('user.view')
        ? ((await call(api.GET('/v1/users', { params: { query: { limit: '200' } } }))).data as { id: string; name: string | null; email: string }[])
        : [],
    [],
  )
  const nodes = useLoad(async () => (await call(api.GET('/v1/nodes'))).data as NodeItem[], [])
  if (policy.error) return <ErrorNote error={policy.error} />
  if (!policy.data) return <p>Loading…</p>
  const p = policy.data
  const who = (id: string) => {
    const u = users.data?.find((x) => x.id === id)
    return u ? (u.name ?? u.email) : id
  }
  const source = p.effective.sourceNodeId
  return (
    <div>
      <p class="effective-policy">
        In effect:{' '}
        {p.effective.required
          ? `changes to content homed here wait for approval by ${p.effective.approvers.map(who).join(', ') || 'an approver'}`
          : 'changes go live without approval'}{' '}
        (
        {source === null
          ? 'the default'
          : source === props.id
            ? "this location's own policy"
            : `from ${nodes.data?.find((n) => n.id === source)?.name ?? source}`}
        ).
      </p>
      {props.canEdit ? <PolicyForm key={JSON.stringify(p)} id={props.id} policy={p} users={users.data ?? []} onSaved={(x) => policy.set(x)} /> : null}
    </div>
  )
}

function PolicyForm(props: {
  id: string
  policy: Policy
  users: { id: string; name: string | null; email: string }[]
  onSaved: (p: Policy) => void
}): JSX.Element {
  const [inherit, setInherit] = useState(props.policy.inheritFromParent)
  const [required, setRequired] = useState(props.policy.required)
  const [escalate, setEscalate] = useState(props.policy.escalateUpTiers)
  const [approvers, setApprovers] = useState(props.policy.approvers)
  const [done, setDone] = useState<string | null>(null)
  const { busy, error, submit } = useSubmit([], async () => {
    setDone(null)
    const r = (
      await call(
        api.PUT('/v1/nodes/{id}/approval-policy', {
          params: { path: { id: props.id } },
          body: { inheritFromParent: inherit, required, escalateUpTiers: escalate, approvers } as never,
        }),
      )
    ).data as unknown as Policy
    setDone('Approval policy saved.')
    props.onSaved(r)
  })
  return (
    <form onSubmit={submit} noValidate>
      <label class="check-label">
        <input type="checkbox" checked={inherit} onChange={(e) => setInherit((e.currentTarget as HTMLInputElement).checked)} /> Use the parent location's policy
      </label>
      {inherit ? null : (
        <>
          <label class="check-label">
            <input type="checkbox" checked={required} onChange={(e) => setRequired((e.currentTarget as HTMLInputElement).checked)} /> Changes to content homed
            here wait for approval
          </label>
          <label class="check-label">
            <input type="checkbox" checked={escalate} onChange={(e) => setEscalate((e.currentTarget as HTMLInputElement).checked)} /> Then each parent location
            with approvers decides too
          </label>
          {props.users.length ? (
            <fieldset>
              <legend>Approvers</legend>
              {props.users.map((u) => (
                <label key={u.id} class="check-label">
                  <input
                    type="checkbox"
                    checked={approvers.includes(u.id)}
                    onChange={(e) => setApprovers((e.currentTarget as HTMLInputElement).checked ? [...approvers, u.id] : approvers.filter((x) => x !== u.id))}
                  />{' '}
                  {u.name ?? u.email}
                </label>
              ))}
            </fieldset>
          ) : null}
        </>
      )}
      <ErrorNote error={error} />
      <p aria-live="polite">{done}</p>
      <button type="submit" disabled={busy}>
        Save approval policy
      </button>
    </form>
  )
}

export function LocationPage(props: PageProps): JSX.Element {
  const id = props.params.id!
  const s = useSession()
  const node = useLoad(async () => (await call(api.GET('/v1/nodes/{id}', { params: { path: { id } } }))).data as NodeItem, [id])
  if (node.error)
    return (
      <Page title="Location">
        <ErrorNote error={node.error} />
        <Link to="/locations">Back to the locations</Link>
      </Page>
    )
  if (!node.data) return <p>Loading…</p>
  return (
    <Page title={node.data.name}>
      <section aria-labelledby="h-hours">
        <h2 id="h-hours">Operating hours</h2>
        <p>Screens here without hours of their own use these (and locations inside it without their own).</p>
        <HoursEditor kind="node" id={id} canEdit={s.can('node.edit')} />
      </section>
      <section aria-labelledby="h-approval">
        <h2 id="h-approval">Approval policy</h2>
        <ApprovalPolicyForm id={id} canEdit={s.can('approval.decide')} />
      </section>
    </Page>
  )
}
