// The app types an AppInstance can be made of (`GET /v1/apps/catalog`). Each carries a
// JSON Schema for its `config`; instance configs are checked against it and its defaults
// filled in, so a player never meets a config it cannot render.
import { Type, type TObject } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

export interface AppType {
  key: string
  name: string
  description: string
  configSchema: TObject
}

export const APP_CATALOG: readonly AppType[] = [
  {
    key: 'clock',
    name: 'Clock',
    description: "A full-screen clock in the screen's (or a chosen) time zone.",
    configSchema: Type.Object(
      {
        format: Type.Union([Type.Literal('12h'), Type.Literal('24h')], { default: '24h' }),
        showSeconds: Type.Boolean({ default: false }),
        showDate: Type.Boolean({ default: true }),
        timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "IANA zone; omitted = the screen's zone." })),
      },
      { additionalProperties: false },
    ),
  },
  {
    key: 'weather',
    name: 'Weather',
    description: 'Current conditions and a short forecast for one place.',
    configSchema: Type.Object(
      {
        location: Type.String({ minLength: 1, maxLength: 200, description: 'Place name or "lat,lon".' }),
        units: Type.Union([Type.Literal('metric'), Type.Literal('imperial')], { default: 'metric' }),
        forecastDays: Type.Integer({ minimum: 0, maximum: 7, default: 3 }),
      },
      { additionalProperties: false },
    ),
  },
  {
    key: 'rss',
    name: 'RSS ticker',
    description: 'Headlines of an RSS or Atom feed, one at a time.',
    configSchema: Type.Object(
      {
        url: Type.String({ pattern: '^https://[^\\s]+$', maxLength: 2000, description: 'Feed URL (https).' }),
        maxItems: Type.Integer({ minimum: 1, maximum: 50, default: 10 }),
        secondsPerItem: Type.Integer({ minimum: 3, maximum: 120, default: 8 }),
      },
      { additionalProperties: false },
    ),
  },
]

export function appType(key: string): AppType | undefined {
  return APP_CATALOG.find((a) => a.key === key)
}

/** Config with defaults filled in, or the first problem as a message naming the field. */
export function checkAppConfig(app: AppType, config: unknown): { ok: true; config: Record<string, unknown> } | { ok: false; message: string } {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return { ok: false, message: 'config must be an object.' }
  const withDefaults = Value.Default(app.configSchema, structuredClone(config)) as Record<string, unknown>
  const first = Value.Errors(app.configSchema, withDefaults).First()
  if (first) {
    const field = `config${first.path.replace(/\//g, '.')}`
    return { ok: false, message: `${field} ${first.message.toLowerCase()} (app ${app.key}).` }
  }
  return { ok: true, config: withDefaults }
}
