// MQTT over TLS: the certificate and private key files (PEM), read at start and read again
// whenever either file changes (certbot, cert-manager and the like replace them in place or
// by renaming), so a renewed certificate is served from the next handshake on, without a
// restart. A pair that cannot be used (a file half written, a new certificate whose key has
// not been written yet) keeps the previous pair and says so; the next change tries again.
import { X509Certificate, createPrivateKey } from 'node:crypto'
import fs from 'node:fs'
import tls from 'node:tls'

export interface TlsFiles {
  certFile: string
  keyFile: string
}

/** What a TLS server takes: the certificate chain and its key, as read. */
export interface TlsPair {
  cert: string
  key: string
  /** The first certificate of the chain (the server's own): subject, expiry, fingerprint. */
  certificate: X509Certificate
}

/** A file that cannot be read or used; `which` names the file (or `pair` for a key that does not match the certificate). */
export class TlsFileError extends Error {
  constructor(
    readonly which: 'cert' | 'key' | 'pair',
    message: string,
  ) {
    super(message)
    this.name = 'TlsFileError'
  }
}

function read(file: string, which: 'cert' | 'key'): string {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch (e) {
    const err = e as NodeJS.ErrnoException
    throw new TlsFileError(which, `cannot read ${file}: ${err.code ?? err.message}`)
  }
}

/** Reads and checks both files: a certificate, a private key, and that they belong together. */
export function readTlsPair(files: TlsFiles): TlsPair {
  const cert = read(files.certFile, 'cert')
  const key = read(files.keyFile, 'key')
  let certificate: X509Certificate
  try {
    certificate = new X509Certificate(cert)
  } catch (e) {
    throw new TlsFileError('cert', `${files.certFile} is not a PEM certificate (${(e as Error).message})`)
  }
  try {
    createPrivateKey(key)
  } catch (e) {
    throw new TlsFileError('key', `${files.keyFile} is not a PEM private key (${(e as Error).message})`)
  }
  if (!certificate.checkPrivateKey(createPrivateKey(key)))
    throw new TlsFileError('pair', `the private key in ${files.keyFile} does not belong to the certificate in ${files.certFile}`)
  try {
    tls.createSecureContext({ cert, key })
  } catch (e) {
    throw new TlsFileError('pair', `${files.certFile} and ${files.keyFile} do not make a usable TLS pair (${(e as Error).message})`)
  }
  return { cert, key, certificate }
}

export interface TlsWatchLog {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
}

/**
 * Follows both files (fs.watchFile: a stat every `intervalMs`, which sees a write in place,
 * a rename over the file and a symbolic link moved to a new target alike) and hands every
 * new usable pair to `apply`. Returns the function that stops following them.
 */
export function watchTlsPair(files: TlsFiles, current: TlsPair, intervalMs: number, apply: (pair: TlsPair) => void, log: TlsWatchLog): () => void {
  let served = current
  let lastProblem: string | null = null
  const check = (): void => {
    let pair: TlsPair
    try {
      pair = readTlsPair(files)
    } catch (e) {
      const problem = (e as Error).message
      // One line per distinct problem, not one per change of a file being replaced.
      if (problem !== lastProblem)
        log.warn({ problem }, 'MQTT over TLS: the changed certificate files cannot be used yet; still serving the previous certificate')
      lastProblem = problem
      return
    }
    lastProblem = null
    if (pair.cert === served.cert && pair.key === served.key) return
    served = pair
    apply(pair)
    log.info(describe(pair.certificate), 'MQTT over TLS: certificate reloaded, served from the next handshake on')
  }
  const listener = (curr: fs.Stats, prev: fs.Stats): void => {
    if (curr.mtimeMs === prev.mtimeMs && curr.ino === prev.ino && curr.size === prev.size && curr.ctimeMs === prev.ctimeMs) return
    check()
  }
  fs.watchFile(files.certFile, { interval: intervalMs, persistent: false }, listener)
  fs.watchFile(files.keyFile, { interval: intervalMs, persistent: false }, listener)
  return () => {
    fs.unwatchFile(files.certFile, listener)
    fs.unwatchFile(files.keyFile, listener)
  }
}

/** The log fields of a certificate: whom it names and until when it is valid. */
export function describe(c: X509Certificate): { subject: string; subjectAltName: string | undefined; validTo: string; fingerprint256: string } {
  return { subject: c.subject, subjectAltName: c.subjectAltName, validTo: c.validTo, fingerprint256: c.fingerprint256 }
}
