// Release keys and signatures, from the repository or the packed program:
//   release-key [--out DIR]             writes DIR/release-key.pem (the private key, 0600) and
//                                       DIR/release-key.pub (the public key, SPKI PEM, for
//                                       `agent pack --release-key`); never overwrites
//   sign-release --key FILE TARBALL     writes TARBALL.sig (shared/src/releases.ts' JSON)
// Each prints the files it wrote and the key's fingerprint. Bad input: one line on stderr, exit 2.
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { keyFingerprint, newReleaseKey, releasePublicKey, sha256Hex, signRelease } from '@svc/shared/releases'
import { PROGRAM } from '../version.js'

export const RELEASE_USAGE = (program: string): string => `usage:
  ${program} release-key [--out DIR]            a new Ed25519 release key: DIR/release-key.pem (private,
                                               keep it secret) and DIR/release-key.pub (default DIR: .)
  ${program} sign-release --key FILE TARBALL    signs a packed agent: writes TARBALL.sig
`

class Refused extends Error {}

function parse(argv: string[], options: Record<string, { type: 'string' }>, positionals: boolean) {
  try {
    return parseArgs({ args: argv, strict: true, allowPositionals: positionals, options })
  } catch (err) {
    throw new Refused((err as Error).message)
  }
}

function refusing(fn: () => void): number {
  try {
    fn()
    return 0
  } catch (err) {
    if (!(err instanceof Refused)) throw err
    process.stderr.write(`${PROGRAM}: ${err.message}\n`)
    return 2
  }
}

/** `release-key [--out DIR]`. */
export function releaseKeyCommand(argv: string[]): number {
  return refusing(() => {
    const { values } = parse(argv, { out: { type: 'string' } }, false)
    const dir = path.resolve(values.out ?? '.')
    if ((values.out ?? '.').trim() === '') throw new Refused('--out needs a folder')
    const priv = path.join(dir, 'release-key.pem')
    const pub = path.join(dir, 'release-key.pub')
    for (const f of [priv, pub]) if (fs.existsSync(f)) throw new Refused(`${f} exists; not overwriting a release key (move it away first)`)
    try {
      fs.mkdirSync(dir, { recursive: true })
    } catch (err) {
      throw new Refused(`cannot create ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
    }
    const { privateKeyPem, publicKeyPem } = newReleaseKey()
    try {
      // 'wx': fails should a file appear meanwhile; the private key is created 0600 (umask or not).
      fs.writeFileSync(priv, privateKeyPem, { mode: 0o600, flag: 'wx' })
      fs.chmodSync(priv, 0o600)
      fs.writeFileSync(pub, publicKeyPem, { mode: 0o644, flag: 'wx' })
    } catch (err) {
      throw new Refused(`cannot write the key: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
    }
    process.stdout.write(`${priv}\n${pub}\nfingerprint ${keyFingerprint(releasePublicKey(publicKeyPem))}\n`)
  })
}

/** `sign-release --key FILE TARBALL`. */
export function signReleaseCommand(argv: string[]): number {
  return refusing(() => {
    const { values, positionals } = parse(argv, { key: { type: 'string' } }, true)
    if (!values.key) throw new Refused('--key FILE is needed (release-key.pem, from `release-key`)')
    if (positionals.length !== 1) throw new Refused(`one tarball to sign is needed, got ${positionals.length}`)
    const tarball = path.resolve(positionals[0]!)
    let keyText: string
    let bytes: Buffer
    try {
      keyText = fs.readFileSync(values.key, 'utf8')
    } catch (err) {
      throw new Refused(`--key: cannot read ${values.key}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
    }
    try {
      bytes = fs.readFileSync(tarball)
    } catch (err) {
      throw new Refused(`cannot read ${tarball}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
    }
    if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b)
      throw new Refused(`${tarball} is not a gzipped tarball (svc-agent-<version>-linux-<arch>.tar.gz)`)
    let sig: ReturnType<typeof signRelease>
    try {
      sig = signRelease(keyText, sha256Hex(bytes))
    } catch (err) {
      throw new Refused(`--key: ${values.key}: ${(err as Error).message}`)
    }
    const out = `${tarball}.sig`
    fs.writeFileSync(`${out}.${process.pid}.tmp`, `${JSON.stringify(sig, null, 2)}\n`)
    fs.renameSync(`${out}.${process.pid}.tmp`, out)
    process.stdout.write(`${out}\nfingerprint ${keyFingerprint(releasePublicKey(sig.publicKey))}\n`)
  })
}
