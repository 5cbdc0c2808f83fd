// node-saml's service provider on the cloud's clock, with the checks it leaves to its user:
// the assertion's Recipient and Issuer, and the AuthnRequest bound to the browser and taken
// once. Loaded with the first SAML request (SamlSignIn), so the cloud starts without node-saml.
import { timingSafeEqual } from 'node:crypto'
import { XMLParser } from 'fast-xml-parser'
import { type Profile, SAML, type SamlConfig } from '@node-saml/node-saml'
import type { Clock } from '../../platform/clock.js'

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', removeNSPrefix: true, processEntities: false, parseTagValue: false })
const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v])
type Node = Record<string, unknown>

/** The assertion's Issuer and the Recipients of its bearer subject confirmations. */
function addressOf(assertionXml: string): { issuer: string | null; recipients: string[] } {
  const doc = parser.parse(assertionXml) as Node
  const assertion = doc.Assertion as Node | undefined
  const subject = assertion?.Subject as Node | undefined
  const recipients: string[] = []
  for (const c of asArray(subject?.SubjectConfirmation as Node | Node[])) {
    if (c['@Method'] !== 'urn:oasis:names:tc:SAML:2.0:cm:bearer') continue
    for (const d of asArray(c.SubjectConfirmationData as Node | Node[])) if (typeof d['@Recipient'] === 'string') recipients.push(d['@Recipient'])
  }
  const iss = assertion?.Issuer
  const issuer = typeof iss === 'string' ? iss : iss && typeof (iss as Node)['#text'] === 'string' ? ((iss as Node)['#text'] as string) : null
  return { issuer: issuer?.trim() ?? null, recipients }
}

/** node-saml, on the cloud's clock, with the recipient checked and the AuthnRequest taken once. */
export class WorkspaceSaml extends SAML {
  constructor(
    config: SamlConfig,
    private readonly clock: Clock,
    private readonly acsUrl: string,
    /** The provider's entityID: the signed assertion's Issuer must be it (null: not checked). */
    private readonly idpIssuer: string | null,
    private readonly requests: { known(id: string): Promise<boolean>; take(id: string): Promise<boolean> },
    /** The AuthnRequest ID the answering browser's cookie holds (undefined: none, or not an answer). */
    private readonly bound: string | undefined,
  ) {
    super(config)
  }

  protected override checkTimestampsValidityError(_nowMs: number, notBefore: string, notOnOrAfter: string, maxTimeLimitMs?: number): Error | null {
    return super.checkTimestampsValidityError(this.clock.now().getTime(), notBefore, notOnOrAfter, maxTimeLimitMs)
  }

  /** Before the signature is checked: only whether the request is one of ours (taken after). */
  protected override async validateInResponseTo(inResponseTo: string | null): Promise<void> {
    if (!inResponseTo) throw new Error('InResponseTo is missing from response')
    if (this.bound === undefined || !sameText(this.bound, inResponseTo))
      throw new Error('its InResponseTo is not the sign-in started in this browser (start it again from the sign-in page)')
    if (!(await this.requests.known(inResponseTo))) throw new Error('InResponseTo is not valid')
  }

  protected override async processValidlySignedAssertionAsync(
    this: WorkspaceSaml,
    xml: string,
    samlResponseXml: string,
    inResponseTo: string | null,
  ): Promise<{ profile: Profile; loggedOut: boolean }> {
    const { issuer, recipients } = addressOf(xml)
    if (!recipients.includes(this.acsUrl)) throw new Error(`the assertion's Recipient is not ${this.acsUrl}`)
    if (this.idpIssuer !== null && issuer !== this.idpIssuer) throw new Error(`unknown SAML issuer ${issuer ?? '(none)'}: expected ${this.idpIssuer}`)
    if (!inResponseTo || !(await this.requests.take(inResponseTo))) throw new Error('InResponseTo is not valid')
    return super.processValidlySignedAssertionAsync(xml, samlResponseXml, inResponseTo)
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
