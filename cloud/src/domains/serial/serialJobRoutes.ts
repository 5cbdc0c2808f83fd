// Serial jobs and the screen's panel profile:
//   POST /v1/screens/:id/serial          one job for one screen (202)
//   POST /v1/serial-jobs                 one job per reachable screen of a scope (202)
//   GET  /v1/serial-jobs/:id             read a job
//   GET  /v1/screens/:id/serial-jobs     a screen's jobs, newest first (paged with limit)
//   GET|PATCH /v1/screens/:id/panel      the panel profile carried in desired state
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../platform/http/Principal.js'
import { parsePage, PageQuery } from '../../platform/paging.js'
import { Data, IdParams, Nullable, Paged, StringEnum, errorResponses } from '../../platform/contract.js'
import { SerialEncodingInput, SerialEolInput } from './serialTemplateRoutes.js'

import { PANEL_PROTOCOLS, SerialJob } from './SerialJobService.js'
import { PANEL_MAX_POLL_SECONDS } from '../screens/index.js'
import type { Provisions } from '../../platform/provisions.js'

const commandFields = {
  templateId: Type.Optional(Type.String({ maxLength: 100, description: 'With itemId: a saved command.' })),
  itemId: Type.Optional(Type.String({ maxLength: 100 })),
  value: Type.Optional(Type.String({ description: 'Or a literal command: the text (ascii) or hex digits (hex), at most 512 characters.' })),
  encoding: Type.Optional(Nullable(SerialEncodingInput)),
  eol: Type.Optional(Nullable(SerialEolInput)),
  protocol: Type.Optional(StringEnum([...PANEL_PROTOCOLS, 'raw'], { description: "Reply framing. Default: the screen's panel profile, else raw." })),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 120_000, description: "Reply timeout on the device; the agent's default when absent." })),
}

const ScopeBody = Type.Object(
  {
    ...commandFields,
    scopeKind: Type.Optional(
      Type.Union([Type.Literal('screens'), Type.Literal('node'), Type.Literal('group'), Type.Literal('all')], {
        description: 'Default `all`: every screen the credential reaches (`group` when only groupId is sent).',
      }),
    ),
    screenIds: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 1000 })),
    scopeNodeId: Type.Optional(Type.String({ maxLength: 100 })),
    groupId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "A group's members (those the credential reaches)." })),
  },
  { additionalProperties: false },
)

export const PanelProfile = Nullable(
  Type.Object({
    protocol: StringEnum(PANEL_PROTOCOLS),
    setId: Type.Integer(),
    pollSeconds: Type.Integer(),
    portHint: Nullable(
      Type.String({
        description: 'Where the installer wired the panel (`/dev/ttyUSB0`, `192.168.1.50:1515`): a note for whoever services it, not sent to the device.',
      }),
    ),
  }),
)

const serialJobRoutes =
  (d: Pick<Provisions, 'screenPanels' | 'serialJobs'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { serialJobs, screenPanels } = d

    app.post(
      '/screens/:id/serial',
      {
        config: { permission: 'screen.edit' },
        schema: {
          tags: ['serial'],
          summary: "Send a serial command to the screen's panel (a saved command, or value + encoding + eol)",
          params: IdParams,
          body: Type.Object(commandFields, { additionalProperties: false }),
          response: { 202: Data(SerialJob), ...errorResponses },
        },
      },
      async (req, reply) => reply.code(202).send({ data: await serialJobs.queue(principalOf(req), req.params.id, req.body) }),
    )

    app.post(
      '/serial-jobs',
      {
        config: { permission: 'screen.edit' },
        schema: {
          tags: ['serial'],
          summary: 'Send a serial command to every reachable screen of a scope (screens, node, all); one job per screen',
          body: ScopeBody,
          response: { 202: Data(Type.Array(SerialJob)), ...errorResponses },
        },
      },
      async (req, reply) => reply.code(202).send({ data: await serialJobs.queueScope(principalOf(req), req.body) }),
    )

    app.get(
      '/serial-jobs/:id',
      {
        config: { permission: 'screen.view' },
        schema: { tags: ['serial'], summary: 'Get a serial job', params: IdParams, response: { 200: Data(SerialJob), ...errorResponses } },
      },
      async (req) => ({ data: await serialJobs.get(principalOf(req), req.params.id) }),
    )

    app.get(
      '/screens/:id/serial-jobs',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['serial'],
          summary: "A screen's serial jobs, newest first",
          params: IdParams,
          querystring: PageQuery,
          response: { 200: Paged(SerialJob), ...errorResponses },
        },
      },
      async (req) => serialJobs.listForScreen(principalOf(req), req.params.id, parsePage(req.query, { defaultLimit: null, max: 500 })),
    )

    app.get(
      '/screens/:id/panel',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['serial'],
          summary: "The screen's panel profile (null when none)",
          params: IdParams,
          response: { 200: Data(PanelProfile), ...errorResponses },
        },
      },
      async (req) => ({ data: await screenPanels.get(principalOf(req), req.params.id) }),
    )

    app.patch(
      '/screens/:id/panel',
      {
        config: { permission: 'screen.edit' },
        schema: {
          tags: ['serial'],
          summary: "Set the screen's panel profile (protocol null clears it); carried to the agent in desired state",
          params: IdParams,
          body: Type.Object(
            {
              protocol: Type.Optional(Nullable(StringEnum(PANEL_PROTOCOLS))),
              setId: Type.Optional(Type.Integer({ minimum: 0, maximum: 255, description: 'Set / monitor id on the bus; default 1.' })),
              pollSeconds: Type.Optional(
                Type.Integer({ minimum: 0, maximum: PANEL_MAX_POLL_SECONDS, description: 'Power poll interval; 0 = never; default 60.' }),
              ),
              portHint: Type.Optional(
                Nullable(
                  Type.String({
                    maxLength: 200,
                    description: 'Where the panel is wired (a serial device or an RS232-over-TCP address); null or empty clears it.',
                  }),
                ),
              ),
            },
            { additionalProperties: false },
          ),
          response: { 200: Data(PanelProfile), ...errorResponses },
        },
      },
      async (req) => ({ data: await screenPanels.set(principalOf(req), req.params.id, req.body) }),
    )
  }
export default serialJobRoutes
