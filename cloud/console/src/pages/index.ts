// Every page of the console: its path (with :params), its name in the navigation, the
// permission it needs to be shown, and its component. A page added here is routed and,
// with `nav`, listed in the navigation in this order.
import type { JSX } from 'preact'
import { Alerts } from './Alerts.js'
import { Dashboard } from './Dashboard.js'
import { ScreenPage } from './ScreenPage.js'
import { Screens } from './Screens.js'
import { Settings } from './Settings.js'
import type { PageProps } from './types.js'

export type { PageProps } from './types.js'

export interface PageEntry {
  path: string
  name: string
  permission: string | null
  nav: boolean
  component: (p: PageProps) => JSX.Element
}

export const PAGES: PageEntry[] = [
  { path: '/', name: 'Dashboard', permission: null, nav: true, component: Dashboard },
  { path: '/screens', name: 'Screens', permission: 'screen.view', nav: true, component: Screens },
  { path: '/screens/:id', name: 'Screen', permission: 'screen.view', nav: false, component: ScreenPage },
  { path: '/alerts', name: 'Alerts', permission: 'alert.view', nav: true, component: Alerts },
  { path: '/settings', name: 'Settings', permission: null, nav: true, component: Settings },
]

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
