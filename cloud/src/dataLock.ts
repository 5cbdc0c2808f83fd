// One running service per data folder: `start` takes <dataDir>/svc.lock (holding its
// process id) before it opens the database or the broker's store, so a second instance
// stops with one line naming the folder instead of a storage error. A lock left by a
// process that no longer runs (a crash, kill -9) is taken over.
import fs from 'node:fs'
import path from 'node:path'

export class StartupError extends Error {}

export interface DataLock {
  release(): void
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Throws the one-line refusal when another running process holds the data folder's lock. */
function refuseIfHeld(dataDir: string, file: string): void {
  let held: string
  try {
    held = fs.readFileSync(file, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return
    throw e
  }
  const pid = Number.parseInt(held.trim(), 10)
  if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && running(pid)) {
    throw new StartupError(
      `another instance (process ${pid}) is running on the data folder ${dataDir}; stop it, or give this one its own folder with SVC_DATA_DIR`,
    )
  }
}

/**
 * The same refusal without taking the lock: `start` asks before it loads the server's
 * modules, so a second instance stops at once (lockDataDir still decides, after them).
 */
export function refuseIfDataDirHeld(dataDir: string): void {
  refuseIfHeld(dataDir, path.join(dataDir, 'svc.lock'))
}

export function lockDataDir(dataDir: string): DataLock {
  fs.mkdirSync(dataDir, { recursive: true })
  const file = path.join(dataDir, 'svc.lock')
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number
    try {
      fd = fs.openSync(file, 'wx')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
      refuseIfHeld(dataDir, file)
      fs.rmSync(file, { force: true })
      continue
    }
    fs.writeSync(fd, `${process.pid}\n`)
    fs.closeSync(fd)
    let released = false
    return {
      release() {
        if (released) return
        released = true
        try {
          if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.rmSync(file, { force: true })
        } catch {
          // already gone
        }
      },
    }
  }
  throw new StartupError(`could not take the lock ${file}`)
}
