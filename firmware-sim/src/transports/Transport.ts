/** What every transport offers: start, stop and a pulled cable. */
export interface Transport {
  start(): Promise<void>
  /** Closes everything this transport opened. Safe to call twice. */
  stop(): Promise<void>
  /** Simulates a pulled cable (drop connections / close the port / kill socat). */
  unplug(): Promise<void>
}
