// /v1/cap-feeds: CAP alert feeds (emergency.manage to write, emergency.view to read) and
// their alert log; POST /v1/cap-feeds/<id>/alerts is where a push feed's sender delivers a
// CAP 1.2 document, authenticated by the feed's push secret (not an API key).
import { actFor } from '../audit/index.js'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../platform/http/Principal.js'
import { Data, ErrorBody, IdParams, Nullable, Paged, StringEnum, Timestamp, errorResponses } from '../../platform/contract.js'
import { pageQuery, parsePage } from '../../platform/paging.js'
import { SCOPE_KINDS } from '../screens/index.js'
import { TAKEOVER_CONTENT_KINDS } from '../takeovers/index.js'
import type { Provisions } from '../../platform/provisions.js'
import { ALERT_STATES, AREA_MATCHES, CAP_MAX_BYTES, FEED_MODES } from './CapService.js'
import { CAP_CERTAINTIES, CAP_SEVERITIES, CAP_STATUSES, CAP_URGENCIES } from './capXml.js'

const CAP_TYPES = ['application/cap+xml', 'application/xml', 'text/xml']

const Target = Type.Object(
  {
    scopeKind: Type.Optional(StringEnum(SCOPE_KINDS)),
    screenIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 1000 })),
    scopeNodeId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    groupId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false, description: 'As for emergencies; default the whole workspace.' },
)

const Accept = Type.Object(
  {
    status: Type.Optional(
      Type.Array(StringEnum(CAP_STATUSES), { maxItems: 5, description: 'Default ["Actual"]; Test or Exercise alerts accepted are shown marked as a test.' }),
    ),
    severity: Type.Optional(Type.Array(StringEnum(CAP_SEVERITIES), { maxItems: 5, description: 'Empty = every severity.' })),
    urgency: Type.Optional(Type.Array(StringEnum(CAP_URGENCIES), { maxItems: 5 })),
    certainty: Type.Optional(Type.Array(StringEnum(CAP_CERTAINTIES), { maxItems: 5 })),
    events: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100, description: 'Event names (any case); empty = every event.' }),
    ),
  },
  { additionalProperties: false },
)

const PresentationBySeverity = Type.Object(
  {
    fullscreen: Type.Optional(Type.Array(StringEnum(CAP_SEVERITIES), { maxItems: 5 })),
    banner: Type.Optional(Type.Array(StringEnum(CAP_SEVERITIES), { maxItems: 5 })),
  },
  { additionalProperties: false, description: 'Which severities take the whole screen and which show as a banner; default Extreme and Severe full screen.' },
)

const FeedFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  mode: StringEnum(FEED_MODES),
  url: Nullable(Type.String({ maxLength: 2000, description: 'Pull: the https address of a CAP 1.2 document or an Atom feed of CAP entries.' })),
  intervalSeconds: Type.Integer({ minimum: 30, maximum: 3600, description: 'Pull: seconds between fetches (default 60).' }),
  accept: Accept,
  target: Target,
  contentKind: StringEnum(TAKEOVER_CONTENT_KINDS, {
    description: 'The content shown beneath the alert message, with contentId; without both, the alert message alone takes the screens.',
  }),
  contentId: Type.String({ minLength: 1, maxLength: 100 }),
  areaMatch: StringEnum(AREA_MATCHES, { description: '`target`: every target screen; `geo`: only the target screens inside the alert area.' }),
  presentation: PresentationBySeverity,
  language: Type.String({ minLength: 2, maxLength: 35, description: 'The <info> language shown (default "en"); the first <info> when none matches.' }),
}

const CapFeed = Type.Object({
  id: Type.String({ description: 'Prefix `capf_`.' }),
  name: Type.String(),
  mode: StringEnum(FEED_MODES),
  url: Nullable(Type.String()),
  pushUrl: Nullable(Type.String({ description: 'Push: where the sender POSTs documents.' })),
  intervalSeconds: Type.Integer(),
  accept: Type.Object({
    status: Type.Array(Type.String()),
    severity: Type.Array(Type.String()),
    urgency: Type.Array(Type.String()),
    certainty: Type.Array(Type.String()),
    events: Type.Array(Type.String()),
  }),
  target: Target,
  contentKind: Nullable(Type.String({ description: 'null: the feed names no content; its alerts show their message alone.' })),
  contentId: Nullable(Type.String()),
  areaMatch: Type.String(),
  presentation: Type.Object({ fullscreen: Type.Array(Type.String()), banner: Type.Array(Type.String()) }),
  language: Type.String(),
  lastFetchedAt: Nullable(Timestamp),
  lastError: Nullable(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})

const CreatedFeed = Type.Intersect([
  CapFeed,
  Type.Object({ pushSecret: Type.Optional(Type.String({ description: 'Push: the bearer secret for pushUrl, shown only in this answer.' })) }),
])

const CapAlertEntry = Type.Object({
  id: Type.String({ description: 'Prefix `capa_`.' }),
  identifier: Type.String(),
  sender: Type.String(),
  sent: Type.String(),
  msgType: Type.String(),
  status: Type.String(),
  event: Nullable(Type.String()),
  severity: Nullable(Type.String()),
  urgency: Nullable(Type.String()),
  certainty: Nullable(Type.String()),
  headline: Nullable(Type.String()),
  expires: Nullable(Timestamp),
  state: StringEnum(ALERT_STATES),
  reason: Nullable(Type.String()),
  emergencyId: Nullable(Type.String()),
  screensTargeted: Nullable(Type.Integer()),
  receivedAt: Timestamp,
})

const DeletedFeed = Type.Object({
  id: Type.String(),
  deleted: Type.Literal(true),
  emergenciesCleared: Type.Integer({ description: 'Active emergencies its alerts held, cleared with it.' }),
})

const PushAnswer = Type.Object({ alertId: Type.String(), state: StringEnum(ALERT_STATES), emergencyId: Nullable(Type.String()) })

const capRoutes =
  (d: Pick<Provisions, 'capFeeds'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { capFeeds } = d

    // This plugin's scope only: CAP documents as text, at most 1 MiB (over it: 413 too_large).
    app.addContentTypeParser(CAP_TYPES, { parseAs: 'string', bodyLimit: CAP_MAX_BYTES }, (_req, body, done) => done(null, body))

    app.get(
      '/cap-feeds',
      {
        config: { permission: 'emergency.view' },
        schema: { tags: ['cap-feeds'], summary: 'List CAP alert feeds', response: { 200: Type.Object({ data: Type.Array(CapFeed) }), ...errorResponses } },
      },
      async (req) => ({ data: await capFeeds.list(principalOf(req)) }),
    )

    app.post(
      '/cap-feeds',
      {
        config: { permission: 'emergency.manage' },
        schema: {
          tags: ['cap-feeds'],
          summary: 'Create a CAP alert feed: push (answers pushUrl and pushSecret, shown once) or pull (fetched every intervalSeconds)',
          body: Type.Object(
            {
              name: FeedFields.name,
              mode: Type.Optional(FeedFields.mode),
              url: Type.Optional(FeedFields.url),
              intervalSeconds: Type.Optional(FeedFields.intervalSeconds),
              accept: Type.Optional(FeedFields.accept),
              target: Type.Optional(FeedFields.target),
              contentKind: Type.Optional(FeedFields.contentKind),
              contentId: Type.Optional(FeedFields.contentId),
              areaMatch: Type.Optional(FeedFields.areaMatch),
              presentation: Type.Optional(FeedFields.presentation),
              language: Type.Optional(FeedFields.language),
            },
            { additionalProperties: false },
          ),
          response: { 201: Data(CreatedFeed), 400: ErrorBody, ...errorResponses },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await capFeeds.create(principalOf(req), req.body) }),
    )

    app.get(
      '/cap-feeds/:id',
      {
        config: { permission: 'emergency.view' },
        schema: { tags: ['cap-feeds'], summary: 'Get a CAP alert feed', params: IdParams, response: { 200: Data(CapFeed), ...errorResponses } },
      },
      async (req) => ({ data: await capFeeds.get(principalOf(req), req.params.id) }),
    )

    app.patch(
      '/cap-feeds/:id',
      {
        config: { permission: 'emergency.manage' },
        schema: {
          tags: ['cap-feeds'],
          summary: 'Change a CAP alert feed (its mode stays)',
          params: IdParams,
          body: Type.Object(
            {
              name: Type.Optional(FeedFields.name),
              url: Type.Optional(FeedFields.url),
              intervalSeconds: Type.Optional(FeedFields.intervalSeconds),
              accept: Type.Optional(FeedFields.accept),
              target: Type.Optional(FeedFields.target),
              contentKind: Type.Optional(Nullable(FeedFields.contentKind)),
              contentId: Type.Optional(Nullable(FeedFields.contentId)),
              areaMatch: Type.Optional(FeedFields.areaMatch),
              presentation: Type.Optional(FeedFields.presentation),
              language: Type.Optional(FeedFields.language),
            },
            { additionalProperties: false },
          ),
          response: { 200: Data(CapFeed), 400: ErrorBody, ...errorResponses },
        },
      },
      async (req) => ({ data: await capFeeds.update(principalOf(req), req.params.id, req.body) }),
    )

    app.delete(
      '/cap-feeds/:id',
      {
        config: { permission: 'emergency.manage' },
        schema: {
          tags: ['cap-feeds'],
          summary: 'Delete a CAP alert feed; the emergencies its alerts still hold are cleared (emergenciesCleared says how many)',
          params: IdParams,
          response: { 200: Data(DeletedFeed), ...errorResponses },
        },
      },
      async (req) => {
        const { emergenciesCleared } = await capFeeds.remove(principalOf(req), req.params.id)
        return { data: { id: req.params.id, deleted: true as const, emergenciesCleared } }
      },
    )

    app.get(
      '/cap-feeds/:id/alerts',
      {
        config: { permission: 'emergency.view' },
        schema: {
          tags: ['cap-feeds'],
          operationId: 'listCapFeedAlerts',
          summary: 'The alert log: each CAP document the feed received, newest first, what happened to it and why (100 per page unless limit says otherwise)',
          params: IdParams,
          querystring: pageQuery(500),
          response: { 200: Paged(CapAlertEntry), ...errorResponses },
        },
      },
      async (req) => capFeeds.alerts(principalOf(req), req.params.id, parsePage(req.query, { defaultLimit: 100, max: 500 })),
    )

    app.post(
      '/cap-feeds/:id/sample',
      {
        config: { permission: 'emergency.manage' },
        schema: {
          tags: ['cap-feeds'],
          operationId: 'sendCapSample',
          summary: 'Send a sample CAP alert (status Test) through the feed to one screen',
          description:
            "Handled as a pushed document is (logged in the feed's alert log, the emergency carrying its source) but sent to the chosen screen whatever the feed's filters, target and area, shown marked as a test; it clears itself after 15 minutes unless cleared sooner (POST …/sample/clear).",
          params: IdParams,
          body: Type.Object({ screenId: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
          response: { 202: Data(PushAnswer), 400: ErrorBody, ...errorResponses },
        },
      },
      async (req, reply) => reply.code(202).send({ data: await capFeeds.sample(principalOf(req), req.params.id, req.body.screenId) }),
    )

    app.post(
      '/cap-feeds/:id/sample/clear',
      {
        config: { permission: 'emergency.manage' },
        schema: {
          tags: ['cap-feeds'],
          operationId: 'clearCapSample',
          summary: "Clear a sample alert: a CAP Cancel for it through the feed (alertId: the sample's alert log id)",
          params: IdParams,
          body: Type.Object({ alertId: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
          response: { 200: Data(PushAnswer), 400: ErrorBody, ...errorResponses },
        },
      },
      async (req) => ({ data: await capFeeds.clearSample(principalOf(req), req.params.id, req.body.alertId) }),
    )

    app.post(
      '/cap-feeds/:id/alerts',
      {
        config: { auth: 'none' },
        schema: {
          tags: ['cap-feeds'],
          operationId: 'pushCapAlert',
          summary:
            "A push feed's sender delivers one CAP 1.2 document (Authorization: Bearer <pushSecret>; application/cap+xml, application/xml or text/xml; at most 1 MiB)",
          description:
            'Answers 202 with what happened to it; a repeated sender and identifier answers what happened the first time and changes nothing. A body that is not CAP 1.2 answers 422 validation_error naming the element.',
          consumes: CAP_TYPES,
          security: [],
          params: IdParams,
          body: Type.String({ description: 'The CAP 1.2 <alert> document.' }),
          response: {
            202: Data(PushAnswer),
            400: ErrorBody,
            401: ErrorBody,
            413: ErrorBody,
            415: ErrorBody,
            422: ErrorBody,
            429: ErrorBody,
            500: ErrorBody,
            503: ErrorBody,
          },
        },
      },
      async (req, reply) => {
        const m = /^Bearer\s+(\S{1,200})$/i.exec(req.headers.authorization ?? '')
        // The push is the feed's own write: recorded in its workspace's audit log, as the feed.
        const proven = (f: { id: string; workspaceId: string; name: string }) => actFor(req, f.workspaceId, { kind: 'system', id: f.id, name: f.name })
        return reply.code(202).send({ data: await capFeeds.push(req.params.id, m?.[1] ?? null, req.body, proven) })
      },
    )
  }
export default capRoutes
