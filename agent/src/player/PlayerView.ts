// What the local player page shows, as pushed over its WebSocket feed.
import type { ContentKind, PlayableContent, PlayingSource } from '@svc/shared/mqtt/index';
import type { PlaybackDecision } from '../playback/index.js';

export type PlayerView =
  | { type: 'starting' }
  | { type: 'pairing'; pairingCode: string; expiresAt: string; cloud: string }
  | {
      type: 'playing';
      screenId: string;
      /** Whether the link to the cloud is up (the page shows a small offline mark). */
      connected: boolean;
      version: number;
      source: PlayingSource;
      contentKind: ContentKind | null;
      contentId: string | null;
      content: PlayableContent | null;
      castId: string | null;
      emergencyId: string | null;
      /** Emergency text to show over the content. */
      message: string | null;
    };

/** Media URLs may come as paths on the cloud (signed `/v1/media/…` links): make them absolute. */
function absolute(content: PlayableContent | null, cloudUrl: string): PlayableContent | null {
  if (!content) return null;
  const fix = (u: string | undefined): string | undefined => {
    if (!u) return u;
    try {
      return new URL(u, cloudUrl).toString();
    } catch {
      return u;
    }
  };
  return {
    ...content,
    ...(content.url ? { url: fix(content.url) } : {}),
    ...(content.items ? { items: content.items.map((i) => (i.url ? { ...i, url: fix(i.url) } : i)) } : {}),
  };
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
  };
}
