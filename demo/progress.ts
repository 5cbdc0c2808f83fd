// Progress for long steps: on a terminal a spinner line with the elapsed seconds, redrawn
// in place; otherwise (a pipe, CI, a test) one plain line when a step starts, a line every
// few seconds while it waits, and one when it ends, so the output is never silent.

export interface StepRecord {
  step: string
  ok: boolean
  ms: number
  detail: string
}

export type Update = (detail: string) => void

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']

export interface ProgressOptions {
  write: (text: string) => void
  /** Redraw in place (a terminal); false = plain periodic lines. */
  tty: boolean
  /** Plain mode: how often a "still waiting" line is printed (default 2000 ms). */
  plainEveryMs?: number
  /** Terminal width: the redrawn line is cut to it so it never wraps (a wrapped line cannot be redrawn). */
  columns?: number
}

export class Progress {
  readonly steps: StepRecord[] = []
  readonly #o: ProgressOptions

  constructor(options: ProgressOptions) {
    this.#o = options
  }

  /**
   * Runs one step. `fn` may call `update(detail)` to say what it waits for; its answer is
   * the step's closing detail. A throw marks the step failed (the error is rethrown).
   */
  async run(step: string, fn: (update: Update) => Promise<string>): Promise<string> {
    const started = Date.now()
    let detail = ''
    const secs = (): string => `${((Date.now() - started) / 1000).toFixed(1)}s`
    const line = (mark: string): string => `${mark} ${step}${detail ? ` — ${detail}` : ''} (${secs()})`
    let frame = 0
    let timer: NodeJS.Timeout
    if (this.#o.tty) {
      const width = Math.max(20, (this.#o.columns ?? 80) - 1)
      const draw = (): void => this.#o.write(`\r\x1b[K${[...line(FRAMES[frame++ % FRAMES.length]!)].slice(0, width).join('')}`)
      draw()
      timer = setInterval(draw, 100)
    } else {
      this.#o.write(`… ${step}\n`)
      timer = setInterval(() => this.#o.write(`${line('…')}\n`), this.#o.plainEveryMs ?? 2000)
    }
    const end = (ok: boolean): void => {
      clearInterval(timer)
      this.#o.write(`${this.#o.tty ? '\r\x1b[K' : ''}${line(ok ? '✔' : '✘')}\n`)
      this.steps.push({ step, ok, ms: Date.now() - started, detail })
    }
    try {
      detail = await fn((d) => {
        detail = d
      })
      end(true)
      return detail
    } catch (err) {
      detail = err instanceof Error ? err.message : String(err)
      end(false)
      throw err
    }
  }
}
