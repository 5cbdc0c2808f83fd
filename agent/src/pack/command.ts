// `pnpm --silent agent pack [--arch x64|arm64] [--out DIR]`: prints the path of each file it
// built, one a line (the tarball, then the .deb); without dpkg-deb one line on stderr says
// only the tarball was built. Exit 0; 2 for bad arguments; 1 when the build failed.
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { ARCHES, type PackArch } from './bundle.js'
import { packAgent } from './pack.js'

export const PACK_USAGE = `usage:
  agent pack [--arch x64|arm64] [--out DIR]
  builds svc-agent-<version>-linux-<arch>.tar.gz and, where dpkg-deb exists, the .deb
defaults: --arch this machine's, --out dist
`

function shown(file: string): string {
  const rel = path.relative(process.cwd(), file)
  return rel.startsWith('..') || path.isAbsolute(rel) ? file : rel
}

export async function packCommand(argv: string[]): Promise<number> {
  let values
  try {
    ;({ values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options: { arch: { type: 'string' }, out: { type: 'string' } } }))
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
  let result
  try {
    result = await packAgent({ arch: arch as PackArch, outDir: values.out ?? 'dist' })
  } catch (err) {
    process.stderr.write(`agent: pack failed: ${(err as Error).message}\n`)
    return 1
  }
  process.stdout.write(`${shown(result.tarball)}\n`)
  if (result.deb) process.stdout.write(`${shown(result.deb)}\n`)
  else process.stderr.write('agent: no dpkg-deb on this machine: built the tarball only (the .deb needs dpkg-deb, from the dpkg package)\n')
  return 0
}
