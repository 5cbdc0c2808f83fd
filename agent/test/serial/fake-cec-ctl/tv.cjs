// A stand-in for v4l-utils' cec-ctl with a TV on the line (which CI does not have):
// a TV behind /dev/cec0 whose state lives in $FAKE_CEC_STATE (JSON: power "on"|"standby",
// input "a.b.c.d", noCec, ignoreStandby). It prints what cec-ctl prints for the options the
// agent uses, and logs every call (one JSON line) to $FAKE_CEC_LOG.
const fs = require('node:fs')
const args = process.argv.slice(2)
const file = process.env.FAKE_CEC_STATE
const state = JSON.parse(fs.readFileSync(file, 'utf8'))
if (process.env.FAKE_CEC_LOG) fs.appendFileSync(process.env.FAKE_CEC_LOG, `${JSON.stringify(args)}\n`)
const dev = args[args.indexOf('-d') + 1]
if (!/^\/dev\/cec0$/.test(dev ?? '')) {
  process.stderr.write(`Failed to open ${dev}: No such file or directory\n`)
  process.exit(1)
}
if (args.includes('--playback')) {
  process.stdout.write(
    'Driver Info:\n\tDriver Name                : fake\n\tLogical Address Mask       : 0x0010\n\tLogical Addresses          : 1\n\t  Logical Address          : 4 (Playback Device 1)\n',
  )
  process.exit(0)
}
const to = Number(args[args.indexOf('--to') + 1])
const names = { 0: 'TV', 15: 'all' }
const opt = args.find((a) => a.startsWith('--') && a !== '--to')
const value = (k) => (args.find((a) => a.startsWith(`${k}=`)) ?? '').split('=')[1]
const OPS = {
  '--image-view-on': 'IMAGE_VIEW_ON (0x04)',
  '--standby': 'STANDBY (0x36)',
  '--give-device-power-status': 'GIVE_DEVICE_POWER_STATUS (0x8f)',
  '--active-source': 'ACTIVE_SOURCE (0x82)',
  '--set-stream-path': 'SET_STREAM_PATH (0x86)',
  '--request-active-source': 'REQUEST_ACTIVE_SOURCE (0x85)',
  '--user-control-pressed': 'USER_CONTROL_PRESSED (0x44)',
  '--user-control-released': 'USER_CONTROL_RELEASED (0x45)',
}
let out = `Transmit from Playback Device 1 to ${names[to] ?? `Device ${to}`} (4 to ${to}):\n${OPS[opt] ?? 'CUSTOM'}\n`
const seq = '\tSequence: 7 Tx Timestamp: 1000.000s\n'
if (state.noCec && to !== 15) {
  process.stdout.write(`${out}\tTx, Not Acknowledged (4), Max Retries\n${seq}`)
  process.exit(0)
}
switch (opt) {
  case '--image-view-on':
    state.power = 'on'
    break
  case '--standby':
    if (!state.ignoreStandby) state.power = 'standby'
    break
  case '--active-source':
  case '--set-stream-path':
    state.input = value('phys-addr')
    break
  case '--give-device-power-status': {
    const code = state.power === 'on' ? 0 : 1
    out += `    Received from TV (0):\n    REPORT_POWER_STATUS (0x90):\n\tpwr-state: ${state.power} (0x0${code})\n`
    break
  }
  case '--user-control-pressed':
    state.lastKey = value('ui-cmd')
    break
  default:
    break
}
fs.writeFileSync(file, JSON.stringify(state))
process.stdout.write(out + seq)
