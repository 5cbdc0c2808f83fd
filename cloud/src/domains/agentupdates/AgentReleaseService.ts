// Agent releases: packed agent tarballs (`agent pack`) uploaded with their signature file
// (`agent sign-release`). An upload is checked before it is kept: a gzipped tar holding a
// packed agent (its version and architecture are read from it), a signature file whose
// SHA-256 is the tarball's and whose Ed25519 signature verifies with the key it names. The
// cloud does not decide which keys are trusted: each agent accepts only releases signed by
// the key it was installed with; the release shows the key's fingerprint so an operator can
// see which key signed it. One release per version and architecture; the bytes go to the
// content-addressed file store. Devices download a release with their credential.
import { Type, type Static } from '@sinclair/typebox'
import { keyFingerprint, parseSignatureFile, releasePublicKey, signatureValid } from '@svc/shared/releases'
import type { Readable } from 'node:stream'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import { Nullable, Timestamp } from '../../platform/contract.js'
import type { Database } from '../../platform/db/Database.js'
import { ApiError, notFound, validation } from '../../platform/errors.js'
import { actorRef, type Principal } from '../../platform/http/Principal.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import type { MediaStore, StagedFile } from '../media/index.js'
import { deviceScreen } from '../screens/index.js'
import { AgentReleaseRepository, type AgentReleaseRow } from './AgentReleaseRepository.js'
import { AgentRolloutRepository } from './AgentRolloutRepository.js'
import { DEFAULT_TARBALL_LIMITS, type PackedAgent, readThrough, TarballReader, TarballRefusal, type TarballLimits } from './tarball.js'

export const AgentRelease = Type.Object({
  id: Type.String({ description: 'Prefix `arel_`.' }),
  version: Type.String({ description: "The agent version, read from the tarball's package.json." }),
  arch: Type.String({ description: 'The player architecture it runs on (`x64` or `arm64`), read from the serial binding it carries.' }),
  sha256: Type.String({ description: "The tarball's SHA-256, hex." }),
  sizeBytes: Type.Integer(),
  keyFingerprint: Type.String({
    description: 'The signing key: the first 16 hex digits of the SHA-256 of its public key (SPKI DER), as `agent release-key` prints it.',
  }),
  createdAt: Timestamp,
  createdBy: Nullable(Type.String()),
})
export type AgentReleaseView = Static<typeof AgentRelease>

const view = (r: AgentReleaseRow): AgentReleaseView => ({
  id: r.id,
  version: r.version,
  arch: r.arch,
  sha256: r.sha256,
  sizeBytes: Number(r.size_bytes),
  keyFingerprint: r.key_fingerprint,
  createdAt: r.created_at,
  createdBy: r.created_by,
})

export class AgentReleaseService {
  private readonly repo: AgentReleaseRepository
  /** The rollouts' rows: which rollout moves screens to a version, and which screens were sent a release. */
  private readonly rollouts: AgentRolloutRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    readonly store: MediaStore,
    /** How far an upload is read before it is refused. */
    readonly limits: TarballLimits = DEFAULT_TARBALL_LIMITS,
  ) {
    this.repo = new AgentReleaseRepository(db.kysely)
    this.rollouts = new AgentRolloutRepository(db.kysely)
  }

  /**
   * Stages an uploaded tarball, reading it as it comes (TarballReader): 422 as soon as it is
   * not a packed agent or passes a limit (unpacked size, entries, time), without reading on.
   */
  async stage(source: AsyncIterable<Buffer>, maxBytes: number): Promise<{ staged: StagedFile; packed: PackedAgent }> {
    const reader = new TarballReader(this.limits)
    let staged: StagedFile
    try {
      staged = await this.store.stage(readThrough(source, reader), maxBytes)
    } catch (e) {
      if (e instanceof TarballRefusal) throw validation(`file: ${e.message}.`)
      throw e
    }
    try {
      return { staged, packed: await reader.end() }
    } catch (e) {
      await this.store.discard(staged)
      if (e instanceof TarballRefusal) throw validation(`file: ${e.message}.`)
      throw e
    }
  }

  /** Keeps a staged upload (its packed agent read by `stage`) as a release, or throws (422 for a signature that does not match it, 409 for a version and architecture already uploaded). The caller discards the staged file. */
  async create(p: Principal, staged: StagedFile, packed: PackedAgent, signatureText: string): Promise<AgentReleaseView> {
    let sig: ReturnType<typeof parseSignatureFile>
    let fingerprint: string
    try {
      sig = parseSignatureFile(signatureText)
      const key = releasePublicKey(sig.publicKey)
      fingerprint = keyFingerprint(key)
      if (sig.sha256 !== staged.sha256) throw new Error(`it signs a file whose SHA-256 is ${sig.sha256}, not this tarball (${staged.sha256})`)
      if (!signatureValid(key, sig.sha256, sig.signature)) throw new Error('the signature does not verify with the key it names')
    } catch (e) {
      throw validation(`signature: ${(e as Error).message}.`)
    }
    const existing = await this.repo.find(p.workspaceId, packed.version, packed.arch)
    if (existing)
      throw new ApiError('conflict', `Version ${packed.version} for ${packed.arch} is already uploaded (${existing.id}); delete it first to replace it.`)
    const row: AgentReleaseRow = {
      id: this.ids.next('agentRelease'),
      workspace_id: p.workspaceId,
      version: packed.version,
      arch: packed.arch,
      sha256: staged.sha256,
      size_bytes: staged.sizeBytes,
      signature: sig.signature,
      public_key: sig.publicKey,
      key_fingerprint: fingerprint,
      created_at: this.clock.now().toISOString(),
      created_by: actorRef(p),
    }
    await this.store.commit(staged, async () => {
      try {
        await this.repo.insert(row)
      } catch (e) {
        // Two uploads of one version at once: the unique index keeps one.
        if (await this.repo.find(p.workspaceId, packed.version, packed.arch))
          throw new ApiError('conflict', `Version ${packed.version} for ${packed.arch} is already uploaded.`)
        throw e
      }
    })
    return view(row)
  }

  async list(p: Principal, page: PageRequest, version?: string): Promise<Page<AgentReleaseView>> {
    const total = page.count ? await this.repo.count(p.workspaceId, version) : undefined
    return pageOf(await this.repo.list(p.workspaceId, page, version), page, view, total)
  }

  async get(p: Principal, id: string): Promise<AgentReleaseView> {
    const r = await this.repo.get(p.workspaceId, id)
    if (!r) throw notFound('No such agent release.')
    return view(r)
  }

  /** The rows of a version, one per architecture (the rollouts). */
  ofVersion(workspaceId: string, version: string): Promise<AgentReleaseRow[]> {
    return this.repo.ofVersion(workspaceId, version)
  }

  /** Deletes a release no open rollout moves screens to; its bytes go unless another owner holds them. */
  async remove(p: Principal, id: string): Promise<{ id: string; deleted: true }> {
    const r = await this.repo.get(p.workspaceId, id)
    if (!r) throw notFound('No such agent release.')
    const rollout = await this.rollouts.openWithVersion(p.workspaceId, r.version)
    if (rollout) throw new ApiError('conflict', `Rollout ${rollout} moves screens to ${r.version}; abort it or let it finish first.`)
    if (await this.repo.delete(p.workspaceId, id)) await this.store.release(r.sha256)
    return { id, deleted: true }
  }

  /**
   * The tarball for a device: `authorization` must be the device credential (HTTP Basic
   * screenId:deviceSecret) of a screen a rollout sent this release to; 401 otherwise, the
   * same whether the release exists or not.
   */
  async forDevice(id: string, authorization: string | undefined): Promise<{ release: AgentReleaseRow; body: Readable }> {
    const screenId = await deviceScreen(this.db, authorization)
    const release = await this.repo.byId(id)
    if (!screenId || !release || !(await this.rollouts.wasSent(screenId, id)))
      throw new ApiError('invalid_credentials', 'The device credential does not match a screen this release was sent to.')
    return { release, body: await this.store.read(release.sha256) }
  }
}
