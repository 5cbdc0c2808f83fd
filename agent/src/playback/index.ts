// Public entry of agent playback: the pure decision and the controller that keeps it current.
export { decidePlayback, liveCasts, toPlaying, type PlaybackDecision } from './decidePlayback.js';
export {
  PlaybackController,
  type PlaybackControllerOptions,
  type PlaybackControllerEvents,
  type TimerHandle,
} from './PlaybackController.js';
