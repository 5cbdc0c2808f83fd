// Settings: users and roles (invite → the invite link shown once, change role, remove, a new
// link), API keys (create → the secret shown once, revoke), locations (the node tree: add,
// rename, delete, a used one's 409 in words), the workspace's account and agent updates
// (AgentUpdates.tsx: releases and rollouts). Each section is
// shown by the permission it needs; controls the role may not use are not offered.
import { Fragment, type JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { Link } from '../router.js'
import { useSession } from '../session.js'
import { AgentUpdates } from './AgentUpdates.js'
import { ROLES, type Role } from './settingsFrame.js'
import { Ago, ConfirmButton, ErrorNote, Field, Page, SecretOnce, SelectField, useLoad, useSubmit } from '../ui.js'

export function Settings(): JSX.Element {
  const s = useSession()
  const sections = [
    s.can('user.view') ? (['users', 'Users and roles'] as const) : null,
    s.can('api-key.view') ? (['keys', 'API keys'] as const) : null,
    s.can('node.view') ? (['locations', 'Locations'] as const) : null,
    s.can('account.view') ? (['workspace', 'Workspace'] as const) : null,
    s.can('screen.view') ? (['agent-updates', 'Agent updates'] as const) : null,
  ].filter((x) => x !== null)
  return (
    <Page title="Settings">
      {sections.length ? (
        <nav aria-label="Settings sections">
          <ul class="section-nav">
            {sections.map(([id, name]) => (
              <li key={id}>
                <a href={`#${id}`}>{name}</a>
              </li>
            ))}
            {s.can('user.manage') ? (
              <li>
                <Link to="/settings/sso">Single sign-on</Link>
              </li>
            ) : null}
          </ul>
        </nav>
      ) : (
        <p>Your role may not see any settings of this workspace.</p>
      )}
      {s.can('user.view') ? <Users /> : null}
      {s.can('api-key.view') ? <ApiKeys /> : null}
      {s.can('node.view') ? <Locations /> : null}
      {s.can('account.view') ? <Workspace /> : null}
      {s.can('screen.view') ? <AgentUpdates /> : null}
    </Page>
  )
}

const INVITE_FIELDS = ['email', 'name', 'role'] as const

/** "1 user", "2 users". */
function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`
}

/** Whether the invite mail left, in words (the outbox's state). */
function mailNote(mail: { state: string; error: string | null }): string {
  if (mail.state === 'sent') return 'It was also sent by email.'
  if (mail.state === 'failed') return `The invite email could not be sent (${mail.error ?? 'the mail server refused it'}): pass the link on yourself.`
  return 'No email was sent: this service has no mail server set up, so pass the link on yourself.'
}

function Users(): JSX.Element {
  const s = useSession()
  const users = useLoad(async () => (await call(api.GET('/v1/users', { params: { query: { limit: '200' } } }))).data, [])
  const [email, setEmail] = useState('')
  const [name, setName] = useState('')
  const [role, setRole] = useState<Role>('viewer')
  const [link, setLink] = useState<{ who: string; url: string; mail: { state: string; error: string | null } } | null>(null)
  const [rowError, setRowError] = useState<unknown>(null)
  const manage = s.can('user.manage')
  const invite = useSubmit(INVITE_FIELDS, async () => {
    const r = await call(api.POST('/v1/users', { body: { email, name: name || null, role } }))
    setLink({ who: r.data.email, url: new URL(r.data.inviteUrl, location.origin).href, mail: r.data.inviteMail })
    setEmail('')
    setName('')
    users.reload()
  })
  async function act(fn: () => Promise<unknown>): Promise<void> {
    setRowError(null)
    try {
      await fn()
      users.reload()
    } catch (e) {
      setRowError(e)
    }
  }
  return (
    <section aria-labelledby="users">
      <h2 id="users">Users and roles</h2>
      {link ? (
        <SecretOnce
          title={`Invite link for ${link.who}`}
          value={link.url}
          note={`${mailNote(link.mail)} Copy it now if you want to pass it on yourself: it is not shown again.`}
          onDismiss={() => setLink(null)}
        />
      ) : null}
      {manage ? (
        <form class="form-box" noValidate onSubmit={invite.submit} aria-label="Invite a user">
          <h3>Invite a user</h3>
          <Field label="Email" name="invite-email" type="email" value={email} onInput={setEmail} error={invite.fieldErrors.email} />
          <Field label="Name" name="invite-name" value={name} onInput={setName} error={invite.fieldErrors.name} />
          <SelectField label="Role" name="invite-role" value={role} onInput={(v) => setRole(v as Role)} options={ROLES} error={invite.fieldErrors.role} />
          <ErrorNote error={invite.error} />
          <button type="submit" disabled={invite.busy}>
            Invite
          </button>
        </form>
      ) : null}
      <ErrorNote error={users.error ?? rowError} />
      {users.data ? (
        <table>
          <caption>{count(users.data.length, 'user', 'users')}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Joined</th>
              <th scope="col">Last signed in</th>
              {manage ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {users.data.map((u) => (
              <tr key={u.id}>
                <td>{u.name ?? '—'}</td>
                <td>{u.email}</td>
                <td>
                  {manage && u.id !== s.user.id ? (
                    <select
                      aria-label={`Role of ${u.email}`}
                      value={u.role}
                      onChange={(e) =>
                        act(() =>
                          call(
                            api.PATCH('/v1/users/{id}', {
                              params: { path: { id: u.id } },
                              body: { role: (e.currentTarget as HTMLSelectElement).value as Role },
                            }),
                          ),
                        )
                      }
                    >
                      {ROLES.map(([v, l]) => (
                        <option key={v} value={v}>
                          {l}
                        </option>
                      ))}
                    </select>
                  ) : (
                    u.role
                  )}
                </td>
                <td>{u.joinedAt ? <Ago at={u.joinedAt} /> : 'invited'}</td>
                <td>{u.lastSignInAt ? <Ago at={u.lastSignInAt} /> : '—'}</td>
                {manage ? (
                  <td>
                    {u.id !== s.user.id ? (
                      <div class="row">
                        {!u.joinedAt ? (
                          <button
                            type="button"
                            class="secondary"
                            onClick={() =>
                              act(async () => {
                                const r = await call(api.POST('/v1/users/{id}/invite', { params: { path: { id: u.id } } }))
                                setLink({ who: u.email, url: new URL(r.data.inviteUrl, location.origin).href, mail: r.data.inviteMail })
                              })
                            }
                          >
                            New invite link
                          </button>
                        ) : null}
                        <ConfirmButton
                          label="Remove"
                          name={u.email}
                          onConfirm={() => act(() => call(api.DELETE('/v1/users/{id}', { params: { path: { id: u.id } } })))}
                        />
                      </div>
                    ) : (
                      'you'
                    )}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  )
}

const KEY_FIELDS = ['name', 'permissions', 'nodeId'] as const

interface NodeItem {
  id: string
  name: string
  kind: string
  path: string[]
}

/** The nodes in tree order, each with its full name ("Store 7 / Floor 1") and depth. */
function treeOrder<N extends NodeItem>(nodes: readonly N[]): { node: N; label: string; depth: number }[] {
  const byId = new Map(nodes.map((n) => [n.id, n]))
  return nodes
    .map((n) => {
      const ancestors = n.path.filter((id) => id !== n.id)
      return { node: n, label: [...ancestors.map((id) => byId.get(id)?.name ?? id), n.name].join(' / '), depth: ancestors.length }
    })
    .sort((a, b) => a.label.localeCompare(b.label))
}

function useNodes() {
  return useLoad(async () => (await call(api.GET('/v1/nodes', { params: { query: { limit: '500' } } }))).data, [])
}

function ApiKeys(): JSX.Element {
  const s = useSession()
  const keys = useLoad(async () => (await call(api.GET('/v1/api-keys', { params: { query: { limit: '200' } } }))).data, [])
  const nodes = useLoad(async () => (s.can('node.view') ? (await call(api.GET('/v1/nodes', { params: { query: { limit: '500' } } }))).data : []), [])
  const [name, setName] = useState('')
  const [all, setAll] = useState(true)
  const [perms, setPerms] = useState<Set<string>>(new Set())
  const [nodeId, setNodeId] = useState('')
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null)
  const [rowError, setRowError] = useState<unknown>(null)
  const create = useSubmit(KEY_FIELDS, async () => {
    const r = await call(api.POST('/v1/api-keys', { body: { name, permissions: all ? 'all' : [...perms], nodeId: nodeId || null } }))
    setSecret({ name: r.data.name, secret: r.data.secret })
    setName('')
    keys.reload()
  })
  return (
    <section aria-labelledby="keys">
      <h2 id="keys">API keys</h2>
      {secret ? (
        <SecretOnce
          title={`Secret of the key “${secret.name}”`}
          value={secret.secret}
          note="Copy it now: it will not be shown again. Send it as a bearer token (Authorization: Bearer …)."
          onDismiss={() => setSecret(null)}
        />
      ) : null}
      {s.can('api-key.create') ? (
        <form class="form-box" noValidate onSubmit={create.submit} aria-label="Create an API key">
          <h3>Create an API key</h3>
          <Field label="Name" name="key-name" value={name} onInput={setName} error={create.fieldErrors.name} />
          <fieldset class="checks" aria-describedby={create.fieldErrors.permissions ? 'key-perms-error' : undefined}>
            <legend class="checks-legend">Permissions</legend>
            <label>
              <input type="checkbox" checked={all} onChange={(e) => setAll((e.currentTarget as HTMLInputElement).checked)} /> All (as this workspace's roles
              allow)
            </label>
            {all
              ? null
              : [...s.permissions].sort().map((p) => (
                  <label key={p}>
                    <input
                      type="checkbox"
                      checked={perms.has(p)}
                      onChange={(e) => {
                        const next = new Set(perms)
                        if ((e.currentTarget as HTMLInputElement).checked) next.add(p)
                        else next.delete(p)
                        setPerms(next)
                      }}
                    />{' '}
                    {p}
                  </label>
                ))}
            {create.fieldErrors.permissions ? (
              <small id="key-perms-error" class="field-error">
                {create.fieldErrors.permissions}
              </small>
            ) : null}
          </fieldset>
          <SelectField
            label="Location (optional: the key only reaches what is under it)"
            name="key-node"
            value={nodeId}
            onInput={setNodeId}
            options={[['', 'The whole workspace'] as const, ...treeOrder(nodes.data ?? []).map((n) => [n.node.id, n.label] as const)]}
            error={create.fieldErrors.nodeId}
          />
          <ErrorNote error={create.error} />
          <button type="submit" disabled={create.busy}>
            Create key
          </button>
        </form>
      ) : null}
      <ErrorNote error={keys.error ?? rowError} />
      {keys.data ? (
        <table>
          <caption>{count(keys.data.length, 'API key', 'API keys')}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Permissions</th>
              <th scope="col">Last used</th>
              <th scope="col">State</th>
              {s.can('api-key.revoke') ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {keys.data.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td>
                  <code>{k.preview}…</code>
                </td>
                <td class="wrap-cell">{k.permissions === 'all' ? 'all' : k.permissions.join(', ')}</td>
                <td>
                  <Ago at={k.lastUsedAt} />
                </td>
                <td>{k.revokedAt ? 'revoked' : k.expired ? 'expired' : 'active'}</td>
                {s.can('api-key.revoke') ? (
                  <td>
                    {k.revokedAt ? null : (
                      <ConfirmButton
                        label="Revoke"
                        name={k.name}
                        onConfirm={async () => {
                          setRowError(null)
                          try {
                            await call(api.POST('/v1/api-keys/{id}/revoke', { params: { path: { id: k.id } } }))
                            keys.reload()
                          } catch (e) {
                            setRowError(e)
                          }
                        }}
                      />
                    )}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  )
}

const NODE_FIELDS = ['name', 'kind', 'parentId'] as const
const KINDS = [
  ['location', 'Location'],
  ['org_unit', 'Organisational unit'],
  ['screen_group', 'Screen group'],
] as const
type Kind = (typeof KINDS)[number][0]

function Locations(): JSX.Element {
  const s = useSession()
  const nodes = useNodes()
  const edit = s.can('node.edit')
  const [name, setName] = useState('')
  const [kind, setKind] = useState<Kind>('location')
  const [parentId, setParentId] = useState('')
  const [renaming, setRenaming] = useState<{ id: string; name: string } | null>(null)
  const [rowError, setRowError] = useState<unknown>(null)
  const add = useSubmit(NODE_FIELDS, async () => {
    await call(api.POST('/v1/nodes', { body: { name, kind, parentId: parentId || null } }))
    setName('')
    nodes.reload()
  })
  const rename = useSubmit(['name'], async () => {
    if (!renaming) return
    await call(api.PATCH('/v1/nodes/{id}', { params: { path: { id: renaming.id } }, body: { name: renaming.name } }))
    setRenaming(null)
    nodes.reload()
  })
  const sorted = treeOrder(nodes.data ?? [])
  return (
    <section aria-labelledby="locations">
      <h2 id="locations">Locations</h2>
      {edit ? (
        <form class="form-box" noValidate onSubmit={add.submit} aria-label="Add a location">
          <h3>Add a location</h3>
          <Field label="Name" name="node-name" value={name} onInput={setName} error={add.fieldErrors.name} />
          <SelectField label="Kind" name="node-kind" value={kind} onInput={(v) => setKind(v as Kind)} options={KINDS} error={add.fieldErrors.kind} />
          <SelectField
            label="Inside"
            name="node-parent"
            value={parentId}
            onInput={setParentId}
            options={[['', 'The workspace (top level)'] as const, ...sorted.map((n) => [n.node.id, n.label] as const)]}
            error={add.fieldErrors.parentId}
          />
          <ErrorNote error={add.error} />
          <button type="submit" disabled={add.busy}>
            Add
          </button>
        </form>
      ) : null}
      <ErrorNote error={nodes.error ?? rowError} />
      {nodes.data ? (
        nodes.data.length ? (
          <ul class="tree" aria-label="Locations">
            {sorted.map(({ node: n, depth }) => (
              <li key={n.id} class={`indent-${Math.min(depth, 3)}`}>
                {renaming?.id === n.id ? (
                  <form class="row" onSubmit={rename.submit} aria-label={`Rename ${n.name}`}>
                    <Field
                      label="New name"
                      name="rename"
                      value={renaming.name}
                      onInput={(v) => setRenaming({ id: n.id, name: v })}
                      error={rename.fieldErrors.name}
                    />
                    <button type="submit" disabled={rename.busy}>
                      Save
                    </button>
                    <button type="button" class="secondary" onClick={() => setRenaming(null)}>
                      Cancel
                    </button>
                    <ErrorNote error={rename.error} />
                  </form>
                ) : (
                  <div class="row">
                    <span>
                      {n.name} <small class="hint">({KINDS.find((k) => k[0] === n.kind)?.[1] ?? n.kind})</small>
                    </span>
                    {edit ? (
                      <>
                        <button type="button" class="link" aria-label={`Rename ${n.name}`} onClick={() => setRenaming({ id: n.id, name: n.name })}>
                          Rename
                        </button>
                        <ConfirmButton
                          label="Delete"
                          name={n.name}
                          onConfirm={async () => {
                            setRowError(null)
                            try {
                              await call(api.DELETE('/v1/nodes/{id}', { params: { path: { id: n.id } } }))
                              nodes.reload()
                            } catch (e) {
                              setRowError(e)
                            }
                          }}
                        />
                      </>
                    ) : null}
                  </div>
                )}
              </li>
            ))}
          </ul>
        ) : (
          <p>No locations yet.</p>
        )
      ) : null}
    </section>
  )
}

const STATUS: Record<string, string> = {
  active: 'active',
  cancel_scheduled: 'cancellation scheduled',
  paused: 'paused',
  past_due: 'payment overdue',
  suspended: 'suspended',
  cancelled: 'cancelled',
}
const REGIONS: Record<string, string> = { us: 'United States', eu: 'Europe', oc: 'Oceania', apac: 'Asia-Pacific' }

function date(v: unknown): string | null {
  return typeof v === 'string' && v ? new Date(v).toLocaleDateString() : null
}

/**
 * The workspace's facts in words, and billing only where the service bills this workspace:
 * a billing record (a subscription, a term, a trial, a payment) or a partner who bills it.
 */
function Workspace(): JSX.Element {
  const s = useSession()
  const account = useLoad(async () => (await call(api.GET('/v1/account'))).data as Record<string, unknown>, [])
  const a = account.data
  const billed =
    !!a &&
    (a.whiteLabel === true ||
      a.billingProvider !== 'svc' ||
      a.everPaid === true ||
      ['subscriptionStatus', 'cadence', 'contract', 'nextBillingAt', 'trialEndsAt', 'currentTermEndsAt', 'pauseUntil', 'cancelEffectiveAt'].some(
        (k) => a[k] !== null && a[k] !== undefined,
      ))
  const billable = typeof a?.billableScreens === 'number' ? a.billableScreens : null
  const licensed = typeof a?.licensedScreens === 'number' ? a.licensedScreens : null
  const prefs = (a?.prefs ?? {}) as { timezone?: string; locale?: string }
  const billingFacts: [string, string | null][] = a
    ? [
        ['Billed by', a.whiteLabel === true ? 'your partner' : a.billingProvider === 'svc' ? 'this service, by invoice' : 'card subscription'],
        ['Subscription', typeof a.subscriptionStatus === 'string' ? a.subscriptionStatus : null],
        ['Billing cycle', a.cadence === 'annual' ? 'yearly' : a.cadence === 'monthly' ? 'monthly' : null],
        ['Screens billed', billable === null ? null : count(billable, 'screen', 'screens')],
        ['Trial ends', date(a.trialEndsAt)],
        ['Next invoice', date(a.nextBillingAt)],
        ['Term ends', date(a.currentTermEndsAt)],
        ['Paused until', date(a.pauseUntil)],
        ['Cancels on', date(a.cancelEffectiveAt)],
      ]
    : []
  return (
    <section aria-labelledby="workspace">
      <h2 id="workspace">Workspace</h2>
      <dl class="facts">
        <dt>Name</dt>
        <dd>{s.workspace.name}</dd>
        <dt>Workspace id</dt>
        <dd>
          <code>{s.workspace.id}</code>
        </dd>
        {a ? (
          <>
            <dt>Status</dt>
            <dd>{STATUS[String(a.status)] ?? String(a.status)}</dd>
            <dt>Region</dt>
            <dd>{REGIONS[String(a.region)] ?? String(a.region)}</dd>
            <dt>Screens</dt>
            <dd>
              {billable === null ? '—' : count(billable, 'screen', 'screens')} in use{licensed === null ? '' : ` of ${licensed} licensed`}
            </dd>
            <dt>Time zone and language</dt>
            <dd>
              {prefs.timezone ?? 'UTC'}, {prefs.locale ?? 'en'}
            </dd>
          </>
        ) : null}
      </dl>
      <p class="hint">
        What you change here: people and their roles, API keys, locations, single sign-on and agent updates (the sections above and below). The name and region
        are set when the workspace is made.
      </p>
      {billed ? (
        <section aria-labelledby="billing">
          <h3 id="billing">Billing</h3>
          <dl class="facts">
            {billingFacts
              .filter(([, v]) => v !== null)
              .map(([k, v]) => (
                <Fragment key={k}>
                  <dt>{k}</dt>
                  <dd>{v}</dd>
                </Fragment>
              ))}
          </dl>
        </section>
      ) : null}
      <ErrorNote error={account.error} />
    </section>
  )
}
