// `pnpm --silent agent pack [--arch x64|arm64] [--out DIR] [--version V] [--release-key FILE] [--deb-compression xz|zstd|gzip|none]`: prints the path of each file it
// built, one a line (the tarball, then the .deb); without dpkg-deb one line on stderr says
// only the tarball was built. Exit 0; 2 for bad arguments; 1 when the build failed.
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import fs from 'node:fs'
import { AGENT_VERSION_PATTERN } from '@svc/shared/mqtt/index'
import { releasePublicKey } from '@svc/shared/releases'
import { ARCHES, agentPackageVersion, type PackArch } from './bundle.js'
import { DEB_COMPRESSIONS, type DebCompression, packAgent } from './pack.js'

export const PACK_USAGE = `usage:
  agent pack [--arch x64|arm64] [--out DIR] [--version V] [--release-key FILE] [--deb-compression xz|zstd|gzip|none]
  builds svc-agent-<version>-linux-<arch>.tar.gz and, where dpkg-deb exists, the .deb
defaults: --arch this machine's, --out dist, --version agent/package.json's
--release-key FILE: the release key's public half (release-key.pub from \`agent release-key\`),
          installed as share/release-key.pub; updates must be signed with its private half
--deb-compression: the .deb's (dpkg-deb -Z); default xz, the smallest; none is the quickest to build
`

function shown(file: string): string {
  const rel = path.relative(process.cwd(), file)
  return rel.startsWith('..') || path.isAbsolute(rel) ? file : rel
}

export async function packCommand(argv: string[]): Promise<number> {
  let values
  try {
    ;({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        arch: { type: 'string' },
        out: { type: 'string' },
        version: { type: 'string' },
        'release-key': { type: 'string' },
        'deb-compression': { type: 'string' },
      },
    }))
  } catch (err) {
    process.stderr.write(`agent: ${(err as Error).message}\n${PACK_USAGE}`)
    return 2
  }
  const arch = values.arch ?? os.arch()
  if (!Object.hasOwn(ARCHES, arch)) {
    const what = values.arch === undefined ? `this machine is ${arch}; choose` : `--arch must be`
    process.stderr.write(`agent: ${what} ${Object.keys(ARCHES).join(' or ')}${values.arch === undefined ? ' with --arch' : `, got "${arch}"`}\n${PACK_USAGE}`)
    return 2
  }
  if (values.out !== undefined && values.out.trim() === '') {
    process.stderr.write(`agent: --out needs a folder\n${PACK_USAGE}`)
    return 2
  }
  const version = values.version ?? agentPackageVersion()
  if (!new RegExp(AGENT_VERSION_PATTERN).test(version) || version.length > 64) {
    process.stderr.write(`agent: --version must be letters, digits and . + _ - (starting with a letter or digit, at most 64), got "${version}"\n${PACK_USAGE}`)
    return 2
  }
  const debCompression = values['deb-compression'] ?? 'xz'
  if (!(DEB_COMPRESSIONS as readonly string[]).includes(debCompression)) {
    process.stderr.write(`agent: --deb-compression must be ${DEB_COMPRESSIONS.join(', ')}, got "${debCompression}"\n${PACK_USAGE}`)
    return 2
  }
  let releaseKeyPem: string | undefined
  if (values['release-key'] !== undefined) {
    const file = values['release-key']
    try {
      releaseKeyPem = fs.readFileSync(file, 'utf8')
    } catch (err) {
      const e = err as NodeJS.ErrnoException
      process.stderr.write(`agent: --release-key: cannot read ${file}: ${e.code ?? e.message}\n`)
      return 2
    }
    try {
      if (!releaseKeyPem.includes('-----BEGIN PUBLIC KEY-----')) throw new Error('not a public key (PEM "-----BEGIN PUBLIC KEY-----", release-key.pub)')
      releasePublicKey(releaseKeyPem)
    } catch (err) {
      process.stderr.write(`agent: --release-key: ${file}: ${(err as Error).message}\n`)
      return 2
    }
  }
  let result
  try {
    result = await packAgent({
      arch: arch as PackArch,
      outDir: values.out ?? 'dist',
      version,
      debCompression: debCompression as DebCompression,
      ...(releaseKeyPem !== undefined ? { releaseKeyPem } : {}),
    })
  } catch (err) {
    process.stderr.write(`agent: pack failed: ${(err as Error).message}\n`)
    return 1
  }
  process.stdout.write(`${shown(result.tarball)}\n`)
  if (result.deb) process.stdout.write(`${shown(result.deb)}\n`)
  else process.stderr.write('agent: no dpkg-deb on this machine: built the tarball only (the .deb needs dpkg-deb, from the dpkg package)\n')
  return 0
}
