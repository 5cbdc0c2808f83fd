// Paths under /console/ in the address bar (the cloud answers index.html for each), moved
// between with the History API: links stay real links (open in a new tab, copy the URL).
import type { ComponentChildren, JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'

export const BASE = '/console'
const listeners = new Set<() => void>()

/** The path after /console (always starting with /) and the query. */
export function current(): { path: string; query: URLSearchParams } {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname
  return { path: p === '' ? '/' : p, query: new URLSearchParams(location.search) }
}

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = to.startsWith(BASE) ? to : `${BASE}${to}`
  if (opts.replace) history.replaceState(null, '', url)
  else history.pushState(null, '', url)
  for (const l of listeners) l()
  // A new page: start reading at its top, and tell assistive technology where we are.
  window.scrollTo(0, 0)
  document.getElementById('main')?.focus()
}

window.addEventListener('popstate', () => {
  for (const l of listeners) l()
})

export function useRoute(): { path: string; query: URLSearchParams } {
  const [, set] = useState(0)
  useEffect(() => {
    const l = () => set((n) => n + 1)
    listeners.add(l)
    return () => void listeners.delete(l)
  }, [])
  return current()
}

/** A link inside the console: a real <a href>, followed without reloading the page. */
export function Link(props: { to: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page' | undefined }): JSX.Element {
  const { to, children, ...rest } = props
  const href = `${BASE}${to}`
  return (
    <a
      {...rest}
      href={href}
      onClick={(e) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
        e.preventDefault()
        navigate(to)
      }}
    >
      {children}
    </a>
  )
}
