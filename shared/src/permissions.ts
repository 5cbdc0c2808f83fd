// The complete permission catalogue. A credential holds a list of these or the
// single word `all` (every permission now and later). docs/permissions.md explains each.
export const PERMISSIONS = [
  'account.view',
  'account.edit',
  'api-key.view',
  'api-key.create',
  'api-key.revoke',
  'node.view',
  'node.edit',
  'screen.view',
  'screen.edit',
  'screen.cast',
  'screen.delete',
  'media.view',
  'media.create',
  'media.edit',
  'media.delete',
  'playlist.view',
  'playlist.edit',
  'schedule.view',
  'schedule.edit',
  'content.view',
  'content.edit',
  'content.recall',
  'emergency.view',
  'emergency.manage',
  'alert.view',
  'alert.edit',
  'approval.view',
  'approval.request',
  'approval.decide',
  'integration.view',
  'integration.edit',
  'user.view',
  'user.manage',
  'audit.view',
] as const

export type Permission = (typeof PERMISSIONS)[number]
export type PermissionGrant = readonly Permission[] | 'all'

const known = new Set<string>(PERMISSIONS)

export function isPermission(value: string): value is Permission {
  return known.has(value)
}

export function holds(grant: PermissionGrant, perm: Permission): boolean {
  return grant === 'all' || grant.includes(perm)
}

/** Every permission the grant stands for, sorted; `all` expands to the whole catalogue. */
export function expand(grant: PermissionGrant): Permission[] {
  return grant === 'all' ? [...PERMISSIONS] : [...new Set(grant)].sort()
}

/** Permissions of `wanted` that `holder` lacks (`all` wanted counts as the one missing word `all`). */
export function missingFrom(holder: PermissionGrant, wanted: PermissionGrant): string[] {
  if (holder === 'all') return []
  if (wanted === 'all') return ['all']
  return wanted.filter((p) => !holder.includes(p))
}

/** Roles of workspace users and what each holds. */
export const ROLE_PERMISSIONS = {
  owner: 'all',
  admin: 'all',
  editor: PERMISSIONS.filter(
    (p) => !p.startsWith('api-key.') && !p.startsWith('user.') && p !== 'account.edit' && p !== 'integration.edit' && p !== 'audit.view',
  ),
  viewer: PERMISSIONS.filter((p) => p.endsWith('.view') && p !== 'audit.view'),
} as const satisfies Record<string, PermissionGrant>

export type Role = keyof typeof ROLE_PERMISSIONS
export const ROLES = Object.keys(ROLE_PERMISSIONS) as Role[]
