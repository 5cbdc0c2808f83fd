// The certificates the agent trusts on its TLS connections to the cloud (HTTPS calls and
// the MQTT link): the system's roots, plus the CA given with --ca (a private CA, a lab's).
import tls from 'node:tls'
import { Agent, fetch as undiciFetch } from 'undici'

/** The system's roots and the PEM text of `--ca` (one certificate or several). */
export function trustedCas(caPem: string): string[] {
  return [...tls.rootCertificates, caPem]
}

/** A fetch that can let go of its idle connections (so a stopped agent holds no socket open). */
/** What the agent fetches the cloud with (global fetch, or undici's with a CA). */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>

export type ClosableFetch = FetchLike & { close(): Promise<void> }

/**
 * fetch for the cloud's HTTPS calls (pairing, media, screenshots) that verifies against
 * `ca`. close() ends its connections; a later call opens new ones.
 */
export function fetchTrusting(ca: string[]): ClosableFetch {
  let dispatcher: Agent | null = null
  const call = (input: string, init?: RequestInit): Promise<Response> => {
    dispatcher ??= new Agent({ connect: { ca } })
    return undiciFetch(input, { ...(init as object), dispatcher }) as unknown as Promise<Response>
  }
  return Object.assign(call, {
    async close() {
      const d = dispatcher
      dispatcher = null
      await d?.close().catch(() => undefined)
    },
  })
}

/** For a TLS verification failure (by its code), what to do about it; '' for any other failure. */
export function certificateHint(code: string): string {
  return /CERT|UNABLE_TO_VERIFY|TLS not authorized/i.test(code) ? ' (its certificate is not trusted: give the CA that signed it with --ca FILE)' : ''
}
