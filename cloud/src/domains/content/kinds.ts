// The content kinds and what differs between them, as one table. Everything common —
// storage, locations, sharing, paging, recall, idempotent creates, routes — is written
// once (ContentService, domains/content/contentRoutes.ts) and driven by these definitions.
import { Type, type TProperties } from '@sinclair/typebox'
import type { IdKind, Permission } from '@svc/shared'
import { CONTENT_REF_KINDS, validateSchedule } from '@svc/shared/schedule/index'

// Schedule input, typed for the document; the values (times, dates, zones, references)
// are checked by validateSchedule, whose messages name the rule and field.
const ContentRefInput = Type.Object({
  kind: Type.Unsafe<string>({ type: 'string', enum: [...CONTENT_REF_KINDS] }),
  id: Type.String({ minLength: 1, maxLength: 100 }),
})
/**
 * Rules one schedule may hold. Every screen that plays it, and every timeline and preview,
 * evaluates them all; schedules saved with more before this limit still play and are
 * evaluated the same way, but cannot be saved again until they are within it.
 */
export const SCHEDULE_MAX_RULES = 200

const ScheduleRuleInput = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  content: ContentRefInput,
  priority: Type.Number({ description: 'Higher wins.' }),
  days: Type.Optional(Type.Array(Type.Integer(), { description: 'Local days a window may start on, 0 = Sunday … 6 = Saturday; absent = every day.' })),
  start: Type.Optional(Type.String({ maxLength: 10, description: '`HH:MM` local time; absent = start of day.' })),
  end: Type.Optional(Type.String({ maxLength: 10, description: '`HH:MM` (or `24:00`) local time; absent = end of day.' })),
  dateFrom: Type.Optional(Type.String({ maxLength: 10, description: '`YYYY-MM-DD`, first day the rule applies.' })),
  dateTo: Type.Optional(Type.String({ maxLength: 10, description: '`YYYY-MM-DD`, last day the rule applies.' })),
  enabled: Type.Optional(Type.Boolean()),
})
import { ApiError, validation } from '../../platform/errors.js'
import { APP_CATALOG, appType, checkAppConfig } from './appCatalog.js'

export const CONTENT_KINDS = ['media', 'folder', 'playlist', 'schedule', 'creative', 'layout', 'banner', 'signage', 'app', 'celebration'] as const
export type ContentKind = (typeof CONTENT_KINDS)[number]
/** Kinds stored in the generic table (media has its own, with file columns). */
export type ItemKind = Exclude<ContentKind, 'media'>

export interface ContentRef {
  kind: ContentKind
  id: string
}

/** What a definition may ask of the service while checking a body. */
export interface PrepareContext {
  /** 422 validation_error when `ref` does not exist in the workspace or the credential cannot reach it. */
  requireRef(ref: ContentRef, field: string): Promise<void>
  /** 422 invalid_folder when `id` is not a media folder of the workspace. */
  requireFolder(id: string, field: string): Promise<void>
  /** Folder ids from `id` up through its parents (for cycle checks). */
  folderLineage(id: string): Promise<string[]>
  /** Id of the item being updated; null on create. */
  selfId: string | null
}

export type Body = Record<string, unknown>

export interface KindDef {
  kind: ItemKind
  /** URL segment under /v1. */
  path: string
  idKind: IdKind
  /** Human label (also the `name` of content.recalled events). */
  label: string
  tag: string
  view: Permission
  edit: Permission
  /** paged lists (default 100, max 500) or the full list (playlists, schedules). */
  paged: boolean
  /** Can be recalled (recall: files, designs, playlists, schedules). */
  recallable: boolean
  /** Can be put on a screen (playability, device description). */
  playable: boolean
  /** Kind-specific body fields (each optional in the schema; `required` lists those a create needs). */
  fields: TProperties
  required?: string[]
  /** Defaults, checks and normalisation of the merged body; returns what is stored and what it references. */
  prepare(ctx: PrepareContext, body: Body, current: Body | null): Promise<{ body: Body; refs: ContentRef[] }>
  /** Fields every answer shows even when never set. */
  viewDefaults?: Body
}

const Dim = Type.Integer({ minimum: 1, maximum: 16384 })
const DurationMs = Type.Integer({ minimum: 1, maximum: 86_400_000 })
const PlaylistFit = Type.Union([Type.Literal('contain'), Type.Literal('cover'), Type.Null()], {
  description:
    'How a picture or video fills the screen: `contain` (whole, letterboxed; the default) or `cover` (fills, cropped). On an item it overrides the playlist.',
})
const Color = Type.String({ pattern: '^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$' })
const OpenObject = Type.Object({}, { additionalProperties: true })
const RefSchema = (kinds: readonly string[]) =>
  Type.Object({ kind: Type.Union(kinds.map((k) => Type.Literal(k))), id: Type.String({ minLength: 1, maxLength: 100 }) })
const ZONE_CONTENT = ['media', 'playlist', 'app', 'creative'] as const

const keep = (body: Body, keys: string[]): Body => Object.fromEntries(keys.filter((k) => body[k] !== undefined).map((k) => [k, body[k]]))

export const KINDS: readonly KindDef[] = [
  {
    kind: 'folder',
    path: 'media-folders',
    idKind: 'mediaFolder',
    label: 'Folder',
    tag: 'media',
    view: 'media.view',
    edit: 'media.edit',
    paged: true,
    recallable: false,
    playable: false,
    fields: { parentId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'Parent folder; null = top level.' })) },
    async prepare(ctx, body) {
      const parentId = (body.parentId as string | null | undefined) ?? null
      if (parentId) {
        await ctx.requireFolder(parentId, 'parentId')
        if (ctx.selfId && (await ctx.folderLineage(parentId)).includes(ctx.selfId)) throw validation('parentId would put the folder inside itself.')
      }
      return { body: { parentId }, refs: [] }
    },
  },
  {
    kind: 'playlist',
    path: 'playlists',
    idKind: 'playlist',
    label: 'Playlist',
    tag: 'playlists',
    view: 'playlist.view',
    edit: 'playlist.edit',
    paged: false,
    recallable: true,
    playable: true,
    fields: {
      items: Type.Optional(
        Type.Array(
          Type.Object({
            kind: Type.Union([Type.Literal('media'), Type.Literal('app'), Type.Literal('creative')]),
            id: Type.String({ minLength: 1, maxLength: 100 }),
            durationMs: Type.Optional(
              Type.Union([DurationMs, Type.Null()], { description: "How long the item shows; null/omitted = the file's own length (video, audio) or 10 s." }),
            ),
            fit: Type.Optional(PlaylistFit),
          }),
          { maxItems: 1000, description: 'Played in this order.' },
        ),
      ),
      // Playback presentation (added for the player; see docs/decisions.md "The kiosk player: playlist presentation").
      fit: Type.Optional(PlaylistFit),
      transition: Type.Optional(
        Type.Union([Type.Literal('none'), Type.Literal('fade'), Type.Null()], {
          description: 'From one item to the next: `none` (a cut, the default) or `fade` (the next item fades in).',
        }),
      ),
      transitionMs: Type.Optional(
        Type.Union([Type.Integer({ minimum: 0, maximum: 10_000 }), Type.Null()], { description: 'Length of the transition; default 500 ms.' }),
      ),
    },
    async prepare(ctx, body) {
      const items = ((body.items as { kind: ContentKind; id: string; durationMs?: number | null; fit?: string | null }[] | undefined) ?? []).map((i) => ({
        kind: i.kind,
        id: i.id,
        durationMs: i.durationMs ?? null,
        ...(i.fit ? { fit: i.fit } : {}),
      }))
      for (const [n, i] of items.entries()) await ctx.requireRef(i, `items[${n}]`)
      const presentation = {
        ...(body.fit ? { fit: body.fit } : {}),
        ...(body.transition ? { transition: body.transition } : {}),
        ...(typeof body.transitionMs === 'number' ? { transitionMs: body.transitionMs } : {}),
      }
      return { body: { items, ...presentation }, refs: items.map((i) => ({ kind: i.kind, id: i.id })) }
    },
  },
  {
    kind: 'schedule',
    path: 'schedules',
    idKind: 'schedule',
    label: 'Schedule',
    tag: 'schedules',
    view: 'schedule.view',
    edit: 'schedule.edit',
    paged: false,
    recallable: true,
    playable: true,
    fields: {
      timezone: Type.Optional(
        Type.Union([Type.String({ maxLength: 100, description: "IANA zone (an unknown zone is refused); overrides the screen's zone." }), Type.Null()]),
      ),
      rules: Type.Optional(
        Type.Array(ScheduleRuleInput, {
          maxItems: SCHEDULE_MAX_RULES,
          description: `Schedule rules (at most ${SCHEDULE_MAX_RULES}); the enabled rule with the highest priority that covers the moment plays.`,
        }),
      ),
      fallback: Type.Optional(Type.Union([ContentRefInput, Type.Null()], { description: 'Content playing when no rule is on, or null.' })),
    },
    async prepare(ctx, body) {
      const schedule: Body = { rules: body.rules ?? [], fallback: body.fallback ?? null }
      if (body.timezone !== undefined && body.timezone !== null) schedule.timezone = body.timezone
      const issues = validateSchedule(schedule)
      if (issues.length) throw validation(issues.map((i) => i.message).join('; '))
      const s = schedule as { rules: { content: ContentRef }[]; fallback: ContentRef | null }
      const refs: ContentRef[] = []
      for (const [n, r] of s.rules.entries()) {
        await ctx.requireRef(r.content, `rules[${n}].content`)
        refs.push({ kind: r.content.kind, id: r.content.id })
      }
      if (s.fallback) {
        await ctx.requireRef(s.fallback, 'fallback')
        refs.push({ kind: s.fallback.kind, id: s.fallback.id })
      }
      return { body: { timezone: schedule.timezone ?? null, rules: s.rules, fallback: s.fallback }, refs }
    },
  },
  {
    kind: 'creative',
    path: 'creatives',
    idKind: 'creative',
    label: 'Design',
    tag: 'creatives',
    view: 'content.view',
    edit: 'content.edit',
    paged: true,
    recallable: true,
    playable: true,
    fields: {
      width: Type.Optional(Dim),
      height: Type.Optional(Dim),
      durationMs: Type.Optional(DurationMs),
      design: Type.Optional(OpenObject),
    },
    async prepare(_ctx, body) {
      return { body: { width: body.width ?? 1920, height: body.height ?? 1080, durationMs: body.durationMs ?? 10_000, design: body.design ?? {} }, refs: [] }
    },
  },
  {
    kind: 'layout',
    path: 'layouts',
    idKind: 'layout',
    label: 'Layout',
    tag: 'layouts',
    view: 'content.view',
    edit: 'content.edit',
    paged: true,
    recallable: false,
    playable: true,
    fields: {
      width: Type.Optional(Dim),
      height: Type.Optional(Dim),
      zones: Type.Optional(
        Type.Array(
          Type.Object({
            id: Type.String({ minLength: 1, maxLength: 100 }),
            x: Type.Integer({ minimum: 0 }),
            y: Type.Integer({ minimum: 0 }),
            width: Dim,
            height: Dim,
            content: Type.Optional(Type.Union([RefSchema(ZONE_CONTENT), Type.Null()])),
          }),
          { maxItems: 32 },
        ),
      ),
    },
    async prepare(ctx, body) {
      const width = (body.width as number | undefined) ?? 1920
      const height = (body.height as number | undefined) ?? 1080
      const zones = (body.zones as { id: string; x: number; y: number; width: number; height: number; content?: ContentRef | null }[] | undefined) ?? []
      const seen = new Set<string>()
      const refs: ContentRef[] = []
      for (const [n, z] of zones.entries()) {
        if (seen.has(z.id)) throw validation(`zones[${n}].id duplicates another zone's id.`)
        seen.add(z.id)
        if (z.x + z.width > width || z.y + z.height > height) throw validation(`zones[${n}] lies outside the ${width}×${height} layout.`)
        if (z.content) {
          await ctx.requireRef(z.content, `zones[${n}].content`)
          refs.push({ kind: z.content.kind, id: z.content.id })
        }
      }
      return { body: { width, height, zones: zones.map((z) => ({ ...z, content: z.content ?? null })) }, refs }
    },
  },
  {
    kind: 'banner',
    path: 'banners',
    idKind: 'banner',
    label: 'Banner',
    tag: 'banners',
    view: 'content.view',
    edit: 'content.edit',
    paged: true,
    recallable: false,
    playable: false,
    fields: {
      text: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
      position: Type.Optional(Type.Union([Type.Literal('top'), Type.Literal('bottom')])),
      backgroundColor: Type.Optional(Color),
      textColor: Type.Optional(Color),
    },
    required: ['text'],
    async prepare(_ctx, body) {
      return {
        body: {
          text: body.text,
          position: body.position ?? 'bottom',
          backgroundColor: body.backgroundColor ?? '#000000',
          textColor: body.textColor ?? '#ffffff',
        },
        refs: [],
      }
    },
  },
  {
    kind: 'signage',
    path: 'signage-templates',
    idKind: 'signageTemplate',
    label: 'Signage template',
    tag: 'signage-templates',
    view: 'content.view',
    edit: 'content.edit',
    paged: true,
    recallable: false,
    playable: true,
    fields: {
      category: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
      definition: Type.Optional(OpenObject),
    },
    async prepare(_ctx, body) {
      return { body: { category: body.category ?? null, definition: body.definition ?? {} }, refs: [] }
    },
  },
  {
    kind: 'app',
    path: 'app-instances',
    idKind: 'app',
    label: 'App',
    tag: 'apps',
    view: 'content.view',
    edit: 'content.edit',
    paged: true,
    recallable: false,
    playable: true,
    fields: {
      appKey: Type.Optional(
        Type.String({ minLength: 1, maxLength: 64, description: `One of ${APP_CATALOG.map((a) => a.key).join(', ')} (GET /v1/apps/catalog).` }),
      ),
      config: Type.Optional(OpenObject),
      importSourceId: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    },
    required: ['appKey'],
    viewDefaults: { lastSnapshotKey: null, lastSnapshotAt: null, importSourceId: null, deletedAt: null },
    async prepare(_ctx, body, current) {
      const key = body.appKey as string
      if (current && current.appKey !== key) throw validation('appKey cannot change; create a new app instance instead.')
      const type = appType(key)
      if (!type) throw validation(`appKey ${JSON.stringify(key)} is not in the app catalog (${APP_CATALOG.map((a) => a.key).join(', ')}).`)
      const checked = checkAppConfig(type, body.config ?? {})
      if (!checked.ok) throw validation(checked.message)
      return {
        body: { ...keep(body, ['lastSnapshotKey', 'lastSnapshotAt']), appKey: key, config: checked.config, importSourceId: body.importSourceId ?? null },
        refs: [],
      }
    },
  },
  {
    kind: 'celebration',
    path: 'celebration-entries',
    idKind: 'celebration',
    label: 'Celebration',
    tag: 'celebration-entries',
    view: 'content.view',
    edit: 'content.edit',
    paged: true,
    recallable: false,
    playable: false,
    fields: {
      person: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      occasion: Type.Optional(Type.Union(['birthday', 'work_anniversary', 'welcome', 'custom'].map((o) => Type.Literal(o)))),
      date: Type.Optional(Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$', description: 'YYYY-MM-DD' })),
      message: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
      mediaId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'A photo from the media library.' })),
    },
    required: ['person', 'date'],
    async prepare(ctx, body) {
      const mediaId = (body.mediaId as string | null | undefined) ?? null
      if (mediaId) await ctx.requireRef({ kind: 'media', id: mediaId }, 'mediaId')
      return {
        body: { person: body.person, occasion: body.occasion ?? 'birthday', date: body.date, message: body.message ?? null, mediaId },
        refs: mediaId ? [{ kind: 'media', id: mediaId }] : [],
      }
    },
  },
]

export const KIND_BY_NAME = new Map<ContentKind, KindDef>(KINDS.map((d) => [d.kind, d]))

/** Recall routes and event labels (events: file, design, playlist, schedule). */
export const RECALLABLE: Readonly<Partial<Record<ContentKind, { path: string; label: string }>>> = {
  media: { path: 'media', label: 'File' },
  creative: { path: 'creatives', label: 'Design' },
  playlist: { path: 'playlists', label: 'Playlist' },
  schedule: { path: 'schedules', label: 'Schedule' },
}

/** Kinds a schedule rule may name (shared model) are kinds here too. */
export const SCHEDULE_REF_KINDS: readonly ContentKind[] = CONTENT_REF_KINDS

export function assertKnownKind(kind: string): asserts kind is ContentKind {
  if (!(CONTENT_KINDS as readonly string[]).includes(kind)) throw new ApiError('validation_error', `Unknown content kind ${JSON.stringify(kind)}.`)
}
