// What a screen plays: the decision the agent plays by, and the timeline the cloud walks
// with that same decision.
export {
  decidePlayback,
  decideFromLayers,
  liveCasts,
  playbackLayers,
  toPlaying,
  type EvaluateSchedule,
  type PlaybackDecision,
  type PlaybackLayer,
} from './decide.js'
export {
  localIso,
  playbackTimeline,
  playbackTimelineAsync,
  type Timeline,
  type TimelineAsyncOptions,
  type TimelineEntry,
  type TimelineOptions,
  type TimelineSegment,
} from './timeline.js'
