// The timeline: what a screen will play and why, from its desired state and the shared
// playback decision.
import { domainModule } from '../../platform/provisions.js'
import { PreviewService } from './PreviewService.js'
import { TimelineService } from './TimelineService.js'

export { default as timelineRoutes } from './timelineRoutes.js'

export const timelineModule = domainModule({
  name: 'timeline',
  needs: ['clock', 'screens', 'desiredState', 'screenRecords', 'assignments', 'takeoverRecords', 'contentResolver'],
  provides: ['timeline', 'timelinePreview'],
  create: (d) => ({
    timeline: new TimelineService(d.screens, d.desiredState, d.clock),
    timelinePreview: new PreviewService(d.desiredState, d.screenRecords, d.assignments, d.takeoverRecords, d.contentResolver, d.clock),
  }),
})
