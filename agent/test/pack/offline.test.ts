// The packed agent with Node alone. `agent pack` runs with only `node` on PATH (no pnpm,
// tar or dpkg-deb: the tarball alone, saying so in one line); the tarball, unpacked with
// tar, runs with only `node` on PATH too. It pairs with a real cloud, caches what it is
// told to play, takes a screenshot (puppeteer-core loaded from beside the program) and
// answers `svc-agent health`; then it is started again in a network
// namespace of its own (no network at all, as at a player's boot with the cable out): its
// player page answers and plays the playlist from the cache. How soon it answers (the
// 3-s target) is a bench figure: bench/offline-boot.ts.
import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import WebSocket from 'ws'
import { topics } from '@svc/shared/mqtt/index'
import { chromium, HANG_GUARD_MS, kiosk, missingTool, netns, socat, toolTest, toolsRequired } from '@svc/shared/testing'
import { startCloud } from '../cloud.js'
import { eventually, tempDir } from '../helpers.js'
import { bundledEntry } from '@svc/shared/testing/bundle'
import { CHROMIUM, fileServer, solidPng } from '../browser/chromium.js'
import { VERSION, nodeOnly, pack, run, unpack } from './packed.js'

const nodeDir = nodeOnly(t)
const packing = pack(t, [], { nodeOnlyPath: nodeDir })
const TARBALL = `svc-agent-${VERSION}-linux-${os.arch()}.tar.gz`
/** The packed program's environment: nothing but a PATH with node in it. */
const env = { PATH: nodeDir }

async function freePort(): Promise<number> {
  const srv = net.createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()))
  const { port } = srv.address() as net.AddressInfo
  await new Promise((r) => srv.close(r))
  return port
}

async function unpacked(): Promise<string> {
  const r = await packing
  if (r.code !== 0) throw new Error(`pack failed: ${r.stderr}`)
  return path.join(unpack(t, path.join(r.out, TARBALL)), 'svc-agent', 'bin', 'svc-agent')
}

t.test('`agent pack` with only node on PATH: the tarball, and one line saying there is no .deb', async (t) => {
  const r = await packing
  t.equal(r.code, 0, `exit 0 (stderr: ${r.stderr})`)
  t.equal(r.stdout, `${path.join(r.out, TARBALL)}\n`, 'stdout: the tarball path alone')
  t.match(r.stderr, /^agent: no dpkg-deb on this machine: built the tarball only[^\n]*\n$/, 'stderr: one line')
  t.same(fs.readdirSync(r.out), [TARBALL], 'nothing else in the folder')
  const list = execFileSync('tar', ['-tzvf', path.join(r.out, TARBALL)], { encoding: 'utf8' })
  t.match(list, /^-rwxr-xr-x root\/root .* svc-agent\/bin\/svc-agent$/m, 'an executable launcher')
  t.match(list, / svc-agent\/lib\/svc-agent\.mjs$/m, 'the program')
  t.match(list, / svc-agent\/lib\/puppeteer-core\.mjs$/m, 'the screenshot module')
  t.match(
    list,
    new RegExp(` svc-agent/lib/prebuilds/linux-${os.arch()}/@serialport\\+bindings-cpp\\.glibc\\.node$`, 'm'),
    'the serial binding of this architecture',
  )
  const others = list.split('\n').filter((l) => /prebuilds\/./.test(l) && !l.includes(`prebuilds/linux-${os.arch()}`))
  t.same(others, [], 'no binding of another architecture')
  t.notMatch(list, /node_modules/, 'no node_modules')
  t.match(list, / svc-agent\/THIRD-PARTY-LICENSES\.txt$/m)
})

t.test('`agent pack` refuses bad arguments: one line and the usage on stderr, exit 2', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['--arch', 'mips'], /^agent: --arch must be x64 or arm64, got "mips"\nusage:/],
    [['--bogus'], /^agent: Unknown option '--bogus'/],
    [['--out', ' '], /^agent: --out needs a folder\n/],
    [['--deb-compression', 'lzma'], /^agent: --deb-compression must be xz, zstd, gzip, none, got "lzma"\nusage:/],
  ]
  const cli = await bundledEntry('agent/src/cli.ts')
  const runs = cases.map(([args, want]) => ({ want, p: run(t, process.execPath, [cli, 'pack', ...args]) }))
  for (const { want, p } of runs) {
    t.same(await p.exited, { code: 2, signal: null })
    t.match(p.stderr(), want)
    t.equal(p.stdout(), '')
  }
})

t.test('the packed program: --help, bad arguments, pack refused, health of an agent that is not there', async (t) => {
  const bin = await unpacked()
  const help = run(t, bin, ['--help'], { env })
  t.same(await help.exited, { code: 0, signal: null }, help.stderr())
  t.match(help.stdout(), /^ {2}svc-agent start --cloud URL/m, 'the usage names the program as installed')
  t.notMatch(help.stdout(), /pack/, 'and leaves out what it cannot do')
  const version = run(t, bin, ['--version'], { env })
  t.same(await version.exited, { code: 0, signal: null })
  t.equal(version.stdout(), `${VERSION}\n`, '--version: the version it was bundled as')
  const bad = run(t, bin, ['start', '--player-port', '7070'], { env })
  t.same(await bad.exited, { code: 2, signal: null })
  t.match(bad.stderr(), /^svc-agent: --cloud is required/)
  const packs = run(t, bin, ['pack'], { env })
  t.same(await packs.exited, { code: 2, signal: null })
  t.equal(packs.stderr(), 'svc-agent: pack runs from the repository (pnpm --silent agent pack), not from a packed agent\n')
  const free = await freePort()
  const down = run(t, bin, ['health', '--player-port', String(free)], { env })
  t.same(await down.exited, { code: 1, signal: null })
  t.match(JSON.parse(down.stdout()), { agent: 'down', url: `http://127.0.0.1:${free}/`, error: 'ECONNREFUSED' })
  const badHealth = run(t, bin, ['health', '--wait', 'soon'], { env })
  t.same(await badHealth.exited, { code: 2, signal: null })
  t.match(badHealth.stderr(), /^svc-agent: --wait must be a whole number/)
})

toolTest(t, socat, 'the packed program opens a serial port through the binding beside it', async (t) => {
  const bin = await unpacked()
  const dir = tempDir(t)
  const link = path.join(dir, 'panel')
  run(t, 'socat', [`pty,raw,echo=0,link=${link}`, `pty,raw,echo=0,link=${link}-far`])
  t.ok(await eventually('socat making the pseudo-terminal', () => fs.existsSync(link) || undefined), 'a pseudo-terminal')
  const agent = run(t, bin, ['start', '--cloud', 'http://127.0.0.1:1', '--data', path.join(dir, 'data'), '--player-port', '0', '--serial', link], { env })
  const open = await eventually('the serial port open line', () => agent.json().find((l) => l.msg === 'serial port open'))
  t.match(open, { path: link }, `serial port open (stderr: ${agent.stderr()})`)
  agent.child.kill('SIGTERM')
  t.same(await agent.exited, { code: 0, signal: null })
})

toolTest(t, kiosk, 'the kiosk unit: it waits for the page, then Chromium in cage shows it', async (t) => {
  const bin = await unpacked()
  const top = path.dirname(path.dirname(bin))
  // The unpacked folder stands for /opt/svc-agent; the kiosk's user must reach it.
  fs.chmodSync(path.dirname(top), 0o755)
  const unit = fs.readFileSync(path.join(top, 'share/systemd/svc-kiosk.service'), 'utf8')
  const port = await freePort()
  /** A command line of the unit, as systemd runs it here. */
  const command = (key: string): string[] =>
    new RegExp(`^${key}=(.*)$`, 'm').exec(unit)![1]!.replaceAll('/opt/svc-agent', top).replaceAll('${SVC_AGENT_PLAYER_PORT}', String(port)).split(' ')
  const [preCmd, ...preArgs] = command('ExecStartPre')
  const pre = run(t, preCmd!, preArgs, { env })
  const agent = run(t, bin, ['start', '--cloud', 'http://127.0.0.1:1', '--data', tempDir(t), '--player-port', String(port)], { env })
  t.same(await pre.exited, { code: 0, signal: null }, `ExecStartPre returns once the page answers (${pre.stdout().trim()})`)
  t.match(JSON.parse(pre.stdout()), { agent: 'ok' })

  // ExecStart as an unprivileged user (as svc-kiosk), on wlroots' headless output: no screen here.
  const home = tempDir(t)
  execFileSync('chown', ['nobody', home])
  const [cmd, ...args] = command('ExecStart')
  const vars = [`HOME=${home}`, `XDG_RUNTIME_DIR=${home}`, 'WLR_BACKENDS=headless', 'WLR_RENDERER=pixman', 'WLR_LIBINPUT_NO_DEVICES=1']
  const browser = run(t, 'runuser', ['-u', 'nobody', '--', 'env', '-i', 'PATH=/usr/bin:/bin', ...vars, `SVC_AGENT_PLAYER_PORT=${port}`, cmd!, ...args], {
    group: true,
  })
  const health = async () => (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as { pages: number }
  const shown = await eventually('the kiosk page connecting', async () => ((await health()).pages === 1 ? true : undefined)).catch((err: Error) => {
    throw new Error(`${err.message} (browser: ${browser.stderr().slice(-1500)})`)
  })
  t.ok(shown, 'the kiosk page connects')
  process.kill(-browser.child.pid!, 'SIGTERM')
  await browser.exited
  agent.child.kill('SIGTERM')
  t.same(await agent.exited, { code: 0, signal: null })
})

toolTest(t, netns, 'paired and cached, then started with no network: the page answers and plays from the cache', async (t) => {
  const bin = await unpacked()
  const png = solidPng(64, 36, [230, 20, 20])
  const media = await fileServer(t, { 'red.png': { body: png, type: 'image/png' } })
  const cloud = await startCloud(t)
  const data = tempDir(t)

  // 1. Online: pairs, caches the playlist's file (and takes a screenshot, where there is a browser).
  const noBrowser = missingTool(chromium)
  const first = run(t, bin, ['start', '--cloud', cloud.base, '--data', data, '--player-port', '0'], {
    env: { ...env, ...(noBrowser ? {} : { CHROME_PATH: CHROMIUM }) },
  })
  const code = await eventually('a pairing code', () => first.json().find((l) => l.msg === 'pairing code')?.pairingCode as string | undefined)
  const screenId = await cloud.pair(code)
  await cloud.waitFor(topics.status(screenId), (p) => p.status === 'online')
  const reported = await cloud.waitFor(topics.reported(screenId), (p) => p.version === 0)
  t.equal(reported.agentVersion, VERSION, 'the packed program reports the version it was bundled as')
  const port = Number(new URL(String(first.json().find((l) => l.msg === 'player page listening')?.url)).port)
  await cloud.publish(topics.desired(screenId), {
    version: 7,
    screenId,
    timezone: 'UTC',
    assignment: {
      contentKind: 'playlist',
      contentId: 'pl_red',
      content: { name: 'Red', items: [{ contentKind: 'media', contentId: 'med_red', durationMs: 5000, url: media.url('red.png'), mimeType: 'image/png' }] },
    },
    schedule: null,
    casts: [],
    emergency: null,
    panel: null,
    generatedAt: new Date().toISOString(),
  })
  const cachedState = await eventually('the page playing the file from the cache', async () => {
    const s = (await (await fetch(`http://127.0.0.1:${port}/state`)).json()) as { type: string; content?: { items?: Array<{ url: string }> } }
    return s.content?.items?.[0]?.url.startsWith('/media/') ? s : undefined
  })
  t.ok(cachedState, 'online, the page plays the file from the cache')
  t.equal(media.hits.length, 1, 'downloaded once')

  // Screenshots load puppeteer-core from the file beside the program.
  if (noBrowser) {
    if (toolsRequired()) t.fail(`${noBrowser} (CI is set: a missing tool fails)`)
    else t.comment(`${noBrowser}; the packed agent's screenshot is not tried`)
  } else {
    const shot = (await (await cloud.request('POST', `/v1/screens/${screenId}/screenshot`)).json()) as { data: { id: string } }
    const done = await eventually('the screenshot done', async () => {
      const s = ((await (await cloud.request('GET', `/v1/screenshots/${shot.data.id}`)).json()) as { data: Record<string, unknown> }).data
      return s.status === 'ok' || s.status === 'failed' ? s : undefined
    })
    t.match(done, { status: 'ok' }, 'a screenshot from the packed agent')
  }

  // `svc-agent health`: the agent answers; the kiosk page is silent until one connects.
  const health = async (args: string[]) => {
    const p = run(t, bin, ['health', '--player-port', String(port), ...args], { env })
    const { code } = await p.exited
    return { code, out: JSON.parse(p.stdout()) as Record<string, unknown> }
  }
  t.match(await health([]), { code: 0, out: { agent: 'ok', pages: 0 } }, 'health: the agent answers')
  t.match(await health(['--page-silent-after', '1']), { code: 3, out: { agent: 'ok', page: 'silent', pages: 0 } }, 'no kiosk page: exit 3')
  const ws = new WebSocket(`ws://127.0.0.1:${port}/feed`)
  t.after(() => ws.terminate())
  await new Promise((r, j) => ws.once('open', r).once('error', j))
  // Like the kiosk page, only more often (a loaded machine may take a second to start the check).
  const alive = setInterval(() => ws.send('{"type":"alive"}'), 200)
  t.match(await health(['--page-silent-after', '1']), { code: 0, out: { agent: 'ok', page: 'ok', pages: 1 } }, 'a page that speaks: exit 0')
  clearInterval(alive)
  ws.close()

  first.child.kill('SIGTERM')
  t.same(await first.exited, { code: 0, signal: null }, 'SIGTERM: exit 0')

  // 2. No network: a namespace with nothing but its own loopback.
  const ns = `svc-pack-${process.pid}`
  execFileSync('ip', ['netns', 'add', ns])
  t.after(() => void spawnSync('ip', ['netns', 'del', ns]))
  execFileSync('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up'])
  // Inside the namespace: asks the default player port until it answers, then the page and the file.
  const probe = run(t, 'ip', [
    'netns',
    'exec',
    ns,
    process.execPath,
    '-e',
    `(async () => {
      const end = Date.now() + ${HANG_GUARD_MS}
      for (;;) {
        try {
          const res = await fetch('http://127.0.0.1:7070/state')
          const state = await res.json()
          if (state.type !== 'playing') throw new Error('not yet')
          const page = (await fetch('http://127.0.0.1:7070/')).status
          const file = await fetch('http://127.0.0.1:7070' + state.content.items[0].url)
          const bytes = (await file.arrayBuffer()).byteLength
          console.log(JSON.stringify({ state, page, file: { status: file.status, type: file.headers.get('content-type'), bytes } }))
          return
        } catch {
          if (Date.now() > end) return console.log(JSON.stringify({ timeout: 'gave up after ${HANG_GUARD_MS / 60_000} minutes waiting for the offline player page to answer with the cached playlist' }))
          await new Promise((r) => setTimeout(r, 20))
        }
      }
    })()`,
  ])
  const offline = run(t, 'ip', ['netns', 'exec', ns, '/usr/bin/env', '-i', `PATH=${nodeDir}`, bin, 'start', '--cloud', cloud.base, '--data', data])
  await probe.exited
  const seen = JSON.parse(probe.stdout()) as { state: Record<string, any>; page: number; file: Record<string, unknown>; timeout?: string }
  t.notOk(seen.timeout, `the page answered (agent stdout: ${offline.stdout()} stderr: ${offline.stderr()})`)
  t.match(seen.state, { type: 'playing', screenId, connected: false, version: 7, source: 'assignment', contentId: 'pl_red' }, 'the cached desired state')
  t.equal(seen.state.content.items[0].url, cachedState!.content!.items![0]!.url, 'its file from the cache')
  t.equal(seen.page, 200, 'the kiosk page')
  t.same(seen.file, { status: 200, type: 'image/png', bytes: png.length }, 'the file itself')
  t.ok(
    await eventually('the offline agent saying it cannot reach the broker', () =>
      offline.json().some((l) => /^cannot reach the broker/.test(String(l.msg))) ? true : undefined,
    ),
    'and it is offline: the broker cannot be reached',
  )
  t.notOk(
    offline.json().some((l) => l.msg === 'pairing code'),
    'no pairing: the stored credential',
  )
  offline.child.kill('SIGTERM')
  t.same(await offline.exited, { code: 0, signal: null }, 'SIGTERM: exit 0')
  t.equal(media.hits.length, 1, 'nothing downloaded again')
})
