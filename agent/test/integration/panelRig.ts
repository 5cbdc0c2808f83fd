// What the panel tests share: a simulated panel reachable as a serial port (a socat
// pseudo-terminal, or the simulator's TCP port, as through a serial-over-IP gateway, when
// socat is missing) and a real agent driving it, on an injected clock.
import type { Test } from 'tap'
import { FirmwareSim, type FirmwareSimOptions } from '@svc/firmware-sim'
import { HANG_GUARD_MS, socat, useTool } from '@svc/shared/testing'
import { Agent } from '../../src/Agent.js'
import { DisplayDriver } from '../../src/serial/DisplayDriver.js'
import { SerialJobRunner } from '../../src/serial/SerialJobRunner.js'
import type { TestCloud } from '../cloud.js'
import { FakeTime, captureLog, type LogCapture } from '../helpers.js'

/**
 * The driver's reply timeout is a hang guard: the simulated panel answers every command (its
 * faults acknowledge and disobey, they do not fall silent), and socat's relay may be slow to
 * run on a busy machine. On CEC one query goes unanswered by design (the TV asked for its
 * source while the player shows), and the agent's poller waits the driver's timeout for it,
 * so a CEC panel keeps the protocol's answer window.
 */
const REPLY_GUARD_MS = HANG_GUARD_MS
const CEC_ANSWER_WINDOW_MS = 1000

/** A started simulator and the path the agent opens it at. */
export async function startPanelSim(t: Test, opts: Pick<FirmwareSimOptions, 'protocol' | 'state'>): Promise<{ sim: FirmwareSim; panelPath: string }> {
  const pty = useTool(t, socat, 'TCP (tcp://127.0.0.1:PORT, as through a serial-over-IP gateway)')
  const sim = new FirmwareSim({ ...opts, ...(pty ? { pty: true } : { tcp: { port: 0, host: '127.0.0.1' } }) })
  const info = await sim.start()
  t.after(() => sim.stop())
  return { sim, panelPath: pty ? info.ptyPath! : `tcp://127.0.0.1:${info.tcpPort}` }
}

/** An agent of `cloud` with its panel at `panelPath`, playback and hours on `time` (stopped after the test); its log lines go to `logs`. */
export function startPanelAgent(
  t: Test,
  cloud: TestCloud,
  dataDir: string,
  panelPath: string,
  time = new FakeTime(Date.now()),
  logs: LogCapture = captureLog(time.clock),
  protocol: 'cec' | 'other' = 'other',
): Agent {
  const { log } = logs
  const driver = new DisplayDriver({ path: panelPath, timeoutMs: protocol === 'cec' ? CEC_ANSWER_WINDOW_MS : REPLY_GUARD_MS })
  const agent = new Agent({
    cloudUrl: cloud.base,
    dataDir,
    playerPort: 0,
    clock: time.clock,
    playbackTimers: time,
    random: () => 0.2,
    pairing: { pollIntervalMs: 50, pollIntervalCapMs: 200 },
    backoff: { baseMs: 200, capMs: 1000 },
    serialRunner: new SerialJobRunner(driver),
    panelDriver: driver,
    log,
  })
  t.after(() => agent.stop())
  return agent
}
