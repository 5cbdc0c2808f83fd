/**
 * What an installer needs to see of the panel's wire: the port opening, closing, failing
 * and reopening, at info, with the path and the operating system's reason. A path that
 * does not exist says so and lists the serial ports this machine has (naming a Pulse-Eight
 * USB-CEC adapter among them); a `/dev/cecN` that does not exist lists the CEC devices
 * there are; a port another program holds says so (one program per port); a missing
 * `cec-ctl` names its package. The driver retries a failed open with backoff; the same
 * failure again is logged at debug, so a panel left unplugged does not flood the log.
 */
import fs from 'node:fs'
import { SerialPort } from 'serialport'
import type { Logger } from '../runtime/Logger.js'
import { CEC_CTL_MISSING, isCecDevicePath } from './CecCtlPort.js'
import type { DisplayDriver } from './DisplayDriver.js'

/** A serial port of this machine; `cecAdapter` when it is a Pulse-Eight USB-CEC adapter (USB vendor 2548). */
export interface ListedPort {
  path: string
  cecAdapter?: boolean
}

const PULSE_EIGHT_VENDOR = '2548'

/** The machine's serial ports, as serialport lists them. */
export async function listSerialPorts(): Promise<ListedPort[]> {
  const ports = await SerialPort.list()
  return ports.map((p) => ({
    path: p.path,
    ...(p.vendorId?.toLowerCase() === PULSE_EIGHT_VENDOR || /pulse-?eight/i.test(`${p.manufacturer ?? ''} ${p.pnpId ?? ''}`) ? { cecAdapter: true } : {}),
  }))
}

/** The kernel's CEC devices (`/dev/cecN`) on this machine. */
export function listCecDevices(dev = '/dev'): string[] {
  try {
    return fs
      .readdirSync(dev)
      .filter((f) => /^cec\d+$/.test(f))
      .sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)))
      .map((f) => `${dev}/${f}`)
  } catch {
    return []
  }
}

function missingPath(err: Error & { code?: string }): boolean {
  return err.code === 'ENOENT' || /no such file or directory|ENOENT/i.test(err.message)
}

/** Another program holds the port: serialport's lock (flock) refused, or the device is busy. */
export function portBusy(err: Error & { code?: string }): boolean {
  return err.code === 'EBUSY' || /cannot lock port|resource busy|EBUSY/i.test(err.message)
}

export function logPanelPort(
  driver: Pick<DisplayDriver, 'on' | 'off' | 'path'>,
  log: Logger,
  listPorts: () => Promise<ListedPort[]> = listSerialPorts,
  listCec: () => string[] = listCecDevices,
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
    const next = opened ? 'reopening' : 'retrying'
    if (err.code === CEC_CTL_MISSING) {
      log.info({ path, reason, next }, `cec-ctl is not installed: the agent drives ${path} through it (apt-get install -y v4l-utils)`)
      return
    }
    if (isCecDevicePath(path) && missingPath(err)) {
      const devices = listCec()
      log.info(
        { path, reason, available: devices, next },
        `CEC device ${path} does not exist; ${
          devices.length
            ? `CEC devices on this machine: ${devices.join(', ')}`
            : 'this machine has no CEC device (its HDMI port has no CEC or its kernel driver is not loaded): use a Pulse-Eight USB-CEC adapter on --serial /dev/serial/by-id/usb-Pulse-Eight…'
        }`,
      )
      return
    }
    if (!path.startsWith('tcp://') && portBusy(err)) {
      const what = isCecDevicePath(path) ? 'CEC device' : 'serial port'
      log.info(
        { path, reason, next },
        `${what} ${path} is in use by another program; one program per port: stop it (another svc-agent, cec-client, inputattach --pulse8-cec, ModemManager) and the agent takes the port at its next try`,
      )
      return
    }
    if (!path.startsWith('tcp://') && missingPath(err)) {
      void listPorts()
        .catch(() => [] as ListedPort[])
        .then((ports) => {
          const adapters = ports.filter((p) => p.cecAdapter).map((p) => p.path)
          log.info(
            {
              path,
              reason,
              available: ports.map((p) => p.path),
              ...(adapters.length ? { cecAdapters: adapters } : {}),
              next: 'retrying',
            },
            `serial port ${path} does not exist; ${ports.length ? `ports on this machine: ${ports.map((p) => p.path).join(', ')}` : 'this machine lists no serial ports'}${
              adapters.length ? `; a Pulse-Eight USB-CEC adapter is at ${adapters.join(', ')}` : ''
            }`,
          )
        })
      return
    }
    log.info({ path, reason, ...(err.code ? { code: err.code } : {}), next }, 'serial port error')
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
