// What the API answers for an alert event: the routes' response schema, the evaluator's
// and the notifier's view of one firing (its own file, so neither imports the other for it).
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import { ALERT_CODES, SEVERITIES } from './AlertRuleService.js'

/** One firing of a rule against a screen, as the API answers it: the routes' response schema, and AlertEventView is derived from it. */
export const AlertEvent = Type.Object({
  id: Type.String(),
  ruleId: Type.String(),
  code: StringEnum(ALERT_CODES),
  severity: StringEnum(SEVERITIES),
  screenId: Type.String(),
  screenName: Type.String(),
  message: Type.String(),
  nextAction: Type.String(),
  openedAt: Timestamp,
  closedAt: Nullable(Timestamp),
  detail: Nullable(Type.Object({}, { additionalProperties: true })),
})
export type AlertEventView = Static<typeof AlertEvent>
