// CAP 1.2 documents for the tests, written from the OASIS CAP 1.2 standard (its Appendix A
// examples: the severe thunderstorm warning, the earthquake update, a cancel), with the
// fields each test varies as parameters.
export interface DocFields {
  identifier: string
  sender?: string
  sent?: string
  status?: 'Actual' | 'Exercise' | 'System' | 'Test' | 'Draft'
  msgType?: 'Alert' | 'Update' | 'Cancel' | 'Ack' | 'Error'
  references?: string
  severity?: 'Extreme' | 'Severe' | 'Moderate' | 'Minor' | 'Unknown'
  event?: string
  headline?: string
  description?: string
  instruction?: string
  expires?: string
  /** Extra <info> blocks (e.g. another language), inserted before the main one. */
  infosBefore?: string
  area?: string
  language?: string
}

export const NWS_SENDER = 'w-nws.webmaster@noaa.gov'

export function capDoc(f: DocFields): string {
  const info =
    f.msgType === 'Cancel'
      ? ''
      : `
  <info>
    <language>${f.language ?? 'en-US'}</language>
    <category>Met</category>
    <event>${f.event ?? 'SEVERE THUNDERSTORM'}</event>
    <responseType>Shelter</responseType>
    <urgency>Immediate</urgency>
    <severity>${f.severity ?? 'Severe'}</severity>
    <certainty>Observed</certainty>
    <eventCode><valueName>SAME</valueName><value>SVR</value></eventCode>
    ${f.expires ? `<expires>${f.expires}</expires>` : ''}
    <senderName>NATIONAL WEATHER SERVICE SACRAMENTO CA</senderName>
    <headline>${f.headline ?? 'SEVERE THUNDERSTORM WARNING'}</headline>
    <description>${f.description ?? 'AT 254 PM PDT...NATIONAL WEATHER SERVICE DOPPLER RADAR INDICATED A SEVERE THUNDERSTORM CAPABLE OF PRODUCING HAIL UP TO 3/4 INCH.'}</description>
    <instruction>${f.instruction ?? 'TAKE COVER IN A SUBSTANTIAL SHELTER UNTIL THE STORM PASSES.'}</instruction>
    <contact>BARUFFALDI/JUSKIE</contact>
    <area>
      ${f.area ?? '<areaDesc>EXTREME NORTH CENTRAL TUOLUMNE COUNTY IN CALIFORNIA, EXTREME NORTHEASTERN CALAVERAS COUNTY IN CALIFORNIA, SOUTHWESTERN ALPINE COUNTY IN CALIFORNIA</areaDesc><polygon>38.47,-120.14 38.34,-119.95 38.52,-119.74 38.62,-119.89 38.47,-120.14</polygon><geocode><valueName>SAME</valueName><value>006109</value></geocode>'}
    </area>
  </info>`
  return `<?xml version="1.0" encoding="UTF-8"?>
<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2">
  <identifier>${f.identifier}</identifier>
  <sender>${f.sender ?? NWS_SENDER}</sender>
  <sent>${f.sent ?? '2026-06-01T04:55:01-07:00'}</sent>
  <status>${f.status ?? 'Actual'}</status>
  <msgType>${f.msgType ?? 'Alert'}</msgType>
  <scope>Public</scope>
  ${f.references ? `<references>${f.references}</references>` : ''}${f.infosBefore ?? ''}${info}
</alert>`
}
