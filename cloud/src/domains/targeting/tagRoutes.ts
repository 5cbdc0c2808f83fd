// Tags: GET /v1/tags (the tags in use, with how many screens hold each) and
// POST /v1/screens/bulk-tag (add and remove tags on many screens). A screen's own tags are
// replaced with PATCH /v1/screens/<id> (screens/screenRoutes.ts).
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../platform/http/Principal.js'
import { Data, errorResponses } from '../../platform/contract.js'
import type { Provisions } from '../../platform/provisions.js'
import { TAG_PATTERN } from './rules.js'
import { BULK_TAG_MAX, BULK_TAG_TAGS } from './TagService.js'

const TagList = (description: string) =>
  Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: TAG_PATTERN }), { maxItems: BULK_TAG_TAGS, description }))

const tagRoutes =
  (d: Pick<Provisions, 'tags'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { tags } = d

    app.post(
      '/screens/bulk-tag',
      {
        config: { permission: 'screen.edit' },
        schema: {
          tags: ['screens'],
          summary: `Add and remove tags on many screens at once: screenIds, nodeId (a location and below) or groupId (a group's members), up to ${BULK_TAG_MAX} screens`,
          body: Type.Object(
            {
              screenIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: BULK_TAG_MAX })),
              nodeId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
              groupId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
              add: TagList('Tags to add (any case; stored in lower case).'),
              remove: TagList('Tags to remove.'),
            },
            { additionalProperties: false },
          ),
          response: {
            200: Data(
              Type.Object({
                matched: Type.Integer({ description: 'Screens the target selected.' }),
                changed: Type.Integer({ description: 'Screens whose tags changed.' }),
              }),
            ),
            ...errorResponses,
          },
        },
      },
      async (req) => ({ data: await tags.bulk(principalOf(req), req.body) }),
    )

    app.get(
      '/tags',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['screens'],
          summary: 'The tags in use on the screens this credential reaches, with how many screens hold each (by tag)',
          response: { 200: Data(Type.Array(Type.Object({ tag: Type.String(), count: Type.Integer() }))), ...errorResponses },
        },
      },
      async (req) => ({ data: await tags.list(principalOf(req)) }),
    )
  }
export default tagRoutes
