// `agent pack`: the agent as something to install on a player.
//   svc-agent-<version>-linux-<arch>.tar.gz   svc-agent/bin/svc-agent, lib/ (the bundle, the
//                                             serial binding of that architecture), share/
//   svc-agent_<version>_<debarch>.deb         the same under /opt/svc-agent, plus the settings,
//                                             the units, the users (only where dpkg-deb exists)
// The packed program runs with Node alone: no pnpm, npx, tsx, compiler or network.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ARCHES, agentPackageVersion, bundleAgent, type PackArch } from './bundle.js'
import {
  AGENT_ENV,
  CONFFILES,
  ENV_FILE,
  KIOSK,
  KIOSK_SESSION,
  LAUNCHER,
  POSTINST,
  POSTRM,
  PREFIX,
  PRERM,
  UNITS,
  UNIT_DIR,
  WATCHDOG,
  control,
  debianVersion,
} from './files.js'
import { writeTarGz } from './tar.js'

/** The .deb's compression (dpkg-deb -Z): xz is the default, the smallest; none the quickest to build. */
export const DEB_COMPRESSIONS = ['xz', 'zstd', 'gzip', 'none'] as const
export type DebCompression = (typeof DEB_COMPRESSIONS)[number]

export interface PackOptions {
  arch: PackArch
  /** Where the files go (created when missing). */
  outDir: string
  /** dpkg-deb's path; default: found on PATH; null = tarball only. */
  dpkgDeb?: string | null
  /** The version packed (default agent/package.json's). */
  version?: string
  /** The release key's public half (SPKI PEM), shipped as share/release-key.pub: what updates are checked against. */
  releaseKeyPem?: string
  /** The .deb's compression (default xz). */
  debCompression?: DebCompression
}

export interface PackResult {
  version: string
  arch: PackArch
  tarball: string
  /** Null when there is no dpkg-deb. */
  deb: string | null
}

export function agentVersion(): string {
  return agentPackageVersion()
}

/** dpkg-deb on PATH, or null. */
export function findDpkgDeb(env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue
    try {
      fs.accessSync(path.join(dir, 'dpkg-deb'), fs.constants.X_OK)
      return path.join(dir, 'dpkg-deb')
    } catch {
      // not here
    }
  }
  return null
}

function write(file: string, text: string, mode = 0o644): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text, { mode })
  fs.chmodSync(file, mode)
}

/** The svc-agent/ folder: the program, its launcher, and the files an installation needs. */
async function stageProgram(root: string, version: string, arch: PackArch, releaseKeyPem: string | undefined): Promise<void> {
  await bundleAgent(path.join(root, 'lib'), arch, root, version)
  if (releaseKeyPem !== undefined) write(path.join(root, 'share/release-key.pub'), releaseKeyPem)
  write(path.join(root, 'bin/svc-agent'), LAUNCHER, 0o755)
  // Fixes the module type of bin/svc-agent whatever folder the tarball is unpacked in.
  write(path.join(root, 'package.json'), `${JSON.stringify({ name: 'svc-agent', version, private: true, type: 'commonjs' }, null, 2)}\n`)
  write(path.join(root, 'share/agent.env'), AGENT_ENV)
  write(path.join(root, 'share/watchdog'), WATCHDOG, 0o755)
  write(path.join(root, 'share/kiosk'), KIOSK, 0o755)
  write(path.join(root, 'share/kiosk-session'), KIOSK_SESSION, 0o755)
  for (const [name, text] of Object.entries(UNITS)) write(path.join(root, 'share/systemd', name), text)
}

function du(dir: string): number {
  let bytes = 0
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name)
    bytes += e.isDirectory() ? du(p) : fs.statSync(p).size
  }
  return bytes
}

/** The .deb's tree around the staged program, built by dpkg-deb into `outFile`. */
function buildDeb(dpkgDeb: string, program: string, debRoot: string, version: string, arch: PackArch, outFile: string, compression: DebCompression): void {
  fs.cpSync(program, path.join(debRoot, PREFIX.slice(1)), { recursive: true })
  write(path.join(debRoot, ENV_FILE.slice(1)), AGENT_ENV)
  for (const [name, text] of Object.entries(UNITS)) write(path.join(debRoot, UNIT_DIR.slice(1), name), text)
  const installedKiB = Math.ceil(du(debRoot) / 1024)
  write(path.join(debRoot, 'DEBIAN/control'), control({ version, arch: ARCHES[arch], installedKiB }))
  write(path.join(debRoot, 'DEBIAN/conffiles'), CONFFILES)
  write(path.join(debRoot, 'DEBIAN/postinst'), POSTINST, 0o755)
  write(path.join(debRoot, 'DEBIAN/prerm'), PRERM, 0o755)
  write(path.join(debRoot, 'DEBIAN/postrm'), POSTRM, 0o755)
  // Folders 0755 whatever the umask (dpkg-deb refuses odd permissions on DEBIAN/).
  const dirs = (d: string): void => {
    fs.chmodSync(d, 0o755)
    for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) dirs(path.join(d, e.name))
  }
  dirs(debRoot)
  execFileSync(dpkgDeb, ['--root-owner-group', `-Z${compression}`, '--build', debRoot, outFile], { stdio: ['ignore', 'ignore', 'pipe'] })
}

export async function packAgent(o: PackOptions): Promise<PackResult> {
  const version = o.version ?? agentVersion()
  const dpkgDeb = o.dpkgDeb === undefined ? findDpkgDeb() : o.dpkgDeb
  const outDir = path.resolve(o.outDir)
  fs.mkdirSync(outDir, { recursive: true })
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-agent-pack-'))
  try {
    const program = path.join(stage, 'svc-agent')
    await stageProgram(program, version, o.arch, o.releaseKeyPem)
    // Each file is written under a name of this process, then renamed: never half a file.
    const tarball = path.join(outDir, `svc-agent-${version}-linux-${o.arch}.tar.gz`)
    writeTarGz(program, 'svc-agent', `${tarball}.${process.pid}.tmp`, Math.floor(Date.now() / 1000))
    fs.renameSync(`${tarball}.${process.pid}.tmp`, tarball)
    let deb: string | null = null
    if (dpkgDeb) {
      deb = path.join(outDir, `svc-agent_${debianVersion(version)}_${ARCHES[o.arch]}.deb`)
      buildDeb(dpkgDeb, program, path.join(stage, 'deb'), version, o.arch, `${deb}.${process.pid}.tmp`, o.debCompression ?? 'xz')
      fs.renameSync(`${deb}.${process.pid}.tmp`, deb)
    }
    return { version, arch: o.arch, tarball, deb }
  } finally {
    fs.rmSync(stage, { recursive: true, force: true })
  }
}
