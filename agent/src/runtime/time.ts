// Time for the agent, injected everywhere: `Clock` reads the wall clock (decisions,
// timestamps, cast expiry) and `Timers` schedules waits (backoff, polling), so tests
// move time by hand instead of sleeping. The types live in @svc/shared (one definition).
export { systemClock, systemTimers, wait, type Clock, type TimerHandle, type Timers } from '@svc/shared'
