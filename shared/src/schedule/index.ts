// Public entry of the schedule module: data model, validation, evaluation.
export * from './types.js'
export { evaluateSchedule, scheduleEvaluator, scheduleTimeZone, SCAN_HORIZON_MS, type ScheduleEvaluator } from './evaluate.js'
export { validateSchedule, isValidSchedule } from './validate.js'
export { isValidTimeZone, instantOfLocal, localMsAt, offsetMsAt } from './timezone.js'
export {
  hoursAsSchedule,
  OperatingHoursSchema,
  panelIntentAt,
  validateOperatingHours,
  WEEKDAYS,
  type OperatingHours,
  type PanelIntent,
  type Weekday,
} from './operatingHours.js'
