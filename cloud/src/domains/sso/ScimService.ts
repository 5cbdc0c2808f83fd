// SCIM 2.0 provisioning (RFC 7643/7644): an identity provider creates, changes, deactivates and
// removes the workspace's users, and maintains groups whose displayName maps to a role through
// the provider's roleMap (of several mapped groups the highest role wins; none: `defaultRole`).
//
// - The workspace's bearer token (`scim_<43>`) is shown once; only its SHA-256 is kept, found by
//   its first characters and compared in constant time. A new one replaces the old one.
// - A user is the workspace's user of that address (userName, or the primary e-mail when
//   userName is not an address); SCIM adds `externalId` and `active`. `active: false` (PUT or
//   PATCH) or DELETE ends the user's sessions at once; an inactive user signs in no way
//   (password, OIDC, SAML) until SCIM sets `active: true`.
// - Roles change only through groups (and at creation), never through a user's PUT or PATCH, so
//   matching an existing account (Okta's `userName eq`) never demotes it; the workspace's last
//   owner stays owner whatever the groups say (UserService.vouched).
// - Errors are SCIMs own (ScimError → the route's error handler answers RFC 7644 §3.12's shape).
import { parse as parseFilter, Tester, type Filter } from 'scim2-parse-filter'
import type { Clock, IdGenerator, RandomSource } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { isApiError } from '../../platform/errors.js'
import { hashSecret, randomToken, secretMatches } from '../../platform/secrets.js'
import type { UserService } from '../access/index.js'
import { ScimRepository, type ScimGroupRecord, type ScimUserRecord } from './ScimRepository.js'
import { mappedRole, type SsoService } from './SsoService.js'

export const SCIM_USER = 'urn:ietf:params:scim:schemas:core:2.0:User'
export const SCIM_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group'
export const SCIM_LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse'
export const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error'
export const SCIM_PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'
/** Most resources a list page holds (`count` above is lowered to it). */
export const SCIM_MAX_COUNT = 200
const TOKEN_LOOKUP = 16
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** An error in SCIM's own shape: `{schemas: [Error], status, scimType?, detail}`. */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    detail: string,
    readonly scimType?: 'invalidFilter' | 'uniqueness' | 'invalidValue' | 'invalidSyntax' | 'noTarget' | 'mutability' | 'invalidPath',
  ) {
    super(detail)
  }
  body(): Record<string, unknown> {
    return { schemas: [SCIM_ERROR], status: String(this.status), ...(this.scimType ? { scimType: this.scimType } : {}), detail: this.message }
  }
}

const notFound = (what: string) => new ScimError(404, `No ${what} with this id.`)
const invalid = (detail: string) => new ScimError(400, detail, 'invalidValue')

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null)

/** `true`, `"True"`, `"false"` (Entra sends strings) → a boolean. */
function bool(v: unknown, field: string): boolean {
  if (typeof v === 'boolean') return v
  if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true'
  throw invalid(`${field} must be a boolean.`)
}

export interface ScimPage {
  startIndex?: number | undefined
  count?: number | undefined
  filter?: string | undefined
}

/** A user row as the access domain answers it. */
type UserRow = NonNullable<Awaited<ReturnType<UserService['get']>>>

interface UserState {
  row: UserRow
  scim: ScimUserRecord | undefined
  groups: { id: string; name: string }[]
}

export class ScimService {
  private readonly repo: ScimRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly random: RandomSource | undefined,
    private readonly sso: Pick<SsoService, 'provider'>,
    private readonly users: Pick<UserService, 'allOf' | 'get' | 'byEmail' | 'vouched' | 'rename' | 'endSessions' | 'reactivated' | 'removeVouched'>,
  ) {
    this.repo = new ScimRepository(db.kysely)
  }

  // ——— the token ———

  /** A new token for the workspace (shown once; the old one stops working). */
  async newToken(workspaceId: string): Promise<{ token: string; createdAt: string }> {
    const token = `scim_${randomToken(43, this.random)}`
    const createdAt = this.clock.now().toISOString()
    await this.repo.putToken({ workspace_id: workspaceId, lookup: token.slice(0, TOKEN_LOOKUP), secret_hash: hashSecret(token), created_at: createdAt })
    return { token, createdAt }
  }

  tokenCreatedAt(workspaceId: string): Promise<string | null> {
    return this.repo.tokenCreatedAt(workspaceId)
  }

  deleteToken(workspaceId: string): Promise<boolean> {
    return this.repo.deleteToken(workspaceId)
  }

  /** The workspace a presented token is for, or null. */
  async workspaceOfToken(token: string): Promise<string | null> {
    if (!/^scim_[A-Za-z0-9]{43}$/.test(token)) return null
    const row = await this.repo.tokenByLookup(token.slice(0, TOKEN_LOOKUP))
    return row && secretMatches(token, row.secret_hash) ? row.workspace_id : null
  }

  // ——— users ———

  private userResource(s: UserState, base: string): Json {
    const u = s.row
    return {
      schemas: [SCIM_USER],
      id: u.id,
      ...(s.scim?.external_id ? { externalId: s.scim.external_id } : {}),
      userName: u.email,
      ...(u.name ? { name: { formatted: u.name }, displayName: u.name } : {}),
      emails: [{ value: u.email, type: 'work', primary: true }],
      active: s.scim ? Number(s.scim.active) === 1 : true,
      groups: s.groups.map((g) => ({ value: g.id, display: g.name, $ref: `${base}/Groups/${g.id}` })),
      meta: { resourceType: 'User', created: u.created_at, lastModified: s.scim?.updated_at ?? u.created_at, location: `${base}/Users/${u.id}` },
    }
  }

  private async states(workspaceId: string): Promise<UserState[]> {
    const [rows, scims, groups, members] = await Promise.all([
      this.users.allOf(workspaceId),
      this.repo.users(workspaceId),
      this.repo.groups(workspaceId),
      this.repo.members(workspaceId),
    ])
    const scimOf = new Map(scims.map((s) => [s.user_id, s]))
    const nameOf = new Map(groups.map((g) => [g.id, g.display_name]))
    const groupsOf = new Map<string, { id: string; name: string }[]>()
    for (const m of members) groupsOf.set(m.user_id, [...(groupsOf.get(m.user_id) ?? []), { id: m.group_id, name: nameOf.get(m.group_id)! }])
    return rows.map((row) => ({ row, scim: scimOf.get(row.id), groups: groupsOf.get(row.id) ?? [] }))
  }

  private async state(workspaceId: string, id: string): Promise<UserState> {
    const row = await this.users.get(workspaceId, id)
    if (!row) throw notFound('user')
    const groups = await this.repo.groups(workspaceId)
    const names = new Set(await this.repo.groupNamesOf(id))
    return { row, scim: await this.repo.user(id), groups: groups.filter((g) => names.has(g.display_name)).map((g) => ({ id: g.id, name: g.display_name })) }
  }

  async getUser(workspaceId: string, id: string, base: string): Promise<Json> {
    return this.userResource(await this.state(workspaceId, id), base)
  }

  async listUsers(workspaceId: string, q: ScimPage, base: string): Promise<Json> {
    const all = (await this.states(workspaceId)).map((s) => this.userResource(s, base))
    return listOf(all, q)
  }

  /** The address of a User body: userName when it is one, else the primary (or first) e-mail. */
  private static emailOf(body: Json): string {
    const userName = str(body.userName)
    if (userName && EMAIL.test(userName)) return userName.toLowerCase()
    const emails = Array.isArray(body.emails) ? body.emails.filter(isObject) : []
    const e = str((emails.find((x) => x.primary === true) ?? emails[0])?.value)
    if (e && EMAIL.test(e)) return e.toLowerCase()
    throw invalid('userName (or a primary e-mail) must be an e-mail address.')
  }

  private static nameOf(body: Json): string | null | undefined {
    const n = body.name
    if (isObject(n)) {
      const formatted = str(n.formatted) ?? ([str(n.givenName), str(n.familyName)].filter(Boolean).join(' ') || null)
      if (formatted) return formatted
    }
    const d = str(body.displayName)
    if (d) return d
    return body.name === undefined && body.displayName === undefined ? undefined : null
  }

  private async roleOf(workspaceId: string, groupNames: string[]) {
    const p = await this.sso.provider(workspaceId)
    return mappedRole(p ?? { defaultRole: 'viewer', roleMap: {} }, groupNames)
  }

  /** Sets the SCIM state; deactivation ends the user's sessions at once. */
  private async setState(workspaceId: string, userId: string, externalId: string | null | undefined, active: boolean | undefined): Promise<void> {
    const old = await this.repo.user(userId)
    const wasActive = old ? Number(old.active) === 1 : true
    const nowActive = active ?? wasActive
    await this.repo.putUser({
      user_id: userId,
      workspace_id: workspaceId,
      external_id: externalId === undefined ? (old?.external_id ?? null) : externalId,
      active: nowActive ? 1 : 0,
      updated_at: this.clock.now().toISOString(),
    })
    if (!nowActive) await this.users.endSessions(workspaceId, userId)
    else if (!wasActive) this.users.reactivated(userId)
  }

  async createUser(workspaceId: string, body: Json, base: string): Promise<Json> {
    const email = ScimService.emailOf(body)
    if (await this.users.byEmail(workspaceId, email)) throw new ScimError(409, `A user with userName ${email} already exists.`, 'uniqueness')
    const name = ScimService.nameOf(body) ?? null
    const user = await this.users.vouched(workspaceId, { email, name, role: await this.roleOf(workspaceId, []) })
    await this.setState(workspaceId, user.id, str(body.externalId), body.active === undefined ? true : bool(body.active, 'active'))
    return this.getUser(workspaceId, user.id, base)
  }

  async replaceUser(workspaceId: string, id: string, body: Json, base: string): Promise<Json> {
    const s = await this.state(workspaceId, id)
    const email = ScimService.emailOf(body)
    if (email !== s.row.email) throw new ScimError(400, 'userName cannot change: the e-mail address names the account.', 'mutability')
    const name = ScimService.nameOf(body)
    if (name !== undefined && name !== s.row.name) await this.users.rename(workspaceId, id, name)
    await this.setState(workspaceId, id, str(body.externalId), body.active === undefined ? true : bool(body.active, 'active'))
    return this.getUser(workspaceId, id, base)
  }

  async patchUser(workspaceId: string, id: string, body: Json, base: string): Promise<Json> {
    const s = await this.state(workspaceId, id)
    let name: string | null | undefined
    let active: boolean | undefined
    let externalId: string | null | undefined
    for (const op of operationsOf(body)) {
      const values: [string, unknown][] = op.path ? [[op.path, op.value]] : isObject(op.value) ? Object.entries(op.value) : []
      if (!op.path && !isObject(op.value)) throw new ScimError(400, 'An operation without a path takes an object value.', 'invalidSyntax')
      for (const [rawPath, value] of values) {
        const path = rawPath.toLowerCase().replace(`${SCIM_USER.toLowerCase()}:`, '')
        const v = op.op === 'remove' ? null : value
        if (path === 'active') active = op.op === 'remove' ? false : bool(v, 'active')
        else if (path === 'externalid') externalId = str(v)
        else if (path === 'displayname' || path === 'name.formatted') name = str(v)
        else if (path === 'name' && isObject(v)) name = ScimService.nameOf({ name: v }) ?? null
        else if (path === 'name.givenname' || path === 'name.familyname') {
          // Entra sends the parts one by one: the name becomes what they make with the other part.
          const parts = (name ?? s.row.name ?? '').split(' ')
          const given = path === 'name.givenname' ? str(v) : (parts[0] ?? null)
          const family = path === 'name.familyname' ? str(v) : parts.slice(1).join(' ') || null
          name = [given, family].filter(Boolean).join(' ') || null
        } else if (path === 'username' || path.startsWith('emails')) {
          const e = typeof v === 'string' ? v : Array.isArray(v) ? str((v.find((x) => isObject(x) && x.primary) ?? v[0])?.value) : null
          if (e && e.toLowerCase() !== s.row.email) throw new ScimError(400, 'userName cannot change: the e-mail address names the account.', 'mutability')
        }
        // Attributes the cloud does not keep (title, department, …) are accepted and not stored.
      }
    }
    if (name !== undefined && name !== s.row.name) await this.users.rename(workspaceId, id, name)
    if (active !== undefined || externalId !== undefined) await this.setState(workspaceId, id, externalId, active)
    return this.getUser(workspaceId, id, base)
  }

  async deleteUser(workspaceId: string, id: string): Promise<void> {
    await this.state(workspaceId, id)
    await this.users.endSessions(workspaceId, id)
    try {
      if (!(await this.users.removeVouched(workspaceId, id))) throw notFound('user')
    } catch (e) {
      if (isApiError(e) && e.code === 'conflict') throw new ScimError(409, e.message)
      throw e
    }
    await this.repo.forgetUser(id)
  }

  // ——— groups ———

  private async groupResource(g: ScimGroupRecord, base: string, members?: { user_id: string }[], emails?: Map<string, string>): Promise<Json> {
    const ms = members ?? (await this.repo.members(g.workspace_id)).filter((m) => (m as { group_id: string }).group_id === g.id)
    const mail = emails ?? new Map((await this.users.allOf(g.workspace_id)).map((u) => [u.id, u.email]))
    return {
      schemas: [SCIM_GROUP],
      id: g.id,
      displayName: g.display_name,
      ...(g.external_id ? { externalId: g.external_id } : {}),
      members: ms.map((m) => ({ value: m.user_id, display: mail.get(m.user_id) ?? null, $ref: `${base}/Users/${m.user_id}` })),
      meta: { resourceType: 'Group', created: g.created_at, lastModified: g.updated_at, location: `${base}/Groups/${g.id}` },
    }
  }

  async listGroups(workspaceId: string, q: ScimPage, base: string): Promise<Json> {
    const [groups, members, users] = await Promise.all([this.repo.groups(workspaceId), this.repo.members(workspaceId), this.users.allOf(workspaceId)])
    const mail = new Map(users.map((u) => [u.id, u.email]))
    const all: Json[] = []
    for (const g of groups)
      all.push(
        await this.groupResource(
          g,
          base,
          members.filter((m) => m.group_id === g.id),
          mail,
        ),
      )
    return listOf(all, q)
  }

  private async group(workspaceId: string, id: string): Promise<ScimGroupRecord> {
    const g = await this.repo.group(workspaceId, id)
    if (!g) throw notFound('group')
    return g
  }

  async getGroup(workspaceId: string, id: string, base: string): Promise<Json> {
    return this.groupResource(await this.group(workspaceId, id), base)
  }

  /** Member ids of a body's `members`: each must be a user of the workspace. */
  private async memberIds(workspaceId: string, members: unknown): Promise<string[]> {
    if (members === undefined || members === null) return []
    if (!Array.isArray(members)) throw invalid('members must be an array.')
    const out: string[] = []
    for (const m of members) {
      const id = isObject(m) ? str(m.value) : null
      if (!id) throw invalid('Each member needs a value (a user id).')
      if (!(await this.users.get(workspaceId, id))) throw new ScimError(404, `No user with id ${id}.`)
      out.push(id)
    }
    return [...new Set(out)]
  }

  /** Every user whose memberships changed gets the role their groups map to now. */
  private async remap(workspaceId: string, userIds: Iterable<string>): Promise<void> {
    for (const id of new Set(userIds)) {
      const u = await this.users.get(workspaceId, id)
      if (!u) continue
      await this.users.vouched(workspaceId, { email: u.email, name: u.name, role: await this.roleOf(workspaceId, await this.repo.groupNamesOf(id)) })
    }
  }

  async createGroup(workspaceId: string, body: Json, base: string): Promise<Json> {
    const displayName = str(body.displayName)
    if (!displayName) throw invalid('displayName is required.')
    if ((await this.repo.groups(workspaceId)).some((g) => g.display_name === displayName))
      throw new ScimError(409, `A group named ${displayName} already exists.`, 'uniqueness')
    const members = await this.memberIds(workspaceId, body.members)
    const now = this.clock.now().toISOString()
    const row: ScimGroupRecord = {
      id: this.ids.next('scimGroup'),
      workspace_id: workspaceId,
      display_name: displayName,
      external_id: str(body.externalId),
      created_at: now,
      updated_at: now,
    }
    await this.repo.insertGroup(row)
    await this.repo.addMembers(row.id, members)
    await this.remap(workspaceId, members)
    return this.getGroup(workspaceId, row.id, base)
  }

  async replaceGroup(workspaceId: string, id: string, body: Json, base: string): Promise<Json> {
    const g = await this.group(workspaceId, id)
    const displayName = str(body.displayName) ?? g.display_name
    const members = await this.memberIds(workspaceId, body.members)
    const before = (await this.repo.members(workspaceId)).filter((m) => m.group_id === id).map((m) => m.user_id)
    await this.repo.updateGroup(id, {
      display_name: displayName,
      external_id: str(body.externalId) ?? g.external_id,
      updated_at: this.clock.now().toISOString(),
    })
    await this.repo.removeMembers(id, 'all')
    await this.repo.addMembers(id, members)
    await this.remap(workspaceId, displayName !== g.display_name ? [...before, ...members] : symmetric(before, members))
    return this.getGroup(workspaceId, id, base)
  }

  async patchGroup(workspaceId: string, id: string, body: Json, base: string): Promise<Json> {
    const g = await this.group(workspaceId, id)
    const touched: string[] = []
    let renamed = false
    for (const op of operationsOf(body)) {
      const path = op.path?.toLowerCase() ?? null
      if (path === null) {
        if (!isObject(op.value)) throw new ScimError(400, 'An operation without a path takes an object value.', 'invalidSyntax')
        const dn = str(op.value.displayName)
        if (dn && dn !== g.display_name) {
          await this.repo.updateGroup(id, { display_name: dn, updated_at: this.clock.now().toISOString() })
          renamed = true
        }
        if (op.value.members !== undefined) {
          const ids = await this.memberIds(workspaceId, op.value.members)
          if (op.op === 'replace') await this.repo.removeMembers(id, 'all')
          await this.repo.addMembers(id, ids)
          touched.push(...ids)
        }
      } else if (path === 'displayname') {
        const dn = str(op.value)
        if (!dn) throw invalid('displayName is required.')
        await this.repo.updateGroup(id, { display_name: dn, updated_at: this.clock.now().toISOString() })
        renamed = true
      } else if (path === 'externalid') {
        await this.repo.updateGroup(id, { external_id: str(op.value), updated_at: this.clock.now().toISOString() })
      } else if (path === 'members') {
        const ids = op.op === 'remove' && (op.value === undefined || op.value === null) ? 'all' : await this.memberIds(workspaceId, op.value)
        const before = (await this.repo.members(workspaceId)).filter((m) => m.group_id === id).map((m) => m.user_id)
        if (op.op === 'remove') await this.repo.removeMembers(id, ids)
        else {
          if (op.op === 'replace') await this.repo.removeMembers(id, 'all')
          await this.repo.addMembers(id, ids as string[])
        }
        touched.push(...before, ...(ids === 'all' ? [] : ids))
      } else {
        // members[value eq "usr_…"]: the member the filter names (Okta's remove).
        const m = /^members\[value eq "([^"]+)"\]$/i.exec(op.path ?? '')
        if (!m || op.op !== 'remove') throw new ScimError(400, `Unsupported path: ${op.path}.`, 'invalidPath')
        await this.repo.removeMembers(id, [m[1]!])
        touched.push(m[1]!)
      }
    }
    if (renamed) touched.push(...(await this.repo.members(workspaceId)).filter((m) => m.group_id === id).map((m) => m.user_id))
    await this.remap(workspaceId, touched)
    return this.getGroup(workspaceId, id, base)
  }

  async deleteGroup(workspaceId: string, id: string): Promise<void> {
    await this.group(workspaceId, id)
    const members = (await this.repo.members(workspaceId)).filter((m) => m.group_id === id).map((m) => m.user_id)
    await this.repo.deleteGroup(id)
    await this.remap(workspaceId, members)
  }
}

function symmetric(a: string[], b: string[]): string[] {
  const A = new Set(a)
  const B = new Set(b)
  return [...a.filter((x) => !B.has(x)), ...b.filter((x) => !A.has(x))]
}

/** A PATCH body's operations, ops lower-cased (Entra sends `Replace`). */
function operationsOf(body: Json): { op: 'add' | 'remove' | 'replace'; path: string | null; value: unknown }[] {
  if (!Array.isArray(body.schemas) || !body.schemas.includes(SCIM_PATCH))
    throw new ScimError(400, `A PATCH body names the schema ${SCIM_PATCH}.`, 'invalidSyntax')
  const ops = body.Operations ?? body.operations
  if (!Array.isArray(ops) || ops.length === 0) throw new ScimError(400, 'Operations must be a non-empty array.', 'invalidSyntax')
  if (ops.length > 1000) throw new ScimError(400, 'At most 1000 operations.', 'invalidSyntax')
  return ops.map((o) => {
    if (!isObject(o)) throw new ScimError(400, 'Each operation is an object.', 'invalidSyntax')
    const op = typeof o.op === 'string' ? o.op.toLowerCase() : ''
    if (op !== 'add' && op !== 'remove' && op !== 'replace') throw new ScimError(400, `Unknown op: ${String(o.op)}.`, 'invalidSyntax')
    const path = typeof o.path === 'string' && o.path.trim() ? o.path.trim() : null
    if (op === 'remove' && path === null) throw new ScimError(400, 'A remove operation needs a path.', 'noTarget')
    return { op, path, value: o.value }
  })
}

/** The library's tester, comparing strings without regard to case (userName, e-mails and displayName are not case-exact). */
class CaselessTester extends Tester {
  private static low<T>(v: T): T {
    return (typeof v === 'string' ? v.toLowerCase() : v) as T
  }
  override eq(r: unknown, v: string | number | boolean | null): boolean {
    return super.eq(CaselessTester.low(r), CaselessTester.low(v))
  }
  override ne(r: unknown, v: string | number | boolean | null): boolean {
    return super.ne(CaselessTester.low(r), CaselessTester.low(v))
  }
  override co(r: unknown, v: string | number | boolean | null): boolean {
    return super.co(CaselessTester.low(r), CaselessTester.low(v))
  }
  override sw(r: unknown, v: string | number | boolean | null): boolean {
    return super.sw(CaselessTester.low(r), CaselessTester.low(v))
  }
  override ew(r: unknown, v: string | number | boolean | null): boolean {
    return super.ew(CaselessTester.low(r), CaselessTester.low(v))
  }
}
const caseless = new CaselessTester()

/** A filtered page of `all` (RFC 7644 §3.4.2: startIndex is 1-based, count at most SCIM_MAX_COUNT). */
function listOf(all: Json[], q: ScimPage): Json {
  let f: Filter | null = null
  if (q.filter !== undefined && q.filter.trim() !== '') {
    try {
      f = parseFilter(q.filter)
    } catch (e) {
      throw new ScimError(400, `The filter cannot be read: ${(e as Error).message}.`, 'invalidFilter')
    }
  }
  const matching = f ? all.filter((r) => caseless.test(r, f)) : all
  const startIndex = Math.max(1, q.startIndex ?? 1)
  const count = Math.min(SCIM_MAX_COUNT, Math.max(0, q.count ?? 100))
  const page = matching.slice(startIndex - 1, startIndex - 1 + count)
  return { schemas: [SCIM_LIST], totalResults: matching.length, startIndex, itemsPerPage: page.length, Resources: page }
}
