// What the tags-and-groups browser tests share: a button clicked by its text or label, and
// screens paired with tags set through the API.
import type { Page } from 'puppeteer-core'
import type { ConsoleCloud } from './console.js'

export async function clickButton(page: Page, text: string): Promise<void> {
  const ok = await page.evaluate(
    `(() => { const b = [...document.querySelectorAll('button')].find((b) => b.textContent.trim() === ${JSON.stringify(text)} || b.getAttribute('aria-label') === ${JSON.stringify(text)}); if (b) b.click(); return !!b })()`,
  )
  if (!ok) throw new Error(`no button ${text}`)
}

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
