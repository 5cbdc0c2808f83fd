// /v1/serial-templates: saved RS232 commands. Bodies are checked
// by SerialTemplateService so each 422 names its cause (no name, no value, too long, no
// bytes, duplicate id, over 200 commands); the schemas here only fix the JSON shape.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../platform/http/Principal.js'
import { Data, IdParams, Nullable, StringEnum, Timestamp, errorResponses } from '../../platform/contract.js'
import { SERIAL_ENCODINGS, SERIAL_EOLS } from '@svc/shared/serial/index'
import { PANEL_PROTOCOL_NAMES } from '@svc/shared/panels/index'

// Read leniently (case and spaces ignored; anything else is the default), so typed as strings.
export const SerialEncodingInput = Type.String({
  maxLength: 40,
  description: `${SERIAL_ENCODINGS.join(' or ')} (case ignored); anything else, or absent, is ascii.`,
  examples: ['hex'],
})
export const SerialEolInput = Type.String({
  maxLength: 40,
  description: `${SERIAL_EOLS.join(', ')} (case ignored); anything else, or absent, is none.`,
  examples: ['cr'],
})
import { templateItemsFromPreset } from './serialPresetRoutes.js'
import type { Provisions } from '../../platform/provisions.js'

export const SerialTemplateItem = Type.Object({
  id: Type.String({ description: 'Prefix `sti_`. Kept across edits.' }),
  name: Type.String(),
  value: Type.String({ description: 'Literal text for `ascii`, hex digits for `hex`; at most 512 characters.' }),
  encoding: Type.Union([Type.Literal('ascii'), Type.Literal('hex')]),
  eol: Type.Union([Type.Literal('none'), Type.Literal('cr'), Type.Literal('lf'), Type.Literal('crlf')]),
  hexPreview: Type.String({ description: 'The exact bytes sent, as space-separated hex pairs.' }),
})

export const SerialTemplate = Type.Object({
  id: Type.String({ description: 'Prefix `sertpl_`.' }),
  spaceId: Type.String(),
  name: Type.String({ description: 'Cut to 120 characters.' }),
  model: Nullable(Type.String()),
  nodeId: Nullable(Type.String({ description: 'Home location; null = workspace root.' })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  items: Type.Array(SerialTemplateItem),
})

const TemplateInput = Type.Object(
  {
    name: Type.Optional(Nullable(Type.String({ description: 'Required on create; cut to 120 characters.' }))),
    model: Type.Optional(Nullable(Type.String({ description: 'Free-text panel model, or null.' }))),
    nodeId: Type.Optional(Nullable(Type.String({ maxLength: 100, description: 'Home location, or null.' }))),
    items: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Type.Optional(Nullable(Type.String({ description: 'An existing command id (sti_…) keeps that command; leave out to add one.' }))),
            name: Type.Optional(Nullable(Type.String({ description: 'Required; cut to 120 characters.' }))),
            value: Type.Optional(Nullable(Type.String({ description: 'Required: the text (ascii) or hex digits (hex), at most 512 characters.' }))),
            encoding: Type.Optional(Nullable(SerialEncodingInput)),
            eol: Type.Optional(Nullable(SerialEolInput)),
          },
          { additionalProperties: false },
        ),
        { description: 'At most 200 commands; a PATCH with items replaces the stored list.' },
      ),
    ),
  },
  { additionalProperties: false },
)

const CreateInput = Type.Object(
  {
    ...TemplateInput.properties,
    preset: Type.Optional(
      Type.Object(
        {
          protocol: StringEnum(PANEL_PROTOCOL_NAMES, { description: 'The panel protocol, as in GET /v1/serial-presets.' }),
          setId: Type.Optional(Type.Integer({ minimum: 0, maximum: 255, description: "The panel's RS232 id; default 1 (each protocol narrows the range)." })),
          keys: Type.Optional(
            Type.Array(Type.String({ maxLength: 100 }), {
              minItems: 1,
              maxItems: 200,
              description: 'Command keys of the preset (`power.on`, `input.hdmi1`, …); absent = all of them.',
            }),
          ),
        },
        {
          description:
            'The template starts with these commands of GET /v1/serial-presets, before `items`. A key the protocol does not have, or a set id it does not take, is a 422 naming it.',
        },
      ),
    ),
  },
  { additionalProperties: false },
)

const serialTemplateRoutes =
  (d: Pick<Provisions, 'serialTemplates'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { serialTemplates } = d

    app.get(
      '/serial-templates',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['serial'],
          summary: 'List serial templates at the locations this credential reaches (not paged)',
          response: { 200: Data(Type.Array(SerialTemplate)), ...errorResponses },
        },
      },
      async (req) => ({ data: await serialTemplates.list(principalOf(req)) }),
    )

    app.post(
      '/serial-templates',
      {
        config: { permission: 'screen.edit' },
        schema: {
          tags: ['serial'],
          summary: 'Create a serial template, optionally from a panel preset',
          body: CreateInput,
          response: { 201: Data(SerialTemplate), ...errorResponses },
        },
      },
      async (req, reply) => {
        const { preset, ...body } = req.body as Record<string, unknown>
        // A preset's commands come first, as ordinary items; the service checks them like any other.
        if (preset !== undefined) body.items = [...templateItemsFromPreset(preset), ...((body.items as unknown[] | undefined) ?? [])]
        return reply.code(201).send({ data: await serialTemplates.create(principalOf(req), body) })
      },
    )

    app.get(
      '/serial-templates/:id',
      {
        config: { permission: 'screen.view' },
        schema: { tags: ['serial'], summary: 'Get a serial template', params: IdParams, response: { 200: Data(SerialTemplate), ...errorResponses } },
      },
      async (req) => ({ data: await serialTemplates.get(principalOf(req), req.params.id) }),
    )

    app.patch(
      '/serial-templates/:id',
      {
        config: { permission: 'screen.edit' },
        schema: {
          tags: ['serial'],
          summary: 'Edit a serial template; a given items list replaces the stored one, keeping the ids it names',
          params: IdParams,
          body: TemplateInput,
          response: { 200: Data(SerialTemplate), ...errorResponses },
        },
      },
      async (req) => ({ data: await serialTemplates.update(principalOf(req), req.params.id, req.body) }),
    )

    app.delete(
      '/serial-templates/:id',
      {
        config: { permission: 'screen.edit' },
        schema: {
          tags: ['serial'],
          summary: 'Delete a serial template (no restore)',
          params: IdParams,
          response: { 200: Data(Type.Object({ ok: Type.Literal(true) })), ...errorResponses },
        },
      },
      async (req) => ({ data: await serialTemplates.remove(principalOf(req), req.params.id) }),
    )
  }
export default serialTemplateRoutes
