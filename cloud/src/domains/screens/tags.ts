// What a screen's tag may be (the targeting domain selects screens by them): 1 to 64 letters,
// digits and "-_.:/", stored lower case, at most MAX_TAGS_PER_SCREEN on one screen.
import { validation } from '../../platform/errors.js'

export const TAG_PATTERN = '^[A-Za-z0-9_.:/-]{1,64}$'
const TAG_RE = new RegExp(TAG_PATTERN)
export const MAX_TAGS_PER_SCREEN = 50

/** Tags as stored: lower case, distinct, in order; 422 naming the field for one that is not a tag. */
export function cleanTags(tags: readonly unknown[], field = 'tags'): string[] {
  const out = new Set<string>()
  for (const [i, t] of tags.entries()) {
    if (typeof t !== 'string' || !TAG_RE.test(t)) throw validation(`${field}[${i}]: a tag is 1 to 64 letters, digits and "-_.:/" (got ${JSON.stringify(t)}).`)
    out.add(t.toLowerCase())
  }
  return [...out]
}
