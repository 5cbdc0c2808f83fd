import t from 'tap'
import { playingView } from '../../src/player/PlayerView.js'
import type { PlaybackDecision } from '@svc/shared/playback/index'

t.test('media paths from the cloud become absolute URLs on the cloud the agent paired with', async (t) => {
  const d = {
    source: 'cast',
    contentKind: 'playlist',
    contentId: 'pl_1',
    content: {
      name: 'Menu',
      url: '/v1/media/med_1/content?exp=1&sig=ab',
      items: [
        { contentKind: 'media', contentId: 'med_2', url: '/v1/media/med_2/content?exp=1&sig=cd' },
        { contentKind: 'app', contentId: 'app_1' },
      ],
    },
    castId: 'cast_1',
    emergencyId: null,
    ruleId: null,
    message: null,
    nextChangeAt: null,
  } as unknown as PlaybackDecision
  const v = playingView('scr_1', true, 3, d, 'https://signage.example.com/')
  if (v.type !== 'playing') throw new Error('expected a playing view')
  t.equal(v.content?.url, 'https://signage.example.com/v1/media/med_1/content?exp=1&sig=ab')
  t.equal(v.content?.items?.[0]?.url, 'https://signage.example.com/v1/media/med_2/content?exp=1&sig=cd')
  t.equal(v.content?.items?.[1]?.url, undefined, 'items without a URL stay without one')
  const abs = playingView('scr_1', true, 3, { ...d, content: { url: 'https://cdn.example.net/x.png' } } as PlaybackDecision, 'https://signage.example.com/')
  t.equal(abs.type === 'playing' ? abs.content?.url : null, 'https://cdn.example.net/x.png', 'absolute URLs are kept')
})
