// What the panel tests share: a simulated panel reachable as a serial port (a socat
// pseudo-terminal, or the simulator's TCP port, as through a serial-over-IP gateway, when
// socat is missing) and a real agent driving it, on an injected clock.
import type { Test } from 'tap'
import { FirmwareSim, type FirmwareSimOptions } from '@svc/firmware-sim'
import { socat, useTool } from '@svc/shared/testing'
import { Agent } from '../../src/Agent.js'
import { DisplayDriver } from '../../src/serial/DisplayDriver.js'
import { SerialJobRunner } from '../../src/serial/SerialJobRunner.js'
import type { TestCloud } from '../cloud.js'
import { FakeTime, captureLog, type LogCapture } from '../helpers.js'

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
): Agent {
  const { log } = logs
  const driver = new DisplayDriver({ path: panelPath, timeoutMs: 1000 })
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
