// GET /v1/serial-presets: ready-made commands of each panel protocol for one set id
// (power, status, every input the codec knows, mute), computed by the shared codecs the
// agent uses; `templateItemsFromPreset` expands POST /v1/serial-templates' `preset`.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { PANEL_PROTOCOL_NAMES, isPanelProtocolName, panelPreset, panelPresets, presetSetIdProblem } from '@svc/shared/panels/index'
import { validation } from '../../platform/errors.js'
import { Data, errorResponses } from '../../platform/contract.js'

const PresetCommand = Type.Object({
  key: Type.String({ description: '`power.on`, `power.off`, `power.status`, `input.<source>`, `input.status`, `volume.mute`, `volume.unmute`.' }),
  name: Type.String(),
  value: Type.String({ description: 'As a serial-template item: text for `ascii`, hex pairs for `hex`.' }),
  encoding: Type.Union([Type.Literal('ascii'), Type.Literal('hex')]),
  eol: Type.Union([Type.Literal('none'), Type.Literal('cr')]),
  hexPreview: Type.String({ description: 'The exact bytes sent, as space-separated hex pairs.' }),
})

const PanelPreset = Type.Object({
  protocol: Type.Union(PANEL_PROTOCOL_NAMES.map((p) => Type.Literal(p))),
  label: Type.String(),
  commands: Type.Array(PresetCommand),
})

/** `setId` from a query or body value: an integer 0–255, default 1. */
function setIdOf(raw: unknown, where: string): number {
  if (raw === undefined || raw === null || raw === '') return 1
  const n = typeof raw === 'string' && /^\d{1,3}$/.test(raw) ? Number(raw) : raw
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 255)
    throw validation(`${where}setId must be an integer 0–255 (the panel's RS232 id), got ${JSON.stringify(raw)}`)
  return n
}

function protocolOf(raw: unknown, where: string) {
  if (!isPanelProtocolName(raw)) throw validation(`${where}protocol must be one of ${PANEL_PROTOCOL_NAMES.join(', ')}, got ${JSON.stringify(raw)}`)
  return raw
}

/** The template items a `preset: {protocol, setId?, keys?}` stands for (all its commands when `keys` is absent). */
export function templateItemsFromPreset(raw: unknown): { name: string; value: string; encoding: string; eol: string }[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw validation('preset must be an object {protocol, setId?, keys?}')
  const p = raw as Record<string, unknown>
  const protocol = protocolOf(p.protocol, 'preset.')
  const setId = setIdOf(p.setId, 'preset.')
  const problem = presetSetIdProblem(protocol, setId)
  if (problem) throw validation(`preset.setId: ${problem}`)
  const commands = panelPreset(protocol, setId).commands
  let chosen = commands
  if (p.keys !== undefined) {
    if (!Array.isArray(p.keys) || p.keys.length === 0 || !p.keys.every((k) => typeof k === 'string'))
      throw validation('preset.keys must be a non-empty array of command keys')
    const known = new Map(commands.map((c) => [c.key, c]))
    const unknown = (p.keys as string[]).filter((k) => !known.has(k))
    if (unknown.length)
      throw validation(`preset.keys: ${unknown.map((k) => JSON.stringify(k)).join(', ')} is not a ${protocol} command (known: ${[...known.keys()].join(', ')})`)
    chosen = [...new Set(p.keys as string[])].map((k) => known.get(k)!)
  }
  return chosen.map((c) => ({ name: c.name, value: c.value, encoding: c.encoding, eol: c.eol }))
}

const serialPresetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/serial-presets',
    {
      config: { permission: 'screen.view' },
      schema: {
        tags: ['serial'],
        summary: 'Ready-made panel commands (power, status, inputs, mute) per protocol for a set id, from the codecs the agent uses',
        querystring: Type.Object({
          protocol: Type.Optional(Type.String({ description: `One of ${PANEL_PROTOCOL_NAMES.join(', ')}; absent = all.` })),
          setId: Type.Optional(
            Type.String({
              description: "The panel's RS232 set id, 0–255 (default 1). Without `protocol`, protocols that cannot address it (NEC: 0–100) are left out.",
            }),
          ),
        }),
        response: { 200: Data(Type.Array(PanelPreset)), ...errorResponses },
      },
    },
    async (req) => {
      const setId = setIdOf(req.query.setId, '')
      if (req.query.protocol === undefined) return { data: panelPresets(setId) }
      const protocol = protocolOf(req.query.protocol, '')
      const problem = presetSetIdProblem(protocol, setId)
      if (problem) throw validation(`setId: ${problem}`)
      return { data: [panelPreset(protocol, setId)] }
    },
  )
}
export default serialPresetRoutes
