/**
 * What an installer needs to see of the panel's wire: the port opening, closing, failing
 * and reopening, at info, with the path and the operating system's reason. A path that
 * does not exist says so and lists the serial ports this machine has. The driver retries
 * a failed open with backoff; the same failure again is logged at debug, so a panel left
 * unplugged does not flood the log.
 */
import { SerialPort } from 'serialport'
import type { Logger } from '../runtime/Logger.js'
import type { DisplayDriver } from './DisplayDriver.js'

/** The machine's serial ports (paths), as serialport lists them. */
export async function listSerialPorts(): Promise<string[]> {
  const ports = await SerialPort.list()
  return ports.map((p) => p.path)
}

function missingPath(err: Error & { code?: string }): boolean {
  return err.code === 'ENOENT' || /no such file or directory|ENOENT/i.test(err.message)
}

export function logPanelPort(
  driver: Pick<DisplayDriver, 'on' | 'off' | 'path'>,
  log: Logger,
  listPorts: () => Promise<string[]> = listSerialPorts,
): () => void {
  const path = driver.path
  let opened = false
  let lastFailure = ''
  const onOpen = (): void => {
    log.info({ path }, opened ? 'serial port reopened' : 'serial port open')
    opened = true
    lastFailure = ''
  }
  const onClose = (err: (Error & { disconnected?: boolean }) | undefined): void => {
    log.info(
      {
        path,
        reason: err ? (err.disconnected ? `disconnected: ${err.message}` : err.message) : 'closed by the other end',
        next: 'reopening',
      },
      'serial port closed',
    )
  }
  const onWarn = (err: Error & { code?: string }): void => {
    const reason = err.message
    if (reason === lastFailure) {
      log.debug({ path, reason }, 'serial port still failing')
      return
    }
    lastFailure = reason
    if (!path.startsWith('tcp://') && missingPath(err)) {
      void listPorts()
        .catch(() => [] as string[])
        .then((ports) =>
          log.info(
            {
              path,
              reason,
              available: ports,
              next: 'retrying',
            },
            `serial port ${path} does not exist; ${ports.length ? `ports on this machine: ${ports.join(', ')}` : 'this machine lists no serial ports'}`,
          ),
        )
      return
    }
    log.info({ path, reason, ...(err.code ? { code: err.code } : {}), next: opened ? 'reopening' : 'retrying' }, 'serial port error')
  }
  driver.on('open', onOpen)
  driver.on('close', onClose)
  driver.on('warn', onWarn)
  return () => {
    driver.off('open', onOpen)
    driver.off('close', onClose)
    driver.off('warn', onWarn)
  }
}
