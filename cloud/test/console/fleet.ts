// What the tags-and-groups browser tests share: screens paired with tags set through the API.
import type { ConsoleCloud } from './console.js'

/** Screens paired under the names of `tags`, each with its tags set through the API; their ids by name. */
export async function taggedScreens(c: ConsoleCloud, tags: Record<string, string[]>): Promise<Record<string, string>> {
  const ids: Record<string, string> = {}
  for (const [name, list] of Object.entries(tags)) {
    ids[name] = (await c.pair(name)).screenId
    if (list.length) {
      const r = await c.call('PATCH', `/v1/screens/${ids[name]}`, { tags: list })
      if (r.status !== 200) throw new Error(`tags: ${r.status} ${JSON.stringify(r.body)}`)
    }
  }
  return ids
}
