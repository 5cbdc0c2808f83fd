// Public entry of agent playback: the pure decision, the controller that keeps it current,
// the on-disk media cache and the play log.
export { decidePlayback, liveCasts, toPlaying, type PlaybackDecision } from './decidePlayback.js'
export {
  PlaybackController,
  type PlaybackControllerOptions,
  type PlaybackControllerEvents,
  type TimerHandle,
} from './PlaybackController.js'
export { MediaCache, DEFAULT_CACHE_MAX_BYTES, wantedBy, type MediaCacheOptions, type Wanted } from './MediaCache.js'
export { PlayLog, PLAY_LOG_FILE, type PlayRecord, type PlayLogBatch } from './PlayLog.js'
