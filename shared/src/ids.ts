// Id prefixes of every resource: one place, so a reader can tell an id's kind at a glance.
export const ID_PREFIX = {
  workspace: 'ws',
  user: 'usr',
  session: 'ses',
  invite: 'uin',
  signInDevice: 'sid',
  apiKey: 'key',
  oauthToken: 'otk',
  node: 'node',
  screen: 'scr',
  registration: 'reg',
  media: 'med',
  mediaFolder: 'fld',
  mediaUpload: 'mup',
  playlist: 'pl',
  schedule: 'sch',
  creative: 'cre',
  layout: 'lay',
  banner: 'ban',
  signageTemplate: 'sgt',
  app: 'app',
  celebration: 'cel',
  cast: 'cast',
  emergency: 'emg',
  capFeed: 'capf',
  capAlert: 'capa',
  alertRule: 'alr',
  alertEvent: 'ale',
  approval: 'ar',
  webhookEndpoint: 'whe',
  webhookDelivery: 'whd',
  serialTemplate: 'sertpl',
  serialTemplateItem: 'sti',
  serialJob: 'sjob',
  screenshot: 'shot',
  agentLog: 'alog',
  agentRelease: 'arel',
  agentRollout: 'arol',
  agentUpdate: 'aupd',
  group: 'grp',
  incident: 'inc',
  request: 'req',
  measurement: 'msr',
  event: 'evt',
  auditEntry: 'aud',
} as const

export type IdKind = keyof typeof ID_PREFIX

/** True when `id` looks like an id of `kind` (prefix + underscore + body). */
export function hasPrefix(id: string, kind: IdKind): boolean {
  return id.startsWith(`${ID_PREFIX[kind]}_`) && id.length > ID_PREFIX[kind].length + 1
}
