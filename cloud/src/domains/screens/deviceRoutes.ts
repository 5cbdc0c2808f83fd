// /v1/devices/register: the device side of pairing.
// Both routes are Auth: none for API credentials: registration is open (limited per client
// IP), and the poll is authenticated here by the registration's own poll secret.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { screenTopicPrefix } from '@svc/shared/mqtt/index'
import { ApiError } from '../../platform/errors.js'
import { Data, ErrorBody, IdParams, Timestamp } from '../../platform/contract.js'
import { rateHeaders } from '../../platform/http/rateLimit.js'
import type { Provisions } from '../../platform/provisions.js'

/** Unauthenticated registrations per client IP per 60-second window. */
export const REGISTER_LIMIT_PER_MINUTE = 30

const Registration = Type.Object({
  registrationId: Type.String({ description: 'Prefix `reg_`.' }),
  pairingCode: Type.String({ description: '6 characters from A–Z and 2–9; show it on the screen.' }),
  pollSecret: Type.String({ description: 'Bearer secret for polling this registration; shown once.' }),
  expiresAt: Timestamp,
})

const MqttLink = Type.Object({
  url: Type.Union([Type.String(), Type.Null()], {
    description:
      'MQTT over TLS `mqtts://host:port` (or `mqtt://host:port` on a cloud whose public URL is not https); null when no such link is offered: then use `wsUrl`.',
  }),
  wsUrl: Type.String({ description: 'MQTT over WebSocket, `wss://host/mqtt` (`ws://` only on a cloud whose public URL is not https).' }),
  username: Type.String({ description: 'The screen id; the MQTT client id must be the same.' }),
  topicPrefix: Type.String({ description: '`svc/v1/screens/<id>/`.' }),
})

const PollAnswer = Type.Object({
  state: Type.Union([Type.Literal('pending'), Type.Literal('expired'), Type.Literal('paired')]),
  expiresAt: Type.Optional(Timestamp),
  screenId: Type.Optional(Type.String()),
  deviceSecret: Type.Optional(Type.String({ description: 'MQTT password; only in the first answer after pairing.' })),
  mqtt: Type.Optional(MqttLink),
})

/**
 * The broker addresses handed to a device. A cloud reached over https (SVC_PUBLIC_URL, else
 * the request itself) hands out TLS links only, never `mqtt://` or `ws://`: `url` is
 * SVC_MQTT_PUBLIC_URL when it is an MQTT URL, else the TLS listener on the public host, else
 * (not https) the TCP listener, else null; `wsUrl` is SVC_MQTT_PUBLIC_URL when it is a
 * WebSocket URL, else `/mqtt` on the public origin (which the reverse proxy terminates).
 */
export function brokerUrls(
  base: URL,
  listeners: { publicMqttUrl: string | null; tlsPort: number | null; tcpPort: number | null },
): { url: string | null; wsUrl: string } {
  const secure = base.protocol === 'https:'
  const plaintext = (u: string): boolean => /^(mqtt|ws):/.test(u)
  const given = listeners.publicMqttUrl && !(secure && plaintext(listeners.publicMqttUrl)) ? listeners.publicMqttUrl : null
  const givenMqtt = given && /^mqtts?:/.test(given) ? given : null
  const givenWs = given && /^wss?:/.test(given) ? given : null
  const url =
    givenMqtt ??
    (listeners.tlsPort !== null ? `mqtts://${base.hostname}:${listeners.tlsPort}` : null) ??
    (!secure && listeners.tcpPort !== null ? `mqtt://${base.hostname}:${listeners.tcpPort}` : null)
  return { url, wsUrl: givenWs ?? `${secure ? 'wss' : 'ws'}://${base.host}/mqtt` }
}

const deviceRoutes =
  (d: Pick<Provisions, 'broker' | 'config' | 'pairing' | 'rateLimiter'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { pairing, rateLimiter, config, broker } = d

    /** Where the device reaches the broker: SVC_PUBLIC_URL's host, else the host it asked. */
    function mqttLink(req: FastifyRequest, screenId: string) {
      const base = config.publicUrl ? new URL(config.publicUrl) : new URL(`${req.protocol}://${req.host}`)
      return {
        ...brokerUrls(base, { publicMqttUrl: config.mqttPublicUrl, tlsPort: broker.tlsPort, tcpPort: broker.tcpPort }),
        username: screenId,
        topicPrefix: screenTopicPrefix(screenId),
      }
    }

    app.post(
      '/devices/register',
      {
        config: { auth: 'none' },
        // Counted before the body is even parsed: this is the open door of the API.
        onRequest: async (req, reply) => {
          const d = await rateLimiter.hit(`register-ip:${req.ip}`, REGISTER_LIMIT_PER_MINUTE, 60)
          reply.headers(rateHeaders(d))
          if (!d.allowed) {
            throw new ApiError(
              'rate_limited',
              `Over the limit of ${d.limit} registrations per ${d.windowSeconds} seconds from this address; retry after ${d.resetSeconds} s.`,
              {
                extra: { limit: d.limit, windowSeconds: d.windowSeconds, retryAfterSeconds: d.resetSeconds },
                headers: { 'retry-after': String(d.resetSeconds) },
              },
            )
          }
        },
        // A device may POST without any body at all; treat that as an empty object. A body
        // that is there (JSON `null` included) is validated like any other.
        preValidation: async (req) => {
          if (req.body === undefined) req.body = {}
        },
        schema: {
          tags: ['devices'],
          summary: 'A device asks to be paired; answers the code to show',
          body: Type.Object({ model: Type.Optional(Type.String({ maxLength: 200 })), serialNumber: Type.Optional(Type.String({ maxLength: 200 })) }),
          response: { 201: Data(Registration), 422: ErrorBody, 429: ErrorBody, 500: ErrorBody, 503: ErrorBody },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await pairing.register({ model: req.body.model, serialNumber: req.body.serialNumber }) }),
    )

    app.get(
      '/devices/register/:id',
      {
        config: { auth: 'none' },
        schema: {
          tags: ['devices'],
          summary: 'The device polls its registration with Authorization: Bearer <pollSecret>',
          security: [{ pollSecret: [] }],
          params: IdParams,
          response: { 200: Data(PollAnswer), 401: ErrorBody, 404: ErrorBody, 500: ErrorBody, 503: ErrorBody },
        },
      },
      async (req) => {
        const m = /^Bearer[ ]+(\S+)[ ]*$/i.exec(req.headers.authorization ?? '')
        const result = await pairing.poll(req.params.id, m ? m[1]! : null)
        if (result.state !== 'paired') return { data: result }
        return { data: { ...result, mqtt: mqttLink(req, result.screenId) } }
      },
    )
  }
export default deviceRoutes
