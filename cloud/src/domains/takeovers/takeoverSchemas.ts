// What casts and emergencies answer over the API that other code also names (the delivery
// counts, the emergency object that its events carry): the TypeBox schemas and their views,
// in a file of their own so the event catalogue can name them without importing a service.
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'

/** How far a cast or an emergency has reached its screens (on single-item answers). */
export const Delivery = Type.Object(
  {
    targeted: Type.Integer({ description: 'Screens it was sent to (screenCount).' }),
    published: Type.Integer({ description: 'Screens sent a desired state carrying it.' }),
    applied: Type.Integer({ description: 'Screens whose reported state showed it playing.' }),
  },
  { description: 'Delivery so far; the create answer comes before publishing, so it starts at published 0. Not on list answers.' },
)
/** targeted: screens it was cast to; published: screens sent a desired state carrying it; applied: screens that reported it playing. */
export type Delivery = Static<typeof Delivery>

export const EMERGENCY_STATUSES = ['active', 'cleared'] as const
export const PRESENTATIONS = ['fullscreen', 'banner'] as const
export type Presentation = (typeof PRESENTATIONS)[number]

/** What started an emergency, when it was not started by hand: a CAP feed's alert. */
export const EmergencySource = Type.Object({
  capFeedId: Type.String({ description: 'The CAP feed (prefix `capf_`).' }),
  alertId: Type.String({ description: 'The alert in its log (prefix `capa_`).' }),
})
export type EmergencySource = Static<typeof EmergencySource>
export type EmergencyStatus = (typeof EMERGENCY_STATUSES)[number]

/** An emergency as the API answers it: the routes' response schema, and EmergencyView is derived from it. */
export const Emergency = Type.Object({
  id: Type.String({ description: 'Prefix `emg_`.' }),
  kind: Type.Literal('emergency'),
  status: StringEnum(EMERGENCY_STATUSES),
  contentKind: Nullable(Type.String({ description: 'null: no content, the message alone (started by a CAP feed that names no content).' })),
  contentId: Nullable(Type.String()),
  contentName: Nullable(Type.String()),
  message: Nullable(Type.String()),
  presentation: StringEnum(PRESENTATIONS, {
    description: '`fullscreen`: the content and message take the whole screen; `banner`: the message in a band over the running content.',
  }),
  source: Nullable(EmergencySource),
  scopeKind: Type.String(),
  scopeNodeId: Nullable(Type.String()),
  groupId: Nullable(Type.String({ description: 'scopeKind `group`: the group it is aimed at.' })),
  screenCount: Type.Integer(),
  startedAt: Timestamp,
  clearedAt: Nullable(Timestamp),
  screensReleased: Nullable(Type.Integer({ description: 'Screens no other emergency still holds, set when cleared.' })),
  delivery: Type.Optional(Delivery),
})
export type EmergencyView = Static<typeof Emergency>

// The emergency events carry the emergency as the API answers it: declared here, with the
// view, and merged into the events domain's payload map (an interface the domains extend).
declare module '../events/payloads.js' {
  interface EventData {
    'emergency.started': EmergencyView
    'emergency.cleared': EmergencyView
  }
}
