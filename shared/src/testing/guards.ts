/**
 * The bound on every wait a test makes on real time (a child process's line or exit, an MQTT
 * message, a socket closing, a browser showing something, a fetch to a local server): a hang
 * guard, not a bound on how fast anything is. Five minutes: on a busy shared machine (three test
 * processes on two cores and more beside them) healthy waits have overrun two. Its expiry fails
 * the test naming what was awaited.
 */
export const HANG_GUARD_MS = 5 * 60_000
