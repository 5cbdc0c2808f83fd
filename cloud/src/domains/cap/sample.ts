// The sample alert an operator sends from the console to check a feed end to end: a CAP 1.2
// document (status Test, so the screen marks it as a test) built here and handled by the
// feed exactly as a pushed one is (the alert log, the emergency, its source), except that it
// goes to the one screen chosen, whatever the feed's filters, target and area. Its Cancel
// clears it; its <expires> clears it anyway after SAMPLE_MINUTES if nobody does.
import { CAP12_NS } from './capXml.js'

/** The sender of every sample alert (a CAP sender has no spaces or commas). */
export const SAMPLE_SENDER = 'signage-console-sample'
/** How long a sample stays on its screen when nobody clears it. */
export const SAMPLE_MINUTES = 15
/**
 * How a sample's alert-log row records its screen (in `source_url`): no pushed document can
 * set it (a push has none, a pulled one has the https address it came from), so only a
 * sample's own documents skip the feed's filters and target.
 */
const SAMPLE_SOURCE = 'console-sample:'

export const sampleSource = (screenId: string): string => `${SAMPLE_SOURCE}${screenId}`

/** The screen a sample's log row was sent to, or null for any other row. */
export function sampleScreen(sourceUrl: string | null): string | null {
  return sourceUrl?.startsWith(SAMPLE_SOURCE) ? sourceUrl.slice(SAMPLE_SOURCE.length) : null
}

const esc = (s: string) => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`)

/** A CAP date-time without fractions, in UTC. */
export const capTime = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, '+00:00')

export function sampleAlertDoc(f: { identifier: string; sent: Date; language: string; feedName: string; screenName: string }): string {
  const expires = new Date(f.sent.getTime() + SAMPLE_MINUTES * 60_000)
  return `<?xml version="1.0" encoding="UTF-8"?>
<alert xmlns="${CAP12_NS}">
  <identifier>${esc(f.identifier)}</identifier>
  <sender>${SAMPLE_SENDER}</sender>
  <sent>${capTime(f.sent)}</sent>
  <status>Test</status>
  <msgType>Alert</msgType>
  <scope>Private</scope>
  <info>
    <language>${esc(f.language)}</language>
    <category>Other</category>
    <event>Sample alert</event>
    <urgency>Immediate</urgency>
    <severity>Severe</severity>
    <certainty>Observed</certainty>
    <expires>${capTime(expires)}</expires>
    <senderName>Signage console</senderName>
    <headline>Sample alert</headline>
    <description>${esc(`A sample of the CAP feed "${f.feedName}" on this screen. This is not a real warning.`)}</description>
    <instruction>No action is needed.</instruction>
    <area><areaDesc>${esc(f.screenName)}</areaDesc></area>
  </info>
</alert>`
}

export function sampleCancelDoc(f: { identifier: string; sent: Date; cancels: { identifier: string; sent: string } }): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<alert xmlns="${CAP12_NS}">
  <identifier>${esc(f.identifier)}</identifier>
  <sender>${SAMPLE_SENDER}</sender>
  <sent>${capTime(f.sent)}</sent>
  <status>Test</status>
  <msgType>Cancel</msgType>
  <scope>Private</scope>
  <references>${SAMPLE_SENDER},${esc(f.cancels.identifier)},${esc(f.cancels.sent)}</references>
</alert>`
}
