// Public entry of agent playback: the controller that keeps the decision current (the
// decision itself is shared: @svc/shared/playback/index), the on-disk media cache and the
// play log.
export {
  PlaybackController,
  type PlaybackControllerOptions,
  type PlaybackControllerEvents,
  type TimerHandle,
} from './PlaybackController.js'
export { MediaCache, DEFAULT_CACHE_MAX_BYTES, wantedBy, type MediaCacheOptions, type Wanted } from './MediaCache.js'
export { PlayLog, PLAY_LOG_FILE, type PlayRecord, type PlayLogBatch } from './PlayLog.js'
