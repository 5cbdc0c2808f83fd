// /v1/screens: list (by id ascending), get, rename/move, delete, and
// pairing a registered device (POST /v1/screens/pair).
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../platform/http/Principal.js'
import { dryRan } from '../../platform/http/innerRequests.js'
import { parsePage, PageQuery } from '../../platform/paging.js'
import { Data, Deleted, IdParams, Nullable, Paged, StringEnum, Timestamp, errorResponses } from '../../platform/contract.js'
import { ASSIGN_KINDS, BULK_ASSIGN_MAX } from './AssignmentService.js'
import { DRIFT_FIELDS, DRIFT_STATES } from './ScreenService.js'
import { ReportedSchema } from '@svc/shared/mqtt/index'
import type { Provisions } from '../../platform/provisions.js'
import { cleanTags, MAX_TAGS_PER_SCREEN, TAG_PATTERN } from './tags.js'

const AssignKind = Type.Union(ASSIGN_KINDS.map((k) => Type.Literal(k)))
const AssignFields = {
  contentKind: Type.Optional(Nullable(AssignKind)),
  contentId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100 }))),
}

const AssignmentResult = Type.Object({
  screenId: Type.String(),
  contentKind: Nullable(AssignKind),
  contentId: Nullable(Type.String()),
  previous: Nullable(Type.Object({ contentKind: Type.String(), contentId: Type.String() }, { description: 'The assignment this call replaced.' })),
  desiredVersion: Type.Integer({ description: 'Desired-state version that carries the assignment to the device.' }),
  assignedAt: Timestamp,
})

const BulkAssignResult = Type.Object({
  contentKind: Nullable(AssignKind),
  contentId: Nullable(Type.String()),
  assigned: Type.Integer(),
  skipped: Type.Object(
    { not_found: Type.Integer(), not_shared: Type.Integer() },
    { additionalProperties: Type.Integer(), description: 'Screens left unchanged, by reason.' },
  ),
  screenIds: Type.Array(Type.String(), { description: 'The screens now assigned.' }),
  skippedScreens: Type.Array(Type.Object({ screenId: Type.String(), reason: Type.String() })),
  assignedAt: Timestamp,
})

/**
 * A string or null as one JSON Schema type list (`type: ['string', 'null']`) rather than
 * `anyOf`: fast-json-stringify writes a type list with a typeof check, while for `anyOf` it
 * runs a schema validation per value (a quarter of the list's cost per item). Same document.
 */
const StringOrNull = (opts: { description?: string; format?: string } = {}) => Type.Unsafe<string | null>({ ...opts, type: ['string', 'null'] })

const ScreenBase = Type.Object({
  id: Type.String({ description: 'Prefix `scr_`.' }),
  name: Type.String(),
  status: Type.String({ description: '`online` or `offline`.' }),
  contentKind: StringOrNull(),
  contentId: StringOrNull(),
  lastSeenAt: StringOrNull({ format: 'date-time' }),
  nodeId: StringOrNull({ description: 'Home location; null = workspace root.' }),
  agentVersion: StringOrNull({ description: "The screen's agent version, as its last report said; null before one that carries it." }),
  contentName: Type.Optional(StringOrNull({ description: "The assigned content's name (GET /v1/screens and /v1/screens/<id>); null when none is assigned." })),
  playingName: Type.Optional(StringOrNull({ description: 'The name of what the screen last reported playing (GET /v1/screens and /v1/screens/<id>).' })),
  playingThumbnailUrl: Type.Optional(
    StringOrNull({ description: 'The thumbnail of the media file the screen last reported playing, when it has one (GET /v1/screens and /v1/screens/<id>).' }),
  ),
  drift: Type.Object(
    {
      state: StringEnum(DRIFT_STATES, { description: '`unknown` while the screen is offline or before it reports.' }),
      since: StringOrNull({ format: 'date-time', description: 'When the state last changed.' }),
      items: Type.Array(
        Type.Object({
          field: StringEnum(DRIFT_FIELDS),
          desired: Type.Unknown({
            description: 'What the screen was told: for `content` its desired version (and what should play), for the panel the last command.',
          }),
          reported: Type.Unknown({ description: 'What it reported.' }),
          obeying: Type.Optional(
            Type.Boolean({ description: '`panel.power` only: false when the player reports the panel not following its operating hours after its retries.' }),
          ),
          since: Timestamp,
        }),
      ),
    },
    { description: 'Whether the screen does what it was told (docs/api-guide.md, "Drift").' },
  ),
})

/** A screen in the list: its fields, what it reports playing and its newest screenshot. */
const ScreenItem = Type.Intersect([
  ScreenBase,
  Type.Object({
    playing: Type.Union(
      [
        Type.Object(
          {
            source: Type.String({ description: '`emergency`, `cast`, `schedule`, `assignment` or `none`.' }),
            contentKind: StringOrNull(),
            contentId: StringOrNull(),
          },
          { additionalProperties: true },
        ),
        Type.Null(),
      ],
      { description: 'What the screen last reported playing; null before its first report.' },
    ),
    lastScreenshot: Type.Union([Type.Object({ id: Type.String(), at: StringOrNull({ format: 'date-time' }) }), Type.Null()], {
      description: 'The newest screenshot that came back (GET /v1/screenshots/<id>/image); null when none.',
    }),
    tags: Type.Array(Type.String(), { description: "The screen's tags, lower case, sorted." }),
  }),
])

export const Screen = Type.Intersect([
  ScreenBase,
  Type.Object({
    model: Nullable(Type.String()),
    serialNumber: Nullable(Type.String()),
    timezone: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    desiredVersion: Type.Integer({ description: 'Last desired-state version published to the screen.' }),
    reported: Nullable(
      Type.Object(ReportedSchema.properties, {
        description:
          'What the device last reported: `version` applied, `playing`, `panel`, `storage`, `video` (decoded and dropped frames of the kiosk page), `agentVersion`, `agentArch`, `at`; only these fields, as the MQTT contract defines them.',
      }),
    ),
    reportedAt: Nullable(Timestamp),
    tags: Type.Optional(
      Type.Array(Type.String(), { description: "The screen's tags, lower case, sorted (on the answers of GET and PATCH /v1/screens/<id>)." }),
    ),
  }),
])

const screenRoutes =
  (d: Pick<Provisions, 'assignments' | 'pairing' | 'screens' | 'tags'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { screens, pairing, assignments, tags } = d
    /** A screen with its tags. */
    const tagged = async <T extends { id: string }>(workspaceId: string, s: T) => ({ ...s, tags: (await tags.tagsOf(workspaceId, [s.id])).get(s.id) ?? [] })

    app.post(
      '/screens/bulk-assign',
      {
        config: { permission: 'screen.edit' },
        schema: {
          tags: ['screens'],
          summary: `Assign content to many screens in one transaction: screenIds (up to ${BULK_ASSIGN_MAX}), nodeId (every reachable screen at or under it) or groupId (a group's members), up to ${BULK_ASSIGN_MAX}; screens that cannot take it are skipped and counted`,
          body: Type.Object(
            {
              screenIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: BULK_ASSIGN_MAX })),
              nodeId: Type.Optional(Nullable(Type.String({ maxLength: 100, description: 'null = every screen the credential reaches.' }))),
              groupId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "A group's members (those the credential reaches)." })),
              ...AssignFields,
            },
            { additionalProperties: false },
          ),
          response: { 200: Data(BulkAssignResult), ...errorResponses },
        },
      },
      async (req, reply) =>
        (await dryRan(req, reply, () => assignments.planBulkAssign(principalOf(req), req.body)))
          ? reply
          : { data: await assignments.bulkAssign(principalOf(req), req.body) },
    )

    app.post(
      '/screens/:id/assign',
      {
        config: { permission: 'screen.edit' },
        schema: {
          tags: ['screens'],
          summary: 'Assign content to a screen (contentKind null clears); the device gets its new desired state',
          params: IdParams,
          body: Type.Object(AssignFields, { additionalProperties: false }),
          response: { 200: Data(AssignmentResult), ...errorResponses },
        },
      },
      async (req, reply) =>
        (await dryRan(req, reply, () => assignments.planAssign(principalOf(req), req.params.id, req.body)))
          ? reply
          : { data: await assignments.assign(principalOf(req), req.params.id, req.body) },
    )

    app.post(
      '/screens/pair',
      {
        config: { permission: 'screen.edit', idempotent: true },
        schema: {
          tags: ['screens'],
          summary: 'Claim a pairing code shown on a device; creates the screen',
          body: Type.Object(
            {
              code: Type.String({ minLength: 1, maxLength: 20, description: 'The 6-character code the device shows (case and dashes ignored).' }),
              name: Type.String({ minLength: 1, maxLength: 200 }),
              nodeId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
            },
            { additionalProperties: false },
          ),
          response: { 201: Data(Screen), ...errorResponses },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await pairing.pair(principalOf(req), req.body) }),
    )

    app.get(
      '/screens',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['screens'],
          summary:
            'List screens (by id; without limit the whole list); `drift`, `status`, `q` (name), `nodeId` (a location and its sub-locations), `tag` (repeatable: screens holding every one) and `group` (its members) narrow it',
          querystring: Type.Object(
            {
              ...PageQuery.properties,
              drift: Type.Optional(StringEnum(DRIFT_STATES, { description: 'Only screens in this drift state.' })),
              status: Type.Optional(StringEnum(['online', 'offline'] as const, { description: 'Only online or only offline screens.' })),
              q: Type.Optional(Type.String({ maxLength: 200, description: 'Only screens whose name contains this text (any case).' })),
              nodeId: Type.Optional(Type.String({ maxLength: 100, description: 'Only screens at this location or below it.' })),
              tag: Type.Optional(
                Type.Union([Type.String({ maxLength: 64 }), Type.Array(Type.String({ maxLength: 64 }), { maxItems: 50 })], {
                  description: 'Only screens holding this tag (any case); repeat it for screens holding all of them.',
                }),
              ),
              group: Type.Optional(Type.String({ maxLength: 100, description: "Only this group's members." })),
            },
            { additionalProperties: false },
          ),
          response: { 200: Paged(ScreenItem), ...errorResponses },
        },
      },
      // The answer comes as JSON text serialised by the database (the schema above documents it).
      async (req, reply) => {
        const p = principalOf(req)
        const text = await screens.listJson(p, parsePage(req.query, { defaultLimit: null, max: 500 }), {
          ...req.query,
          where: await tags.listCondition(p, req.query),
        })
        // JSON text is sent as it is (the typed reply expects the object the schema describes).
        return reply.type('application/json; charset=utf-8').send(text as never)
      },
    )

    app.get(
      '/screens/:id',
      {
        config: { permission: 'screen.view' },
        schema: { tags: ['screens'], summary: 'Get a screen', params: IdParams, response: { 200: Data(Screen), ...errorResponses } },
      },
      async (req) => ({ data: await tagged(principalOf(req).workspaceId, await screens.getNamed(principalOf(req), req.params.id)) }),
    )

    app.patch(
      '/screens/:id',
      {
        config: { permission: 'screen.edit' },
        schema: {
          tags: ['screens'],
          summary: 'Rename a screen, move it to another location, set its time zone, or replace its tags',
          params: IdParams,
          body: Type.Object(
            {
              name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
              nodeId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
              timezone: Type.Optional(
                Type.String({
                  minLength: 1,
                  maxLength: 64,
                  description: "IANA zone (e.g. `Europe/Berlin`) the screen's schedules, timeline and local times are read in; default `UTC`.",
                }),
              ),
              tags: Type.Optional(
                Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: TAG_PATTERN }), {
                  maxItems: MAX_TAGS_PER_SCREEN,
                  description: 'Replaces the tags: 1 to 64 letters, digits and `-_.:/` each, any case (stored in lower case).',
                }),
              ),
            },
            { additionalProperties: false },
          ),
          response: { 200: Data(Screen), ...errorResponses },
        },
      },
      async (req) => {
        const p = principalOf(req)
        const { tags: newTags, ...fields } = req.body
        // The tags are checked before anything is written (a bad tag changes nothing).
        if (newTags !== undefined) cleanTags(newTags)
        const view = await screens.update(p, req.params.id, fields)
        if (newTags !== undefined) return { data: { ...view, tags: await tags.set(p, req.params.id, newTags) } }
        return { data: await tagged(p.workspaceId, view) }
      },
    )

    app.delete(
      '/screens/:id',
      {
        config: { permission: 'screen.delete' },
        schema: {
          tags: ['screens'],
          summary: 'Delete a screen; its device credential stops working and its MQTT connection is closed',
          params: IdParams,
          response: { 200: Data(Deleted), ...errorResponses },
        },
      },
      async (req) => ({ data: await screens.remove(principalOf(req), req.params.id) }),
    )
  }
export default screenRoutes
