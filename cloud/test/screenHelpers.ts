// Test helpers for screens: run the device side of pairing through the HTTP API.
import type { Harness } from './helpers.js'

export interface Paired {
  screenId: string
  registrationId: string
  pollSecret: string
  deviceSecret: string
}

/** Registers a device, claims its code with `key`, and takes the device secret from the first poll. */
export async function pairScreen(h: Harness, key: string, name = 'Screen', nodeId?: string | null): Promise<Paired> {
  const reg = await h.req('POST', '/v1/devices/register', null, { model: 'QM55B' })
  if (reg.statusCode !== 201) throw new Error(`register: ${reg.statusCode} ${reg.body}`)
  const { registrationId, pairingCode, pollSecret } = reg.json().data
  const pair = await h.req('POST', '/v1/screens/pair', key, { code: pairingCode, name, ...(nodeId !== undefined ? { nodeId } : {}) })
  if (pair.statusCode !== 201) throw new Error(`pair: ${pair.statusCode} ${pair.body}`)
  const poll = await h.req('GET', `/v1/devices/register/${registrationId}`, pollSecret)
  const data = poll.json().data
  if (data?.state !== 'paired' || !data.deviceSecret) throw new Error(`poll: ${poll.statusCode} ${poll.body}`)
  return { screenId: pair.json().data.id, registrationId, pollSecret, deviceSecret: data.deviceSecret }
}
