// Judges running agent rollouts on an interval (a stage's minutes up, the next stage begun),
// once per cloud. Job results judge their rollout at once; this catches the rest.
import { IntervalWorker } from '../../platform/workers/Worker.js'
import type { AgentRolloutService } from './AgentRolloutService.js'

export class RolloutWorker extends IntervalWorker {
  constructor(
    private readonly rollouts: AgentRolloutService,
    intervalMs: number,
    log: { error(obj: unknown, msg: string): void },
  ) {
    super(intervalMs, log)
  }

  protected tick(): Promise<void> {
    return this.rollouts.tickAll()
  }
}
