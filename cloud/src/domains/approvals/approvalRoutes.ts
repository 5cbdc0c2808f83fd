// Approvals: a location's policy (/v1/nodes/<id>/approval-policy) and the requests that
// hold content changes (/v1/approvals, decided with /approve, /reject, /withdraw).
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../platform/http/Principal.js'
import { PageQuery } from '../../platform/paging.js'
import { Data, IdParams, Nullable, Paged, StringEnum, Timestamp, errorResponses } from '../../platform/contract.js'
import { optionalPage } from '../../platform/paging.js'
import type { Provisions } from '../../platform/provisions.js'

const tags = ['approvals']
const STATES = ['pending', 'approved', 'rejected', 'withdrawn'] as const

const policyFields = {
  required: Type.Boolean({ description: 'Changes to content homed here wait for approval.' }),
  inheritFromParent: Type.Boolean({ description: "Use the parent location's effective policy instead of this one's own settings." }),
  escalateUpTiers: Type.Boolean({ description: 'After this level, each ancestor location that names approvers decides too.' }),
  allowSharedExemptions: Type.Boolean({ description: 'Kept for clients; not acted upon.' }),
  approvers: Type.Array(Type.String(), { description: 'User ids of this workspace who decide this level.' }),
}

export const ApprovalPolicy = Type.Object(
  {
    nodeId: Type.String(),
    ...policyFields,
    effective: Type.Object(
      { ...policyFields, sourceNodeId: Nullable(Type.String({ description: 'Location whose settings apply; null = the default (not required).' })) },
      { additionalProperties: true },
    ),
    updatedAt: Nullable(Timestamp),
  },
  { additionalProperties: true },
)

const PolicyBody = Type.Object(
  {
    required: Type.Optional(policyFields.required),
    inheritFromParent: Type.Optional(policyFields.inheritFromParent),
    escalateUpTiers: Type.Optional(policyFields.escalateUpTiers),
    allowSharedExemptions: Type.Optional(policyFields.allowSharedExemptions),
    approvers: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 })),
  },
  { additionalProperties: false },
)

export const ApprovalRequest = Type.Object(
  {
    id: Type.String(),
    contentKind: Type.String(),
    contentId: Type.String(),
    contentName: Type.String(),
    thumbnailUrl: Nullable(Type.String()),
    nodeId: Type.String({ description: "Content's home location; empty string for the workspace root." }),
    nodeName: Type.String(),
    requestedByName: Type.String(),
    requestedById: Type.String({ description: 'User id, or `apikey:<id>` for a key.' }),
    requestedAt: Timestamp,
    note: Nullable(Type.String()),
    changes: Type.Array(
      Type.Object(
        { kind: Type.String(), label: Type.String(), detail: Type.String(), thumbnailUrl: Type.Optional(Type.String()) },
        { additionalProperties: true },
      ),
    ),
    state: StringEnum(STATES),
    levels: Type.Array(
      Type.Object({ nodeId: Type.String(), nodeName: Type.String(), approverIds: Type.Array(Type.String()), approverNames: Type.Array(Type.String()) }),
    ),
    currentLevel: Type.Integer(),
    decisions: Type.Array(
      Type.Object({
        level: Type.Integer(),
        decidedById: Type.String(),
        decidedByName: Nullable(Type.String()),
        decidedAt: Timestamp,
        note: Nullable(Type.String()),
      }),
    ),
  },
  { additionalProperties: true },
)

const NoteBody = Type.Object({ note: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))) }, { additionalProperties: false })

const approvalRoutes =
  (d: Pick<Provisions, 'approvals'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { approvals } = d

    app.get(
      '/nodes/:id/approval-policy',
      {
        config: { permission: 'node.view' },
        schema: {
          tags,
          summary: "A location's approval policy, with the effective one after inheritance",
          params: IdParams,
          response: { 200: Data(ApprovalPolicy), ...errorResponses },
        },
      },
      async (req) => ({ data: await approvals.getPolicy(principalOf(req), req.params.id) }),
    )

    app.put(
      '/nodes/:id/approval-policy',
      {
        // Deciding approvals, not editing locations: a credential that is held by a policy
        // must not be able to switch it off (docs/decisions.md "Approval policies need approval.decide").
        config: { permission: 'approval.decide' },
        schema: {
          tags,
          summary: "Change a location's approval policy (partial body; approvers must be users of this workspace, 422 otherwise)",
          params: IdParams,
          body: PolicyBody,
          response: { 200: Data(ApprovalPolicy), ...errorResponses },
        },
      },
      async (req) => ({ data: await approvals.putPolicy(principalOf(req), req.params.id, req.body) }),
    )

    app.get(
      '/approvals',
      {
        config: { permission: 'approval.view' },
        schema: {
          tags,
          summary: 'Approval requests, newest first (limit 1–500 turns paging on; filter by state)',
          querystring: Type.Intersect([PageQuery, Type.Object({ state: Type.Optional(StringEnum(STATES)) })]),
          response: { 200: Paged(ApprovalRequest), ...errorResponses },
        },
      },
      async (req) => approvals.list(principalOf(req), optionalPage(req.query), { state: req.query.state }),
    )

    app.get(
      '/approvals/:id',
      {
        config: { permission: 'approval.view' },
        schema: { tags, summary: 'Get an approval request', params: IdParams, response: { 200: Data(ApprovalRequest), ...errorResponses } },
      },
      async (req) => ({ data: await approvals.get(principalOf(req), req.params.id) }),
    )

    const decisions = [
      {
        path: 'approve',
        permission: 'approval.decide',
        summary:
          'Approve the current level (a user must be one of its approvers; a key decides any level inside its location). The last level makes the change live.',
        run: approvals.approve.bind(approvals),
      },
      {
        path: 'reject',
        permission: 'approval.decide',
        summary: 'Reject the request: the held change is discarded (409 conflict once decided)',
        run: approvals.reject.bind(approvals),
      },
      {
        path: 'withdraw',
        permission: 'approval.request',
        summary: 'Withdraw your own pending request: the held change is discarded (409 conflict once decided)',
        run: approvals.withdraw.bind(approvals),
      },
    ] as const
    for (const d of decisions) {
      app.post(
        `/approvals/:id/${d.path}`,
        {
          config: { permission: d.permission },
          // The body is optional: no body at all means no note.
          preValidation: async (req) => {
            if (req.body === undefined) req.body = {}
          },
          schema: {
            tags,
            summary: d.summary,
            params: IdParams,
            body: NoteBody,
            response: { 200: Data(ApprovalRequest), 409: errorResponses[404], ...errorResponses },
          },
        },
        async (req) => ({ data: await d.run(principalOf(req), req.params.id, req.body.note?.trim() || null) }),
      )
    }
  }
export default approvalRoutes
