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

export function lockDataDir(dataDir: string): DataLock {
  fs.mkdirSync(dataDir, { recursive: true })
  const file = path.join(dataDir, 'svc.lock')
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number
    try {
      fd = fs.openSync(file, 'wx')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
      const pid = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10)
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && running(pid)) {
        throw new StartupError(
          `another instance (process ${pid}) is running on the data folder ${dataDir}; stop it, or give this one its own folder with SVC_DATA_DIR`,
        )
      }
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
