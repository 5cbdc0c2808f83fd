// Pictures and facts of media files: the thumbnail the cloud made at upload (images, and
// videos where it has ffmpeg), or an empty box of the same size; and "1280×720 · 0:06" from the
// probed dimensions and duration. Decorative beside the name they go with (empty alt).
import type { JSX } from 'preact'

export interface Pictured {
  kind?: string
  thumbnailUrl?: string | null
  width?: number | null
  height?: number | null
  durationMs?: number | null
}

export function Thumb(props: { item: Pictured; size?: 'small' | 'large' }): JSX.Element {
  const cls = `thumb ${props.size ?? 'small'}`
  if (props.item.thumbnailUrl) return <img class={cls} src={props.item.thumbnailUrl} alt="" loading="lazy" decoding="async" />
  return <span class={`${cls} none`} aria-hidden="true" />
}

/** A duration as m:ss (h:mm:ss past an hour). */
export function clock(ms: number): string {
  const s = Math.round(ms / 1000)
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const ss = String(s % 60).padStart(2, '0')
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`
}

/** "1280×720 · 0:06", what is known of it ('' when nothing). */
export function facts(item: Pictured): string {
  const parts: string[] = []
  if (item.width && item.height) parts.push(`${item.width}×${item.height}`)
  if (item.durationMs) parts.push(clock(item.durationMs))
  return parts.join(' · ')
}
