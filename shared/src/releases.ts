// Signed agent releases. A release is a packed agent tarball (`agent pack`); its publisher
// signs the tarball's SHA-256 digest (the 32 bytes) with an Ed25519 private key
// (`agent release-key` makes the pair, `agent sign-release --key FILE` signs). The signature
// file, `<tarball>.sig`, is JSON:
//   {"format": "svc-agent-release-signature/1", "sha256": "<hex>",
//    "publicKey": "<base64 of the SPKI DER>", "signature": "<base64 of 64 bytes>"}
// The cloud checks that the signature matches the tarball and the key named in the file
// (so a signature of another file is refused at upload); the agent checks it against the
// public key it was installed with, which is what makes a release trusted.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto'

export const SIGNATURE_FORMAT = 'svc-agent-release-signature/1'

export interface ReleaseSignature {
  format: typeof SIGNATURE_FORMAT
  sha256: string
  /** The signer's public key: SPKI DER, base64. */
  publicKey: string
  /** Ed25519 over the digest's 32 bytes, base64. */
  signature: string
}

/** A new Ed25519 key pair as PEM text: the private key (PKCS#8) and the public key (SPKI). */
export function newReleaseKey(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  }
}

/** The SHA-256 of bytes, lowercase hex. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}

/** An Ed25519 public key from PEM text or base64 SPKI DER; throws a readable Error otherwise. */
export function releasePublicKey(text: string): KeyObject {
  let key: KeyObject
  try {
    key = text.includes('-----BEGIN') ? createPublicKey(text) : createPublicKey({ key: Buffer.from(text, 'base64'), format: 'der', type: 'spki' })
  } catch {
    throw new Error('not a public key (PEM "-----BEGIN PUBLIC KEY-----" or base64 SPKI)')
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`an Ed25519 key is needed, this one is ${key.asymmetricKeyType ?? 'unknown'}`)
  return key
}

/** The key's short name shown beside releases: the first 16 hex digits of the SHA-256 of its SPKI DER. */
export function keyFingerprint(key: KeyObject): string {
  return sha256Hex(key.export({ type: 'spki', format: 'der' })).slice(0, 16)
}

/** Signs a tarball's digest with a PEM private key: the signature file's content. */
export function signRelease(privateKeyPem: string, sha256: string): ReleaseSignature {
  let key: KeyObject
  try {
    key = createPrivateKey(privateKeyPem)
  } catch {
    throw new Error('not a private key (PEM "-----BEGIN PRIVATE KEY-----", as `agent release-key` writes it)')
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`an Ed25519 key is needed, this one is ${key.asymmetricKeyType ?? 'unknown'}`)
  const signature = sign(null, Buffer.from(sha256, 'hex'), key).toString('base64')
  const publicKey = createPublicKey(key).export({ type: 'spki', format: 'der' }).toString('base64')
  return { format: SIGNATURE_FORMAT, sha256, publicKey, signature }
}

/** True when `signature` (base64) is `key`'s Ed25519 signature of the digest `sha256` (hex). */
export function signatureValid(key: KeyObject, sha256: string, signature: string): boolean {
  const sig = Buffer.from(signature, 'base64')
  if (sig.length !== 64 || !/^[0-9a-f]{64}$/.test(sha256)) return false
  try {
    return verify(null, Buffer.from(sha256, 'hex'), key, sig)
  } catch {
    return false
  }
}

/** Reads a signature file's text; throws an Error saying what is wrong with it. */
export function parseSignatureFile(text: string): ReleaseSignature {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    throw new Error(`the signature is not JSON (a ${SIGNATURE_FORMAT} file, as \`agent sign-release\` writes it)`)
  }
  const o = v as Partial<ReleaseSignature> | null
  if (!o || typeof o !== 'object' || o.format !== SIGNATURE_FORMAT) throw new Error(`the signature's format is not ${SIGNATURE_FORMAT}`)
  if (typeof o.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(o.sha256)) throw new Error('the signature file has no sha256 (64 lowercase hex digits)')
  if (typeof o.publicKey !== 'string' || typeof o.signature !== 'string') throw new Error('the signature file needs publicKey and signature (base64)')
  return { format: SIGNATURE_FORMAT, sha256: o.sha256, publicKey: o.publicKey, signature: o.signature }
}
