// The delivery tests' cloud on real sockets: its settings, a workspace and owner key made in
// the data folder before the server starts, the HTTP API over fetch, and a screen paired the
// way a device pairs (register, pair with the code, poll for the device secret).
import path from 'node:path'
import { buildApp, servicesOf } from '../../src/app.js'
import type { Running } from '../../src/server.js'
import { testConfig, type Config } from '../../src/config.js'

/** A cloud on free ports with its database in `dataDir`. */
export function socketConfig(dataDir: string): Config {
  return testConfig({ dataDir, dbFile: path.join(dataDir, 'svc.sqlite'), host: '127.0.0.1', httpPort: 0, mqttPort: 0, statusIntervalMs: 0 })
}

/** A workspace named `name` and its owner key, made in `dataDir` before the server starts: the key's secret. */
export async function ownerKey(dataDir: string, name: string): Promise<string> {
  const app = await buildApp(socketConfig(dataDir))
  try {
    const ws = await servicesOf(app).workspaces.create(name, 'us')
    return (await servicesOf(app).apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')).secret
  } finally {
    await app.close()
  }
}

/** One HTTP request to the running cloud: its status and JSON body. */
export async function api(s: Running, method: string, url: string, token: string | null, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`http://127.0.0.1:${s.httpPort}${url}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
  return { status: res.status, json: await res.json() }
}

/** A screen named `name` paired as a device pairs: its id and the device secret. */
export async function pair(s: Running, key: string, name = 'Lobby'): Promise<{ screenId: string; deviceSecret: string }> {
  const reg = (await api(s, 'POST', '/v1/devices/register', null, { model: 'QM55B' })).json.data
  const screenId = (await api(s, 'POST', '/v1/screens/pair', key, { code: reg.pairingCode, name })).json.data.id
  const deviceSecret = (await api(s, 'GET', `/v1/devices/register/${reg.registrationId}`, reg.pollSecret)).json.data.deviceSecret
  return { screenId, deviceSecret }
}
