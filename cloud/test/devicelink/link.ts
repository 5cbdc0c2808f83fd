// Shared set-up for the device-link tests: a real cloud (startServer on a temp dataDir,
// ManualClock, in-memory content library) and real MQTT v5 clients as devices.
import { servicesOf } from '../../src/app.js'
import type { Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt'
import { parseDesiredState, topics, type DesiredState, type Reported } from '@svc/shared/mqtt/index'
import { startServer, type Running } from '../../src/server.js'
import { testConfig, type Config } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'
import type { AppDeps } from '../../src/app.js'
import { until } from '../fixtures/processes.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

export interface Device {
  screenId: string
  deviceSecret: string
  mqtt: { url: string }
}

export interface Cloud {
  running: Running
  clock: ManualClock
  content: InMemoryContentResolver
  workspaceId: string
  apiKey: string
  call(method: string, path: string, body?: unknown, token?: string | null): Promise<{ status: number; body: any }>
  pair(name?: string): Promise<Device>
}

export function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-link-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Starts a cloud; `dataDir` with a file database keeps the data across a restart (the broker keeps nothing). */
export async function startCloud(
  t: Test,
  opts: {
    dataDir?: string
    fileDb?: boolean
    clock?: ManualClock
    content?: InMemoryContentResolver
    workspace?: { id: string; apiKey: string }
    config?: Partial<Config>
    /** More of the app's seams (a broker store, …). */
    deps?: AppDeps
  } = {},
): Promise<Cloud> {
  const dir = opts.dataDir ?? tempDir(t)
  const clock = opts.clock ?? new ManualClock('2026-06-01T12:00:00.000Z')
  const content = opts.content ?? new InMemoryContentResolver()
  const config = testConfig({
    dataDir: dir,
    dbFile: opts.fileDb ? join(dir, 'svc.sqlite') : ':memory:',
    httpPort: 0,
    mqttPort: 0,
    host: '127.0.0.1',
    ...opts.config,
  })
  const running = await startServer(config, { clock, content, ...opts.deps })
  let closed = false
  const close = running.close
  running.close = async () => {
    if (closed) return
    closed = true
    await close()
  }
  t.after(() => running.close())
  const services = servicesOf(running.app)
  let workspaceId: string
  let apiKey: string
  if (opts.workspace) ({ id: workspaceId, apiKey } = opts.workspace)
  else {
    const ws = await services.workspaces.create('Link test', 'us')
    workspaceId = ws.id
    apiKey = (await services.apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')).secret
  }
  const base = `http://127.0.0.1:${running.httpPort}`
  const call: Cloud['call'] = async (method, path, body, token = apiKey) => {
    const res = await fetch(base + path, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
    return { status: res.status, body: await res.json() }
  }
  return {
    running,
    clock,
    content,
    workspaceId,
    apiKey,
    call,
    async pair(name = 'Screen') {
      const reg = (await call('POST', '/v1/devices/register', {}, null)).body.data
      const pair = await call('POST', '/v1/screens/pair', { code: reg.pairingCode, name })
      if (pair.status !== 201) throw new Error(`pair ${pair.status}`)
      const poll = (await call('GET', `/v1/devices/register/${reg.registrationId}`, undefined, reg.pollSecret)).body.data
      await servicesOf(running.app).desiredPublisher.idle()
      return poll as Device
    },
  }
}

/** A device: the mqtt 5 client, persistent session, client id = screen id; collects desired states. */
export class DeviceClient {
  states: DesiredState[] = []
  private waiters: { pred: (s: DesiredState) => boolean; resolve: (s: DesiredState) => void }[] = []
  constructor(
    readonly client: MqttClient,
    readonly screenId: string,
  ) {
    client.on('message', (topic, payload) => {
      if (topic !== topics.desired(screenId)) return
      const r = parseDesiredState(payload)
      if (!r.ok) throw new Error(`invalid desired state: ${JSON.stringify(r.errors)}`)
      this.states.push(r.value)
      this.waiters = this.waiters.filter((w) => (w.pred(r.value) ? (w.resolve(r.value), false) : true))
    })
  }
  /** The newest version received (what the agent would hold). */
  get latest(): DesiredState | undefined {
    return [...this.states].sort((a, b) => b.version - a.version)[0]
  }
  /** Resolves with the first desired state (already received or coming) that matches. */
  next(pred: (s: DesiredState) => boolean, timeoutMs = HANG_GUARD_MS): Promise<DesiredState> {
    const hit = this.states.find(pred)
    if (hit) return Promise.resolve(hit)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching desired state; have versions ${this.states.map((s) => s.version)}`)), timeoutMs)
      this.waiters.push({ pred, resolve: (s) => (clearTimeout(timer), resolve(s)) })
    })
  }
}

export async function connectDevice(t: Test, url: string, d: Device, extra: Partial<IClientOptions> = {}, subscribe = true): Promise<DeviceClient> {
  const client = await connectAsync(url, {
    clientId: d.screenId,
    username: d.screenId,
    password: d.deviceSecret,
    // mqtt.js 5 speaking MQTT 3.1.1: Aedes 1.x does not serve protocol 5.
    protocolVersion: 4,
    clean: false,
    reconnectPeriod: 0,
    connectTimeout: 5000,
    ...extra,
  })
  t.after(() => client.endAsync(true).catch(() => undefined))
  const dev = new DeviceClient(client, d.screenId)
  if (subscribe) await client.subscribeAsync([topics.desired(d.screenId), topics.jobs(d.screenId)], { qos: 1 })
  return dev
}

/**
 * Waits (at most `ms`) until the cloud's broker no longer holds a connection of this screen:
 * its socket's close has reached the broker's listeners, so presence has the drop queued
 * (`presence.idle()` then waits for it). True once it has.
 */
export async function droppedAtBroker(c: Cloud, screenId: string, ms = HANG_GUARD_MS): Promise<boolean> {
  return (await until(ms, () => (servicesOf(c.running.app).broker.isConnected(screenId) ? undefined : true), 5)) === true
}

/** The device reports what it holds as the agent does: its version and what plays (the takeover it holds), with the panel's power. */
export async function reportPlaying(
  c: Cloud,
  dev: DeviceClient,
  pred: (d: NonNullable<DeviceClient['latest']>) => boolean,
  power: 'on' | 'off',
): Promise<void> {
  const state = await dev.next(pred)
  const playing = state.emergency
    ? { source: 'emergency' as const, contentKind: state.emergency.contentKind, contentId: state.emergency.contentId, emergencyId: state.emergency.id }
    : { source: 'cast' as const, contentKind: state.casts[0]!.contentKind, contentId: state.casts[0]!.contentId, castId: state.casts[0]!.id }
  const reported: Reported = {
    version: state.version,
    playing,
    panel: { power, input: 'hdmi1', at: c.clock.now().toISOString() },
    at: c.clock.now().toISOString(),
  }
  await dev.client.publishAsync(topics.reported(dev.screenId), JSON.stringify(reported), { qos: 1, retain: true })
  const s = servicesOf(c.running.app)
  await s.presence.flushReported()
  await s.presence.idle()
  await s.takeoverDelivery.idle()
}
