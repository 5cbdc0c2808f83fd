// Something costly that the tests of one process share, such as a browser (a Chromium costs
// about 3 s of CPU to start and stop): opened by the first test that asks, and closed when
// the folder's last file has run (`whenFolderEnds`, in a folder suite), or, for a file run
// alone, once no test has used it for a second (tap ends the root test only when nothing
// keeps the event loop busy, so it cannot wait for the end of the process).
import type { Test } from 'tap'
import { whenFolderEnds } from './folderSuite.js'

export interface Shared<T> {
  /** The shared thing, opened if need be; `t` holds it until its end. */
  use(t: Test): Promise<T>
}

/**
 * `open` makes it, `close` ends it; `watch` is given each one opened and a function to call
 * when it is lost (a browser that disconnected): the next test then opens another.
 */
export function processShared<T>(open: () => Promise<T>, close: (v: T) => Promise<unknown>, watch?: (v: T, lost: () => void) => void): Shared<T> {
  let current: Promise<T> | null = null
  let users = 0
  let idle: NodeJS.Timeout | null = null
  let untilFolderEnds = false
  const shut = async (): Promise<void> => {
    const closing = current
    current = null
    if (closing) await closing.then(close).catch(() => {})
  }
  return {
    use(t) {
      users++
      if (idle) {
        clearTimeout(idle)
        idle = null
      }
      t.after(() => {
        users--
        if (users > 0 || untilFolderEnds) return
        idle = setTimeout(() => {
          idle = null
          if (users === 0) void shut()
        }, 1000)
      })
      if (!current) {
        const opened = open()
        current = opened
        const lost = () => {
          if (current === opened) current = null
        }
        opened.then((v) => watch?.(v, lost), lost)
        if (!untilFolderEnds) untilFolderEnds = whenFolderEnds(shut)
      }
      return current
    },
  }
}
