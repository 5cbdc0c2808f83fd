// Public entry of the agent package.
export { Agent, DEFAULT_PLAYER_PORT, type AgentOptions, type AgentPhase, type AgentEvents } from './Agent.js';
export { Backoff, type BackoffOptions } from './runtime/Backoff.js';
export { Logger, silentLogger, type LogLevel, type LoggerOptions } from './runtime/Logger.js';
export { systemClock, systemTimers, type Clock, type Timers, type TimerHandle } from './runtime/time.js';
export { CloudClient, CloudUnreachableError, CloudResponseError, type Registration, type MqttLinkInfo } from './pairing/CloudClient.js';
export { CredentialStore, type Credentials } from './pairing/CredentialStore.js';
export { Pairing, type PairingOptions } from './pairing/Pairing.js';
export { MqttLink, type MqttLinkOptions, type MqttConnect } from './link/MqttLink.js';
export { DesiredStore } from './state/DesiredStore.js';
export { StateReconciler, type StateReconcilerOptions, type ReportPublisher } from './state/StateReconciler.js';
export { JobDispatcher, type JobDispatcherOptions, type ResultPublisher } from './jobs/JobDispatcher.js';
export { SeenJobs } from './jobs/SeenJobs.js';
export { UnavailableSerialRunner, type SerialJobRunner } from './jobs/SerialJobRunner.js';
export { PlayerServer, type PlayerServerOptions } from './player/PlayerServer.js';
export type { PlayerView } from './player/PlayerView.js';
export * from './playback/index.js';
