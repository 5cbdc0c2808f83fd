// A display capture's cost on the agent: the kiosk compositor (cage, wlroots' headless
// backend, software rendering, as `nobody`) runs with a window in it (a foot terminal full of
// random text, so the frame is not one colour: the PNG encoder has real work); the agent's
// own captureDisplay (the screenshot job's first step) spawns grim on its Wayland socket and
// reads the PNG, N times in a row. Per capture: the wall time until the PNG is in the agent's
// hands, the agent process's CPU (user + system, process.cpuUsage) and grim's CPU (user +
// system, from GNU time around it), and the PNG's size.
// wlroots' headless output is 1280×720 and has no mode to set, so the 1920×1080 row runs grim
// with `-s 1.5`: a 1920×1080 PNG from the 1280×720 output (the copy is smaller, the scaling and
// the encoding of 1080p are there).
// Needs: root (runuser), cage, foot (and a font), grim, GNU time (/usr/bin/time).
// Run: npx tsx bench/display-capture.ts [captures=20]
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { captureDisplay } from '../agent/src/jobs/Screenshotter.js'
import { f1, loadAvg, pct } from './lib/harness.js'

const N = Number(process.argv[2] ?? 20)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-capture-'))
execFileSync('chown', ['nobody', dir])
fs.chmodSync(dir, 0o700)

const cage = spawn(
  'runuser',
  [
    '-u',
    'nobody',
    '--',
    'env',
    '-i',
    'PATH=/usr/bin:/bin',
    `HOME=${dir}`,
    `XDG_RUNTIME_DIR=${dir}`,
    'WLR_BACKENDS=headless',
    'WLR_RENDERER=pixman',
    'WLR_LIBINPUT_NO_DEVICES=1',
    'cage',
    '-s',
    '--',
    'foot',
    'sh',
    '-c',
    'head -c 60000 /dev/urandom | base64 -w 0; sleep 600',
  ],
  { detached: true, stdio: 'ignore' },
)
const stopCage = () => {
  try {
    process.kill(-cage.pid!, 'SIGTERM')
  } catch {
    /* gone */
  }
}
process.on('exit', stopCage)

const socket = path.join(dir, 'wayland-0')
const until = Date.now() + 120_000
while (!fs.existsSync(socket)) {
  if (Date.now() > until) throw new Error(`no cage socket at ${socket} within 2 minutes`)
  await new Promise((r) => setTimeout(r, 50))
}

// The window drawn: captures until two in a row are the same size and far from a black
// frame's few KiB (the screen full of text).
{
  let prev = -1
  for (;;) {
    if (Date.now() > until) throw new Error('the foot window never showed in the capture within 2 minutes')
    const n = await captureDisplay({ waylandDisplay: socket })
      .then((png) => png.length)
      .catch(() => 0)
    if (n > 64 * 1024 && n === prev) break
    prev = n
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** A grim that GNU time wraps (its CPU goes to `cpuLog`), with extra arguments (the scale). */
function wrapper(name: string, extra: string[]): { grim: string; cpuLog: string } {
  const grim = path.join(dir, name)
  const cpuLog = path.join(dir, `${name}.cpu`)
  fs.writeFileSync(grim, `#!/bin/sh\nexec /usr/bin/time -a -o ${cpuLog} -f '%U %S' grim ${extra.join(' ')} "$@"\n`, { mode: 0o755 })
  return { grim, cpuLog }
}

async function row(label: string, extra: string[]): Promise<void> {
  const { grim, cpuLog } = wrapper(`grim-${extra.length ? 'scaled' : 'native'}`, extra)
  // One capture first: the compositor has set up its output, the page cache holds grim.
  await captureDisplay({ waylandDisplay: socket, grim })
  fs.rmSync(cpuLog, { force: true })
  const wall: number[] = []
  const agentCpu: number[] = []
  let size = ''
  let bytes = 0
  for (let i = 0; i < N; i++) {
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const png = await captureDisplay({ waylandDisplay: socket, grim })
    wall.push(performance.now() - t0)
    const cpu = process.cpuUsage(cpu0)
    agentCpu.push((cpu.user + cpu.system) / 1000)
    bytes = png.length
    // The PNG's IHDR: width and height, big-endian, at bytes 16 and 20.
    if (!size) size = `${png.readUInt32BE(16)}×${png.readUInt32BE(20)}`
  }
  const grimCpu = fs
    .readFileSync(cpuLog, 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(' ').reduce((a, b) => a + Number(b) * 1000, 0))
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b)
  const med = (xs: number[]) => pct(sorted(xs), 50)
  console.log(`${label}: ${N} captures of ${size}, PNG ${(bytes / 1024).toFixed(0)} KiB`)
  console.log(`  wall (spawn grim → PNG read by the agent): median ${f1(med(wall))} ms, p95 ${f1(pct(sorted(wall), 95))} ms, max ${f1(Math.max(...wall))} ms`)
  console.log(`  agent process CPU: median ${f1(med(agentCpu))} ms a capture`)
  console.log(`  grim CPU (user + system, GNU time, 10-ms ticks): median ${f1(med(grimCpu))} ms, max ${f1(Math.max(...grimCpu))} ms`)
}

console.log(`load average ${await loadAvg()}; cpus ${os.cpus().length}`)
await row('native 1280×720 (the headless output)', [])
await row('1920×1080 (grim -s 1.5)', ['-s', '1.5'])
stopCage()
fs.rmSync(dir, { recursive: true, force: true })
process.exit(0)
