// Agent updates:
//   POST   /v1/agent-releases                   upload a packed agent tarball and its signature (multipart: file, signature)
//   GET    /v1/agent-releases                   releases, newest first (?version=)
//   GET    /v1/agent-releases/:id
//   DELETE /v1/agent-releases/:id               unless an open rollout moves screens to its version
//   GET    /v1/devices/agent-releases/:id/tarball   the device's download (device credential)
//   POST   /v1/agent-rollouts                   {version, nodeId | screenIds, stages, stageMinutes, abortIf: {unhealthyPercent}}
//   GET    /v1/agent-rollouts                   rollouts, newest first (?state=), each with its counts per stage
//   GET    /v1/agent-rollouts/:id
//   GET    /v1/agent-rollouts/:id/screens       per screen: stage, state, reason (?state=)
//   POST   /v1/agent-rollouts/:id/pause|resume|abort
// Uploading releases and running rollouts put code on players: `account.edit` (owners and
// admins); reading them is `screen.view` (docs/decisions.md, "Agent updates"). Releases
// belong to the whole workspace: workspace-wide credentials only (a pinned one gets 403).
// A rollout follows the location pin: a pinned credential sees and acts on the rollouts
// whose screens are all within its location (404 for the others).
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import multipart from '@fastify/multipart'
import { principalOf } from '../../platform/http/Principal.js'
import { Data, Deleted, ErrorBody, IdParams, Paged, StringEnum, errorResponses } from '../../platform/contract.js'
import { ApiError, validation } from '../../platform/errors.js'
import { checkNoNul } from '../../platform/http/jsonBounds.js'
import { PageQuery, pageQuery, parsePage } from '../../platform/paging.js'

import type { StagedFile } from '../media/index.js'
import type { PackedAgent } from './tarball.js'
import type { Provisions } from '../../platform/provisions.js'
import { AgentRelease } from './AgentReleaseService.js'
import { AgentRollout, ROLLOUT_STATES, RolloutInput, RolloutScreen, SCREEN_STATES } from './AgentRolloutService.js'

/** Largest page of the rollout list. */
const ROLLOUT_PAGE_MAX = 200

/** A signature file is a few hundred bytes of JSON. */
const SIGNATURE_MAX_BYTES = 4096

const agentUpdateRoutes =
  (d: Pick<Provisions, 'config' | 'agentReleases' | 'agentRollouts'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { agentReleases: releases, agentRollouts: rollouts, config } = d

    await app.register(multipart, {
      // One byte over the limit reaches the staging, which refuses it (413) at once: a file part
      // cut at the limit would be read to its end, and an endless one never answered.
      limits: { fileSize: config.agentReleaseMaxBytes + 1, files: 2, parts: 4, fields: 2, fieldSize: SIGNATURE_MAX_BYTES, headerPairs: 100 },
      throwFileSizeLimit: true,
    })

    interface ReleaseForm {
      signature: string | null
      staged: StagedFile | null
      packed: PackedAgent | null
    }
    const forms = new WeakMap<FastifyRequest, ReleaseForm>()
    const discard = async (req: FastifyRequest) => {
      const form = forms.get(req)
      if (!form?.staged) return
      const staged = form.staged
      form.staged = null
      await releases.store.discard(staged)
    }

    app.post(
      '/agent-releases',
      {
        config: { permission: 'account.edit', rootOnly: true },
        schema: {
          tags: ['agent-updates'],
          operationId: 'createAgentRelease',
          summary: `Upload a packed agent (multipart form: \`file\` = svc-agent-<version>-linux-<arch>.tar.gz from \`agent pack\`, \`signature\` = its .sig from \`agent sign-release\`); up to ${config.agentReleaseMaxBytes} bytes. Version and architecture are read from the tarball; the signature must match it (422 otherwise).`,
          consumes: ['multipart/form-data'],
          response: { 201: Data(AgentRelease), 413: ErrorBody, 415: ErrorBody, ...errorResponses },
        },
        preHandler: async (req) => {
          if (!req.isMultipart()) throw new ApiError('unsupported_type', 'Send multipart/form-data with a `file` part (the tarball) and a `signature` part.')
          const form: ReleaseForm = { signature: null, staged: null, packed: null }
          forms.set(req, form)
          for await (const part of req.parts()) {
            if (part.type === 'file' && part.fieldname === 'file' && !form.staged) {
              // Read as it comes: a tarball that is not a packed agent, or unpacks past the limits, is refused before the rest arrives.
              const read = await releases.stage(part.file, config.agentReleaseMaxBytes)
              form.staged = read.staged
              form.packed = read.packed
              if (part.file.truncated) throw new ApiError('too_large', `The tarball is over the limit of ${config.agentReleaseMaxBytes} bytes.`)
            } else if (part.fieldname === 'signature' && form.signature === null) {
              if (part.type === 'file') {
                const chunks: Buffer[] = []
                let size = 0
                for await (const c of part.file as AsyncIterable<Buffer>) {
                  size += c.length
                  if (size > SIGNATURE_MAX_BYTES)
                    throw validation(`signature: over ${SIGNATURE_MAX_BYTES} bytes; send the .sig file \`agent sign-release\` wrote.`)
                  chunks.push(c)
                }
                form.signature = Buffer.concat(chunks).toString('utf8')
              } else {
                form.signature = String(part.value)
              }
              checkNoNul(form.signature, 'body.signature')
            } else {
              if (part.type === 'file') part.file.resume()
              throw validation(`body.${part.fieldname}: not a field of this operation (one \`file\` and one \`signature\`).`)
            }
          }
          if (!form.staged) throw validation('body: file is required (a multipart part named "file": the tarball).')
          if (form.signature === null) throw validation('body: signature is required (a part named "signature": the .sig file `agent sign-release` wrote).')
        },
        onResponse: async (req) => discard(req),
        onRequestAbort: async (req) => discard(req),
      },
      async (req, reply) => {
        const form = forms.get(req)!
        const staged = form.staged!
        form.staged = null
        try {
          return reply.code(201).send({ data: await releases.create(principalOf(req), staged, form.packed!, form.signature!) })
        } catch (e) {
          await releases.store.discard(staged)
          throw e
        }
      },
    )

    app.get(
      '/agent-releases',
      {
        config: { permission: 'screen.view', rootOnly: true },
        schema: {
          tags: ['agent-updates'],
          operationId: 'listAgentReleases',
          summary: 'Uploaded agent releases, newest first',
          querystring: Type.Intersect([PageQuery, Type.Object({ version: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) })]),
          response: { 200: Paged(AgentRelease), ...errorResponses },
        },
      },
      async (req) => releases.list(principalOf(req), parsePage(req.query, { defaultLimit: 100, max: 500 }), req.query.version),
    )

    app.get(
      '/agent-releases/:id',
      {
        config: { permission: 'screen.view', rootOnly: true },
        schema: {
          tags: ['agent-updates'],
          operationId: 'getAgentRelease',
          summary: 'One agent release',
          params: IdParams,
          response: { 200: Data(AgentRelease), ...errorResponses },
        },
      },
      async (req) => ({ data: await releases.get(principalOf(req), req.params.id) }),
    )

    app.delete(
      '/agent-releases/:id',
      {
        config: { permission: 'account.edit', rootOnly: true },
        schema: {
          tags: ['agent-updates'],
          operationId: 'deleteAgentRelease',
          summary: 'Delete an agent release (409 while an open rollout moves screens to its version)',
          params: IdParams,
          response: { 200: Data(Deleted), ...errorResponses },
        },
      },
      async (req) => ({ data: await releases.remove(principalOf(req), req.params.id) }),
    )

    app.get(
      '/devices/agent-releases/:id/tarball',
      {
        config: { auth: 'none' },
        schema: {
          tags: ['devices'],
          operationId: 'downloadAgentRelease',
          security: [{ deviceCredential: [] }],
          summary:
            "The agent downloads a release a rollout sent it (an update job's url), with its device credential: Authorization: Basic base64(screenId:deviceSecret)",
          params: IdParams,
          response: {
            200: { description: 'The tarball.', content: { 'application/gzip': { schema: Type.String({ format: 'binary' }) } } },
            401: ErrorBody,
            404: ErrorBody,
            500: ErrorBody,
            503: ErrorBody,
          },
        },
      },
      async (req, reply) => {
        const { release, body } = await releases.forDevice(req.params.id, req.headers.authorization)
        return reply
          .header('content-type', 'application/gzip')
          .header('content-length', String(release.size_bytes))
          .header('etag', `"${release.sha256}"`)
          .header('cache-control', 'private, no-store')
          .send(body as never)
      },
    )

    app.post(
      '/agent-rollouts',
      {
        config: { permission: 'account.edit' },
        schema: {
          tags: ['agent-updates'],
          operationId: 'createAgentRollout',
          summary:
            'Move screens to an agent version in stages: all the screens you reach, a location (`nodeId`, with every location under it) or `screenIds`; the first stage begins at once. One running or paused rollout per workspace (409).',
          body: RolloutInput,
          response: { 201: Data(AgentRollout), ...errorResponses },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await rollouts.create(principalOf(req), req.body) }),
    )

    app.get(
      '/agent-rollouts',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['agent-updates'],
          operationId: 'listAgentRollouts',
          summary: 'Agent rollouts, newest first, each with its counts per stage',
          // Up to 200 a page (default 50): each rollout is read with its counts per stage.
          querystring: Type.Intersect([pageQuery(ROLLOUT_PAGE_MAX), Type.Object({ state: Type.Optional(StringEnum(ROLLOUT_STATES)) })]),
          response: { 200: Paged(AgentRollout), ...errorResponses },
        },
      },
      async (req) => rollouts.list(principalOf(req), parsePage(req.query, { defaultLimit: 50, max: ROLLOUT_PAGE_MAX }), req.query.state),
    )

    app.get(
      '/agent-rollouts/:id',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['agent-updates'],
          operationId: 'getAgentRollout',
          summary: 'One agent rollout: its state, stage and counts per stage (updated, healthy, failed, rolled back, …)',
          params: IdParams,
          response: { 200: Data(AgentRollout), ...errorResponses },
        },
      },
      async (req) => ({ data: await rollouts.get(principalOf(req), req.params.id) }),
    )

    app.get(
      '/agent-rollouts/:id/screens',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['agent-updates'],
          operationId: 'listAgentRolloutScreens',
          summary: "A rollout's screens by id: the stage each belongs to, its state and why",
          params: IdParams,
          querystring: Type.Intersect([PageQuery, Type.Object({ state: Type.Optional(StringEnum(SCREEN_STATES)) })]),
          response: { 200: Paged(RolloutScreen), ...errorResponses },
        },
      },
      async (req) => rollouts.screensOf(principalOf(req), req.params.id, parsePage(req.query, { defaultLimit: 100, max: 500 }), req.query.state),
    )

    for (const action of ['pause', 'resume', 'abort'] as const) {
      app.post(
        `/agent-rollouts/:id/${action}`,
        {
          config: { permission: 'account.edit' },
          schema: {
            tags: ['agent-updates'],
            operationId: `${action}AgentRollout`,
            summary: {
              pause: 'Hold a running rollout: no stage ends or begins (jobs already queued still go out)',
              resume: "Go on with a paused rollout (the stage's minutes count again from now)",
              abort: 'End a running or paused rollout; jobs not yet sent are cancelled (screens already updated stay updated)',
            }[action],
            params: IdParams,
            response: { 200: Data(AgentRollout), ...errorResponses },
          },
        },
        async (req) => ({ data: await rollouts[action](principalOf(req), req.params.id) }),
      )
    }
  }
export default agentUpdateRoutes
