// What Settings and its own pages (Single sign-on) share: the roles a form offers, and the
// frame of a settings page of its own (the page, the way back to Settings, what it is for).
import type { ComponentChildren, JSX } from 'preact'
import { Link } from '../router.js'
import { Page } from '../ui.js'

export const ROLES = [
  ['viewer', 'Viewer'],
  ['editor', 'Editor'],
  ['admin', 'Admin'],
  ['owner', 'Owner'],
] as const
export type Role = (typeof ROLES)[number][0]

/** A page of Settings of its own: its title, the way back to Settings, a line saying what it is for. */
export function SettingsPage(props: { title: string; intro: string; children: ComponentChildren }): JSX.Element {
  return (
    <Page title={props.title}>
      <p>
        <Link to="/settings">Back to settings</Link>
      </p>
      <p class="hint">{props.intro}</p>
      {props.children}
    </Page>
  )
}
