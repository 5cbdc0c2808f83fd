// What the local player page shows, as pushed over its WebSocket feed.
import type { ContentKind, EmergencyAlert, PlayableContent, PlayingSource } from '@svc/shared/mqtt/index'
import type { PlaybackDecision } from '@svc/shared/playback/index'

export type PlayerView =
  | { type: 'starting' }
  | { type: 'pairing'; pairingCode: string; expiresAt: string; cloud: string }
  | {
      type: 'playing'
      screenId: string
      /** Whether the link to the cloud is up (the page shows a small offline mark). */
      connected: boolean
      version: number
      source: PlayingSource
      contentKind: ContentKind | null
      contentId: string | null
      content: PlayableContent | null
      castId: string | null
      emergencyId: string | null
      /** Emergency text, shown in a large band over the emergency content. */
      message: string | null
      /**
       * `banner`: the emergency's message over the content playing beneath it; `message`: an
       * emergency without content, its message alone filling the screen; absent = full screen
       * over the emergency's content.
       */
      presentation?: 'banner' | 'message'
      /** A CAP alert's text field by field (severity colours, headline, instruction on its own line). */
      alert?: EmergencyAlert
    }

/** Media URLs may come as paths on the cloud (signed `/v1/media/…` links): make them absolute. */
function absolute(content: PlayableContent | null, cloudUrl: string): PlayableContent | null {
  if (!content) return null
  const fix = (u: string | undefined): string | undefined => {
    if (!u) return u
    try {
      return new URL(u, cloudUrl).toString()
    } catch {
      return u
    }
  }
  const zones = (content.config as { zones?: unknown } | undefined)?.zones
  return {
    ...content,
    ...(content.url ? { url: fix(content.url) } : {}),
    ...(content.items ? { items: content.items.map((i) => (i.url ? { ...i, url: fix(i.url) } : i)) } : {}),
    ...(Array.isArray(zones)
      ? {
          config: {
            ...(content.config as object),
            zones: zones.map((z: { content?: PlayableContent | null }) => (z?.content ? { ...z, content: absolute(z.content, cloudUrl) } : z)),
          },
        }
      : {}),
  }
}

/**
 * The view with every cached file pointed at the local player server (`/media/<key>`), so
 * the page plays from disk; files not in the cache keep their remote URL.
 */
export function localView(view: PlayerView, cached: (url: string, m: { mimeType?: string; sha256?: string }) => string | null): PlayerView {
  if (view.type !== 'playing' || !view.content) return view
  const local = (c: PlayableContent): PlayableContent => {
    const swap = <T extends { url?: string; mimeType?: string; sha256?: string }>(m: T): T => {
      if (!m.url) return m
      const key = cached(m.url, m)
      return key ? { ...m, url: `/media/${key}` } : m
    }
    const zones = (c.config as { zones?: unknown } | undefined)?.zones
    return {
      ...swap(c),
      ...(c.items ? { items: c.items.map(swap) } : {}),
      ...(Array.isArray(zones)
        ? {
            config: {
              ...(c.config as object),
              zones: zones.map((z: { content?: PlayableContent | null }) => (z?.content ? { ...z, content: local(z.content) } : z)),
            },
          }
        : {}),
    }
  }
  return { ...view, content: local(view.content) }
}

export function playingView(screenId: string, connected: boolean, version: number, d: PlaybackDecision, cloudUrl = 'http://localhost/'): PlayerView {
  return {
    type: 'playing',
    screenId,
    connected,
    version,
    source: d.source,
    contentKind: d.contentKind,
    contentId: d.contentId,
    content: absolute(d.content, cloudUrl),
    castId: d.castId,
    emergencyId: d.emergencyId,
    message: d.message,
    ...(d.presentation ? { presentation: d.presentation } : {}),
    ...(d.alert ? { alert: d.alert } : {}),
  }
}
