// `update` jobs: install another version of the packed agent beside the running one.
// The release is refused (a `failed` result at once, the running version untouched, nothing
// left on disk) when the agent is not run by its supervisor (the packed launcher), when no
// release key is installed, when it is for another architecture, when its signature is not
// the installed key's, or when the download is not the tarball the job describes (size,
// SHA-256) or not a packed agent of that version. Otherwise it is unpacked into
// <data>/releases/<version>-<arch>/svc-agent/, the state says "active = new, previous = this,
// on trial", and the agent stops and exits 75: the supervisor starts the new version, which
// sends the job's result once it has connected and reported (releases/UpdateReporter.ts), or
// goes back to this one, which then sends the rollback.
import { createHash, type KeyObject } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { JobResult, UpdateJob } from '@svc/shared/mqtt/index'
import { releasePublicKey, signatureValid } from '@svc/shared/releases'
import * as tar from 'tar'
import { type ReleaseState, freshState, readState, releaseProgramDir, writeState } from '../releases/state.js'
import type { Logger } from '../runtime/Logger.js'
import type { Clock } from '../runtime/time.js'
import { onOwnCloud } from './deviceUpload.js'

/** How the running agent was started, as far as updates go. */
export interface UpdateSetup {
  /** The release state file (from the supervisor's environment); null = not supervised. */
  stateFile: string | null
  /** The installed program's version (a fresh state records it). */
  installedVersion: string
  /** The release key's public half (PEM): --release-key, else the running program's share/release-key.pub; null = none. */
  releaseKeyPem: string | null
  /** Where the key came from, for messages. */
  releaseKeySource: string
  /** Asks the agent to stop cleanly and exit 75 (the supervisor restarts into the update). */
  restart: () => void
}

export interface UpdateInstallerOptions {
  setup: UpdateSetup
  cloudUrl: string
  screenId: string
  deviceSecret: string
  runningVersion: string
  /** This machine's architecture (default os.arch()). */
  arch?: string
  fetch?: (input: string, init?: RequestInit) => Promise<Response>
  /** The download's time bound (default 10 minutes). */
  downloadTimeoutMs?: number
  log: Logger
  clock: Clock
}

class Refusal extends Error {}

export class UpdateInstaller {
  readonly #o: UpdateInstallerOptions

  constructor(options: UpdateInstallerOptions) {
    this.#o = options
  }

  /** The result to send now, or null when the agent restarts into the update (the result comes later). */
  async run(job: UpdateJob): Promise<JobResult | null> {
    const { log, clock, setup } = this.#o
    const done = (outcome: 'ok' | 'failed', reason?: string): JobResult => ({
      jobId: job.id,
      kind: 'update',
      sentHex: '',
      replyHex: '',
      outcome,
      ...(reason ? { reason: reason.slice(0, 400) } : {}),
      at: clock.now().toISOString(),
    })
    if (!setup.stateFile)
      return done(
        'failed',
        'updates need the packed agent started by its launcher (bin/svc-agent start, as the svc-agent service does): this agent runs without its supervisor',
      )
    let key: KeyObject
    if (setup.releaseKeyPem === null)
      return done('failed', `no release key is installed (${setup.releaseKeySource}): pack the agent with --release-key, or start it with --release-key FILE`)
    try {
      key = releasePublicKey(setup.releaseKeyPem)
    } catch (err) {
      return done('failed', `the installed release key (${setup.releaseKeySource}) is unusable: ${(err as Error).message}`)
    }
    const arch = this.#o.arch ?? os.arch()
    if (job.arch !== arch) return done('failed', `the release is for ${job.arch}; this player is ${arch}`)
    if (job.version === this.#o.runningVersion) {
      log.info({ jobId: job.id, version: job.version }, 'the update asks for the running version: nothing to do')
      return done('ok', `version ${job.version} is already running`)
    }
    if (!signatureValid(key, job.sha256, job.signature))
      return done('failed', `the release's signature is not the installed release key's (${setup.releaseKeySource}): refused`)

    const releases = path.dirname(setup.stateFile)
    const name = `${job.version}-${job.arch}`
    const work = path.join(releases, `.incoming-${process.pid}-${Date.now()}`)
    try {
      fs.mkdirSync(work, { recursive: true, mode: 0o700 })
      const tarball = path.join(work, 'release.tar.gz')
      await this.#download(job, tarball)
      const unpacked = path.join(work, 'unpacked')
      fs.mkdirSync(unpacked)
      try {
        await tar.x({ file: tarball, cwd: unpacked, strict: true, preserveOwner: false })
      } catch (err) {
        throw new Refusal(`the release is not a readable tar.gz: ${(err as Error).message}`)
      }
      const program = path.join(unpacked, 'svc-agent')
      for (const f of ['bin/svc-agent', 'lib/svc-agent.mjs', 'package.json'])
        if (!fs.statSync(path.join(program, f), { throwIfNoEntry: false })?.isFile())
          throw new Refusal(`the release holds no svc-agent/${f}: not a packed agent`)
      let packed: string | undefined
      try {
        packed = (JSON.parse(fs.readFileSync(path.join(program, 'package.json'), 'utf8')) as { version?: string }).version
      } catch {
        throw new Refusal("the release's svc-agent/package.json is not JSON")
      }
      if (packed !== job.version) throw new Refusal(`the release is version ${packed ?? '(none)'}, the job says ${job.version}`)

      // In place: releases/<version>-<arch>/svc-agent (an earlier copy of the same release goes).
      const target = path.join(releases, name)
      fs.rmSync(target, { recursive: true, force: true })
      fs.mkdirSync(target, { mode: 0o755 })
      fs.renameSync(program, releaseProgramDir(releases, name))
      const state: ReleaseState = readState(setup.stateFile) ?? freshState(setup.installedVersion)
      // What runs now becomes the previous program (null: the installed one).
      writeState(setup.stateFile, {
        ...state,
        active: { version: job.version, dir: name },
        previous: state.active,
        trial: { jobId: job.id, version: job.version, since: clock.now().toISOString() },
        rolledBack: null,
      })
      log.info(
        { jobId: job.id, version: job.version, from: this.#o.runningVersion, program: releaseProgramDir(releases, name) },
        'update installed; restarting into it',
      )
      setImmediate(setup.restart)
      return null
    } catch (err) {
      if (err instanceof Refusal) return done('failed', err.message)
      log.error({ jobId: job.id, err: err as Error }, 'the update could not be installed')
      return done('failed', `the update could not be installed: ${(err as Error).message}`)
    } finally {
      fs.rmSync(work, { recursive: true, force: true })
    }
  }

  /**
   * Downloads the tarball with the device credential into `file`: at most job.size bytes, its
   * SHA-256 checked as it comes. Only from this agent's own cloud: a URL on another origin is
   * taken as a path on it, and a redirect is refused (it could lead the credential elsewhere).
   */
  async #download(job: UpdateJob, file: string): Promise<void> {
    let url: string
    try {
      url = onOwnCloud(job.url, this.#o.cloudUrl)
    } catch (err) {
      throw new Refusal(`the release's URL is unusable: ${(err as Error).message}`)
    }
    let res: Response
    const signal = AbortSignal.timeout(this.#o.downloadTimeoutMs ?? 600_000)
    try {
      res = await (this.#o.fetch ?? fetch)(url, {
        headers: { authorization: `Basic ${Buffer.from(`${this.#o.screenId}:${this.#o.deviceSecret}`).toString('base64')}` },
        redirect: 'error',
        signal,
      })
    } catch (err) {
      throw new Refusal(`the release could not be downloaded from ${url}: ${(err as Error).message}`)
    }
    if (!res.ok || !res.body) {
      await res.arrayBuffer().catch(() => undefined)
      throw new Refusal(`the release could not be downloaded from ${url}: HTTP ${res.status}`)
    }
    const declared = Number(res.headers.get('content-length') ?? Number.NaN)
    if (Number.isFinite(declared) && declared !== job.size) {
      await res.body.cancel().catch(() => undefined)
      throw new Refusal(`the download is ${declared} bytes, the job says ${job.size}`)
    }
    const hash = createHash('sha256')
    const fd = fs.openSync(file, 'w', 0o600)
    let bytes = 0
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.length
        if (bytes > job.size) throw new Refusal(`the download is longer than the job's ${job.size} bytes`)
        hash.update(chunk)
        fs.writeSync(fd, chunk)
      }
    } catch (err) {
      if (err instanceof Refusal) throw err
      throw new Refusal(`the download from ${url} broke off: ${(err as Error).message}`)
    } finally {
      fs.closeSync(fd)
    }
    if (bytes !== job.size) throw new Refusal(`the download is ${bytes} bytes, the job says ${job.size}`)
    const digest = hash.digest('hex')
    if (digest !== job.sha256) throw new Refusal(`the download's SHA-256 is ${digest}, the job says ${job.sha256}`)
  }
}
