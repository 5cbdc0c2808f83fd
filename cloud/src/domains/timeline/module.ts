// The timeline: what a screen will play and why, from its desired state and the shared
// playback decision.
import { domainModule } from '../provisions.js'
import { TimelineService } from './TimelineService.js'

export { default as timelineRoutes } from './timelineRoutes.js'

export const timelineModule = domainModule({
  name: 'timeline',
  needs: ['clock', 'screens', 'desiredState'],
  provides: ['timeline'],
  create: ({ clock, screens, desiredState }) => ({ timeline: new TimelineService(screens, desiredState, clock) }),
})
