// lib/launcher.cjs, required by bin/svc-agent for `start`: the supervisor (supervisor.ts)
// around the agent. Bundled by esbuild as CommonJS with Node's built-ins only, so it costs
// a few megabytes of memory beside the agent.
import path from 'node:path'
import { supervise, trialMsFrom } from './supervisor.js'

/** `--data DIR` or `--data=DIR` among start's arguments (default ./agent-data, as the agent's). */
export function dataDirOf(args: string[]): string {
  let dir = './agent-data'
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a === '--data' && i + 1 < args.length) dir = args[++i]!
    else if (a.startsWith('--data=')) dir = a.slice('--data='.length)
  }
  return path.resolve(dir)
}

/** Runs `start <args>` under the supervisor; the program folder is the one above lib/. */
export function run(args: string[], libDir: string): void {
  let trialMs: number
  try {
    trialMs = trialMsFrom(process.env)
  } catch (err) {
    process.stderr.write(`svc-agent: ${(err as Error).message}\n`)
    process.exitCode = 2
    return
  }
  supervise({ installedDir: path.resolve(libDir, '..'), dataDir: dataDirOf(args), args, trialMs }).then(
    (code) => {
      // Nothing is left running: the process ends once stdout is written out.
      process.exitCode = code
      setTimeout(() => process.exit(code), 1000).unref()
    },
    (err: unknown) => {
      process.stderr.write(`svc-agent: the supervisor failed: ${err instanceof Error ? err.message : String(err)}\n`)
      process.exit(1)
    },
  )
}
