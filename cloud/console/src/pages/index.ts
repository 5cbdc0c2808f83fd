// Every page of the console: its path (with :params), its name in the navigation, the
// permission it needs to be shown, and its component. A page added here is routed and,
// with `nav`, listed in the navigation in this order.
import type { JSX } from 'preact'
import { Content } from './Content.js'
import { Approvals } from './Approvals.js'
import { CapFeedPage, CapFeeds } from './CapFeeds.js'
import { CastPage, Casts } from './Casts.js'
import { Alerts } from './Alerts.js'
import { AuditLog } from './AuditLog.js'
import { Dashboard } from './Dashboard.js'
import { Emergencies, EmergencyPage } from './Emergencies.js'
import { Groups } from './Groups.js'
import { LocationPage, Locations } from './Locations.js'
import { Reports } from './Reports.js'
import { ScreenPage } from './ScreenPage.js'
import { Schedules } from './Schedules.js'
import { Screens } from './Screens.js'
import { Settings } from './Settings.js'
import { SingleSignOn } from './SingleSignOn.js'
import type { PageProps } from './types.js'

export type { PageProps } from './types.js'

export interface PageEntry {
  path: string
  name: string
  /** Needed to see the page; a list: any one of them. */
  permission: string | readonly string[] | null
  nav: boolean
  component: (p: PageProps) => JSX.Element
}

export const PAGES: PageEntry[] = [
  { path: '/', name: 'Dashboard', permission: null, nav: true, component: Dashboard },
  { path: '/screens', name: 'Screens', permission: 'screen.view', nav: true, component: Screens },
  { path: '/screens/:id', name: 'Screen', permission: 'screen.view', nav: false, component: ScreenPage },
  { path: '/groups', name: 'Groups', permission: 'screen.view', nav: true, component: Groups },
  { path: '/locations', name: 'Locations', permission: 'node.view', nav: true, component: Locations },
  { path: '/locations/:id', name: 'Location', permission: 'node.view', nav: false, component: LocationPage },
  { path: '/content', name: 'Content', permission: ['media.view', 'playlist.view'], nav: true, component: Content },
  { path: '/schedules', name: 'Schedules', permission: 'schedule.view', nav: true, component: Schedules },
  { path: '/casts', name: 'Casts', permission: 'screen.view', nav: true, component: Casts },
  { path: '/casts/:id', name: 'Cast', permission: 'screen.view', nav: false, component: CastPage },
  { path: '/emergencies', name: 'Emergencies', permission: 'emergency.view', nav: true, component: Emergencies },
  // Before /emergencies/:id, which would take `cap-feeds` for an id.
  { path: '/emergencies/cap-feeds', name: 'CAP alert feeds', permission: 'emergency.view', nav: false, component: CapFeeds },
  { path: '/emergencies/cap-feeds/:id', name: 'CAP feed', permission: 'emergency.view', nav: false, component: CapFeedPage },
  { path: '/emergencies/:id', name: 'Emergency', permission: 'emergency.view', nav: false, component: EmergencyPage },
  { path: '/approvals', name: 'Approvals', permission: 'approval.view', nav: true, component: Approvals },
  { path: '/reports', name: 'Reports', permission: 'screen.view', nav: true, component: Reports },
  { path: '/alerts', name: 'Alerts', permission: 'alert.view', nav: true, component: Alerts },
  { path: '/audit-log', name: 'Audit log', permission: 'audit.view', nav: true, component: AuditLog },
  { path: '/settings', name: 'Settings', permission: null, nav: true, component: Settings },
  { path: '/settings/sso', name: 'Single sign-on', permission: 'user.manage', nav: false, component: SingleSignOn },
]

/** Whether a role holding what `can` says may see the page. */
export function mayView(entry: PageEntry, can: (p: string) => boolean): boolean {
  if (!entry.permission) return true
  return typeof entry.permission === 'string' ? can(entry.permission) : entry.permission.some(can)
}

/** The permission(s) a page needs, in words. */
export function needs(entry: PageEntry): string {
  return typeof entry.permission === 'string' ? entry.permission : (entry.permission ?? []).join(' or ')
}

/** The page for a path, its params, and the navigation entry it belongs to (a detail page: its list's). */
export function pageFor(path: string): { entry: PageEntry; params: Record<string, string>; section: PageEntry | null } | null {
  const got = path === '/' ? [''] : path.replace(/\/+$/, '').split('/')
  for (const entry of PAGES) {
    const want = entry.path === '/' ? [''] : entry.path.split('/')
    if (want.length !== got.length) continue
    const params: Record<string, string> = {}
    if (!want.every((w, i) => (w.startsWith(':') ? ((params[w.slice(1)] = decodeURIComponent(got[i]!)), true) : w === got[i]))) continue
    const section = entry.nav ? entry : (PAGES.find((p) => p.nav && p.path !== '/' && entry.path.startsWith(`${p.path}/`)) ?? null)
    return { entry, params, section }
  }
  return null
}
