// The demo: one cloud, three simulated screen players (in-process agents), each driving a
// simulated panel of another protocol over a socat pseudo-terminal (TCP when socat is
// missing). Every step goes through the public API, as an operator would do it.
import { servicesOf } from '../cloud/src/app.js'
import { spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { createWriteStream, promises as fs, type WriteStream } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { startServer, type Running } from '../cloud/src/server.js'
import { loadConfig, type Config } from '../cloud/src/config.js'
import { Agent } from '../agent/src/Agent.js'
import { JsonLogger } from '../agent/src/runtime/Logger.js'
import { DisplayDriver } from '../agent/src/serial/DisplayDriver.js'
import { SerialJobRunner } from '../agent/src/serial/SerialJobRunner.js'
import { FirmwareSim, type FirmwareSimInfo } from '../firmware-sim/src/FirmwareSim.js'
import { panelProtocols, type PanelProtocolName } from '../shared/src/panels/index.js'
import { demoPng } from './png.js'
import type { Progress } from './progress.js'
import { createApiClient, ok, type ApiClient } from '../cloud/src/client/index.js'

/** Marks a folder the demo made, so a re-run may empty it (and never a folder it did not make). */
export const MARKER = '.svc-demo'

export const PANELS: readonly { protocol: PanelProtocolName; label: string; screen: string }[] = [
  { protocol: 'samsung-mdc', label: 'Samsung MDC', screen: 'Lobby' },
  { protocol: 'lg', label: 'LG', screen: 'Cafeteria' },
  { protocol: 'nec', label: 'NEC', screen: 'Meeting room' },
]

export interface DemoOptions {
  /** The demo's data folder (the cloud's SVC_DATA_DIR; players live under players/). */
  dataDir: string
  env: NodeJS.ProcessEnv
  progress: Progress
  /** Force TCP links to the panels even when socat is there. */
  tcp?: boolean
  /** Human notes (ports moved, socat missing, …). */
  note: (text: string) => void
}

export interface ScreenInfo {
  protocol: PanelProtocolName
  label: string
  name: string
  screenId: string | null
  playerUrl: string | null
  panelLink: string | null
  panelWebUrl: string | null
  powerOnHex: string
  jobId: string | null
}

export interface DemoResult {
  base: string
  httpPort: number
  mqttPort: number | null
  workspaceId: string | null
  apiKey: string | null
  transport: 'pty' | 'tcp'
  playlistId: string | null
  mediaId: string | null
  castId: string | null
  screens: ScreenInfo[]
}

interface Player {
  info: ScreenInfo
  sim: FirmwareSim
  simInfo: FirmwareSimInfo | null
  agent: Agent | null
  driver: DisplayDriver | null
  logFile: WriteStream | null
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Polls `fn` every `every` ms until it answers something, or throws after `ms`. */
async function until<T>(ms: number, what: string, fn: () => Promise<T | undefined | null | false>, every = 200): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > end) throw new Error(`timed out after ${ms / 1000}s waiting for ${what}`)
    await sleep(every)
  }
}

function hasSocat(): boolean {
  const r = spawnSync('socat', ['-V'], { stdio: 'ignore' })
  return !r.error && r.status === 0
}

/** Whether `port` can be bound on `host` now. */
async function portFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer()
    s.once('error', () => resolve(false))
    s.listen({ port, host, exclusive: true }, () => s.close(() => resolve(true)))
  })
}

const spaced = (b: Buffer): string =>
  b
    .toString('hex')
    .toUpperCase()
    .replace(/(..)(?=.)/g, '$1 ')

/** Empties a folder the demo made before (it carries the marker); refuses any other non-empty folder. */
export async function prepareDataDir(dir: string): Promise<'new' | 'reset'> {
  let entries: string[] = []
  try {
    entries = await fs.readdir(dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  let how: 'new' | 'reset' = 'new'
  if (entries.length > 0) {
    if (!entries.includes(MARKER))
      throw new Error(`${dir} is not empty and was not made by the demo; choose another folder with --data (the demo starts from a clean folder each run)`)
    for (const e of entries) await fs.rm(path.join(dir, e), { recursive: true, force: true })
    how = 'reset'
  }
  await fs.mkdir(dir, { recursive: true })
  await fs.writeFile(path.join(dir, MARKER), 'Made by `pnpm demo`; emptied on its next run.\n')
  return how
}

export class Demo {
  readonly #o: DemoOptions
  #cloud: Running | null = null
  #players: Player[] = []
  #stopped = false
  readonly result: DemoResult

  constructor(options: DemoOptions) {
    this.#o = options
    this.result = {
      base: '',
      httpPort: 0,
      mqttPort: null,
      workspaceId: null,
      apiKey: null,
      transport: 'pty',
      playlistId: null,
      mediaId: null,
      castId: null,
      screens: [],
    }
  }

  /** The typed API client (cloud/src/client), made once the owner key exists. */
  #apiClient: ApiClient | null = null
  get #api(): ApiClient {
    if (!this.#apiClient) throw new Error('no API key yet')
    return this.#apiClient
  }

  /** Runs every step in order; stops at the first failure. Answers whether all succeeded. */
  async run(): Promise<boolean> {
    const p = this.#o.progress
    const steps: [string, (u: (d: string) => void) => Promise<string>][] = [
      ['start the cloud', () => this.#startCloud()],
      ['bootstrap a workspace and its owner key', () => this.#bootstrap()],
      ['start three simulated panels', () => this.#startPanels()],
      ['start three screen players (agents)', () => this.#startAgents()],
      ['pair the players (claim each pairing code)', (u) => this.#pair(u)],
      ["set each screen's panel profile", (u) => this.#panelProfiles(u)],
      ['upload a generated PNG', (u) => this.#upload(u)],
      ['create a playlist with it', () => this.#playlist()],
      ['cast the playlist to every screen', (u) => this.#cast(u)],
      ['power on every panel over RS232 (serial jobs)', (u) => this.#serial(u)],
    ]
    for (const [name, fn] of steps) {
      if (this.#stopped) return false
      try {
        await p.run(name, fn)
      } catch {
        return false
      }
    }
    return true
  }

  async #startCloud(): Promise<string> {
    const env = this.#o.env
    const base = loadConfig({ ...env, SVC_DATA_DIR: this.#o.dataDir })
    const host = env.SVC_HOST || '127.0.0.1'
    const connectHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
    let httpPort = base.httpPort
    let mqttPort = base.mqttPort
    if (!env.SVC_HTTP_PORT && !(await portFree(httpPort, host))) {
      this.#o.note(`port ${httpPort} is taken; the cloud's HTTP listens on a free port instead`)
      httpPort = 0
    }
    if (!env.SVC_MQTT_PORT && mqttPort > 0 && !(await portFree(mqttPort, host))) {
      this.#o.note(`port ${mqttPort} is taken; MQTT over TCP listens on a free port instead`)
      mqttPort = 0
    }
    const config: Config = {
      ...base,
      host,
      httpPort,
      mqttPort,
      // The demo's own output is the story; the cloud only speaks up for warnings.
      logLevel: env.SVC_LOG_LEVEL || 'warn',
    }
    this.#cloud = await startServer(config)
    this.result.httpPort = this.#cloud.httpPort
    this.result.mqttPort = this.#cloud.mqttPort
    this.result.base = `http://${connectHost}:${this.#cloud.httpPort}`
    return `${this.result.base} (MQTT ${this.#cloud.mqttPort ?? 'off'}, data ${this.#o.dataDir})`
  }

  async #bootstrap(): Promise<string> {
    // What `pnpm cloud bootstrap` does, in-process on the same database.
    const { app } = this.#cloud!
    const ws = await servicesOf(app).workspaces.create('Demo', 'us')
    const { secret } = await servicesOf(app).apiKeys.createRoot(ws.id, ws.region, 'Owner key (demo)', 'all')
    this.result.workspaceId = ws.id
    this.result.apiKey = secret
    this.#apiClient = createApiClient(this.result.base, secret)
    const me = (await ok(this.#api.GET('/v1/me'))).data
    return `${ws.id}, key ${secret.slice(0, 14)}… (GET /v1/me: workspace "${me.workspace.name}")`
  }

  async #startPanels(): Promise<string> {
    const pty = !this.#o.tcp && hasSocat()
    if (!pty)
      this.#o.note(
        this.#o.tcp
          ? 'panels are linked over TCP (--tcp)'
          : 'socat is not installed: the panels are linked over TCP (tcp://127.0.0.1:<port>) instead of a pseudo-terminal; `apt-get install -y socat` for the serial-cable path',
      )
    this.result.transport = pty ? 'pty' : 'tcp'
    for (const def of PANELS) {
      const sim = new FirmwareSim({
        protocol: def.protocol,
        state: { power: 'off', id: 1 },
        ...(pty ? { pty: true } : { tcp: { port: 0 } }),
        web: { port: 0 },
      })
      const info: ScreenInfo = {
        protocol: def.protocol,
        label: def.label,
        name: `${def.screen} (${def.label})`,
        screenId: null,
        playerUrl: null,
        panelLink: null,
        panelWebUrl: null,
        powerOnHex: spaced(panelProtocols[def.protocol].powerOn(1)),
        jobId: null,
      }
      const player: Player = { info, sim, simInfo: null, agent: null, driver: null, logFile: null }
      this.#players.push(player)
      player.simInfo = await sim.start()
      info.panelLink = player.simInfo.ptyPath ?? `tcp://127.0.0.1:${player.simInfo.tcpPort}`
      info.panelWebUrl = player.simInfo.webUrl
      this.result.screens.push(info)
    }
    return this.#players.map((p) => `${p.info.label} on ${p.info.panelLink}`).join(', ')
  }

  async #startAgents(): Promise<string> {
    for (const [i, p] of this.#players.entries()) {
      const dir = path.join(this.#o.dataDir, 'players', `screen-${i + 1}`)
      await fs.mkdir(dir, { recursive: true })
      p.logFile = createWriteStream(path.join(dir, 'agent.log'), { flags: 'a' })
      const log = new JsonLogger({ write: (l) => p.logFile?.write(l), level: 'info' })
      // As `pnpm agent start --serial <link>` builds it (agent/src/cli.ts).
      p.driver = new DisplayDriver({ path: p.info.panelLink! })
      p.agent = new Agent({
        cloudUrl: this.result.base,
        dataDir: dir,
        playerPort: 0,
        playerHost: '127.0.0.1',
        device: { model: `demo player (${p.info.label} panel)`, serialNumber: `DEMO-${i + 1}` },
        serialRunner: new SerialJobRunner(p.driver),
        panelDriver: p.driver,
        pairing: { pollIntervalMs: 250, pollIntervalCapMs: 1000 },
        log,
      })
      await p.agent.start()
      p.info.playerUrl = `http://127.0.0.1:${p.agent.player.port}/`
    }
    return this.#players.map((p) => p.info.playerUrl).join(', ')
  }

  async #pair(update: (d: string) => void): Promise<string> {
    let paired = 0
    const codes: string[] = []
    update(`0/${this.#players.length} paired`)
    await Promise.all(
      this.#players.map(async (p) => {
        const agent = p.agent!
        const connected = once(agent, 'connected')
        const code = agent.pairingCode ?? (await withTimeout(once(agent, 'code'), 15_000, 'a pairing code'))[0].pairingCode
        codes.push(code)
        const screen = (await ok(this.#api.POST('/v1/screens/pair', { body: { code, name: p.info.name } }))).data
        p.info.screenId = screen.id
        await withTimeout(connected, 20_000, `${p.info.name} to connect to the broker`)
        paired++
        update(`${paired}/${this.#players.length} paired and connected`)
      }),
    )
    return `codes ${codes.join(', ')} → ${this.#players.map((p) => p.info.screenId).join(', ')}; all connected over MQTT`
  }

  async #panelProfiles(update: (d: string) => void): Promise<string> {
    for (const p of this.#players) {
      await ok(
        this.#api.PATCH('/v1/screens/{id}/panel', {
          params: { path: { id: p.info.screenId! } },
          body: { protocol: p.info.protocol, setId: 1, pollSeconds: 10 },
        }),
      )
    }
    // The profile travels in the desired state; the agents poll power and report it.
    let seen = 0
    await until(
      20_000,
      'every screen to report its panel power',
      async () => {
        seen = 0
        for (const p of this.#players) {
          const s = (await ok(this.#api.GET('/v1/screens/{id}', { params: { path: { id: p.info.screenId! } } }))).data
          if ((s.reported as { panel?: { power?: string } } | null)?.panel?.power) seen++
        }
        update(`${seen}/${this.#players.length} screens report their panel's power`)
        return seen === this.#players.length
      },
      300,
    )
    return `${this.#players.map((p) => `${p.info.label}: ${p.info.protocol}, set id 1`).join('; ')}; every panel reports power off`
  }

  async #upload(update: (d: string) => void): Promise<string> {
    const png = demoPng()
    const form = new FormData()
    form.append('name', 'Welcome (demo)')
    form.append('file', new Blob([png], { type: 'image/png' }), 'welcome.png')
    const item = (await ok(this.#api.POST('/v1/media/upload', { body: { file: new Blob([png]), name: 'Welcome (demo)' }, bodySerializer: () => form }))).data
    this.result.mediaId = item.id
    update(`${item.id} is ${item.state}`)
    const ready = await until(15_000, `${item.id} to be processed`, async () => {
      const m = (await ok(this.#api.GET('/v1/media/{id}', { params: { path: { id: item.id } } }))).data
      if (m.state === 'failed') throw new Error(`${item.id} failed processing`)
      return m.state === 'ready' ? m : undefined
    })
    return `${item.id}, ${png.length} bytes, ${ready.width ?? '?'}×${ready.height ?? '?'}, ready`
  }

  async #playlist(): Promise<string> {
    const pl = (
      await ok(this.#api.POST('/v1/playlists', { body: { name: 'Demo playlist', items: [{ kind: 'media', id: this.result.mediaId!, durationMs: 10_000 }] } }))
    ).data
    this.result.playlistId = pl.id
    return `${pl.id} (1 item, 10 s)`
  }

  async #cast(update: (d: string) => void): Promise<string> {
    const screenIds = this.#players.map((p) => p.info.screenId!)
    const cast = (
      await ok(this.#api.POST('/v1/casts', { body: { contentKind: 'playlist', contentId: this.result.playlistId!, scopeKind: 'screens', screenIds } }))
    ).data
    this.result.castId = cast.id
    update(`${cast.id} sent to ${cast.screenCount} screens; 0/${screenIds.length} playing`)
    await until(
      20_000,
      'every screen to report it plays the cast',
      async () => {
        let playing = 0
        for (const id of screenIds) {
          const s = (await ok(this.#api.GET('/v1/screens/{id}', { params: { path: { id } } }))).data
          if ((s.reported as { playing?: { castId?: string } } | null)?.playing?.castId === cast.id) playing++
        }
        update(`${cast.id} sent to ${cast.screenCount} screens; ${playing}/${screenIds.length} report playing it`)
        return playing === screenIds.length
      },
      250,
    )
    return `${cast.id}: ${screenIds.length}/${screenIds.length} screens report playing ${this.result.playlistId}`
  }

  async #serial(update: (d: string) => void): Promise<string> {
    const jobs: { p: Player; id: string }[] = []
    for (const p of this.#players) {
      const job = (
        await ok(
          this.#api.POST('/v1/screens/{id}/serial', {
            params: { path: { id: p.info.screenId! } },
            body: { value: p.info.powerOnHex, encoding: 'hex', eol: 'none', protocol: p.info.protocol },
          }),
        )
      ).data
      p.info.jobId = job.id
      jobs.push({ p, id: job.id })
    }
    const results = new Map<string, { status: string; replyHex: string | null }>()
    update(`0/${jobs.length} panels answered`)
    await until(
      30_000,
      'every serial job to complete',
      async () => {
        for (const j of jobs) {
          if (results.has(j.id)) continue
          const r = (await ok(this.#api.GET('/v1/serial-jobs/{id}', { params: { path: { id: j.id } } }))).data
          if (['ok', 'nak', 'timeout', 'failed'].includes(r.status)) results.set(j.id, r)
        }
        update(`${results.size}/${jobs.length} panels answered`)
        return results.size === jobs.length
      },
      250,
    )
    const bad = jobs.filter((j) => results.get(j.id)!.status !== 'ok' || j.p.sim.panel.model.state.power !== 'on')
    const lines = jobs.map((j) => {
      const r = results.get(j.id)!
      return `${j.p.info.label} [${j.p.info.powerOnHex}] → ${r.status} [${r.replyHex ?? ''}], panel power ${j.p.sim.panel.model.state.power}`
    })
    if (bad.length) throw new Error(lines.join('; '))
    return lines.join('; ')
  }

  /** Stops agents (they publish offline), panels (socat ends), then the cloud. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    await Promise.allSettled(this.#players.map((p) => p.agent?.stop()))
    await Promise.allSettled(this.#players.map((p) => p.driver?.stop()))
    await Promise.allSettled(this.#players.map((p) => p.sim.stop()))
    await Promise.allSettled(this.#players.map((p) => (p.logFile ? new Promise<void>((r) => p.logFile!.end(r)) : undefined)))
    if (this.#cloud) {
      // Let the cloud finish handling the players' goodbyes before its database closes
      // (the close itself does not wait for the presence handlers; see the report).
      const { broker, presence } = servicesOf(this.#cloud.app)
      const ids = this.#players.map((p) => p.info.screenId).filter((id): id is string => id !== null)
      const end = Date.now() + 3000
      while (ids.some((id) => broker.isConnected(id)) && Date.now() < end) await sleep(50)
      await sleep(50)
      await presence.idle()
      await this.#cloud.close()
    }
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms / 1000}s waiting for ${what}`)), ms)
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}
