// A SAML identity provider's settings as an operator gives them: its metadata document (what
// Okta, Entra ID and Keycloak offer to download), or its sign-in URL and signing certificate.
// The metadata is parsed without DTDs or entities (fast-xml-parser, entities off): the
// provider's entityID (checked as the assertions' Issuer), its HTTP-Redirect SingleSignOnService
// and every signing certificate (several while the provider rolls its key over).
import { X509Certificate } from 'node:crypto'
import { XMLParser } from 'fast-xml-parser'
import { validation } from '../../platform/errors.js'

export interface SamlIdp {
  entryPoint: string
  /** PEM, one per signing key. */
  idpCertificates: string[]
  /** The provider's entityID (the assertions' Issuer), when known. */
  idpIssuer: string | null
}

const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'

/** A certificate given as PEM or as the base64 of its DER (the metadata's form), as PEM; throws `validation` when it is none. */
export function pemOf(text: string, field: string): string {
  const body = text
    .replace(/-----(BEGIN|END) CERTIFICATE-----/g, '')
    .replace(/\s+/g, '')
    .trim()
  if (!/^[A-Za-z0-9+/]+=*$/.test(body)) throw validation(`${field}: not a certificate (PEM or base64).`)
  const pem = `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`
  try {
    new X509Certificate(pem)
  } catch {
    throw validation(`${field}: not a certificate (PEM or base64).`)
  }
  return pem
}

export function certificateInfo(pem: string): { subject: string; notAfter: string; fingerprint256: string } {
  const c = new X509Certificate(pem)
  return { subject: c.subject, notAfter: new Date(c.validTo).toISOString(), fingerprint256: c.fingerprint256 }
}

const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v])
type Node = Record<string, unknown>

function text(v: unknown): string | null {
  if (typeof v === 'string') return v
  if (v && typeof v === 'object' && typeof (v as Node)['#text'] === 'string') return (v as Node)['#text'] as string
  return null
}

/** The provider's sign-in URL, issuer and signing certificates from its metadata document. */
export function parseIdpMetadata(xml: string): SamlIdp {
  if (/<!DOCTYPE/i.test(xml)) throw validation('idpMetadataXml: a document type declaration is not accepted.')
  let doc: Node
  try {
    doc = new XMLParser({
      ignoreAttributes: false,
      attributeNamePrefix: '@',
      removeNSPrefix: true,
      processEntities: false,
      parseTagValue: false,
    }).parse(xml) as Node
  } catch (e) {
    throw validation(`idpMetadataXml: not XML (${(e as Error).message}).`)
  }
  const entities = [
    ...asArray(doc.EntityDescriptor as Node | Node[]),
    ...asArray((doc.EntitiesDescriptor as Node | undefined)?.EntityDescriptor as Node | Node[]),
  ]
  const entity = entities.find((e) => e.IDPSSODescriptor !== undefined)
  if (!entity) throw validation('idpMetadataXml: no EntityDescriptor with an IDPSSODescriptor.')
  const idp = asArray(entity.IDPSSODescriptor as Node | Node[])[0]!
  const sso = asArray(idp.SingleSignOnService as Node | Node[]).find((s) => s['@Binding'] === REDIRECT)
  const location = sso ? text(sso['@Location']) : null
  if (!location) throw validation('idpMetadataXml: no SingleSignOnService with the HTTP-Redirect binding.')
  const certs: string[] = []
  for (const k of asArray(idp.KeyDescriptor as Node | Node[])) {
    if (k['@use'] === 'encryption') continue
    const data = ((k.KeyInfo as Node | undefined)?.X509Data ?? undefined) as Node | Node[] | undefined
    for (const d of asArray(data))
      for (const c of asArray(d.X509Certificate as unknown)) {
        const t = text(c)
        if (t) certs.push(pemOf(t, 'idpMetadataXml'))
      }
  }
  if (!certs.length) throw validation('idpMetadataXml: no signing certificate (KeyDescriptor X509Certificate).')
  return { entryPoint: location, idpCertificates: [...new Set(certs)], idpIssuer: text(entity['@entityID']) }
}
