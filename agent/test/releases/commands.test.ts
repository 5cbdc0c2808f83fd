// `agent release-key` and `agent sign-release` as child processes: the key files (modes,
// PEM), no overwriting, a signature file that verifies against the public key and the
// tarball, and bad input refused in one line with exit 2.
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { keyFingerprint, parseSignatureFile, releasePublicKey, sha256Hex, signatureValid } from '@svc/shared/releases'
import { runAgentCli, tempDir } from '../helpers.js'

async function cli(t: Parameters<typeof runAgentCli>[0], args: string[]) {
  const p = await runAgentCli(t, args)
  const { code } = await p.exited
  return { code, out: p.out.join('\n'), err: p.err() }
}

t.test('release-key writes the pair (private 0600), prints the paths and the fingerprint, and never overwrites', async (t) => {
  const dir = path.join(tempDir(t), 'keys')
  const r = await cli(t, ['release-key', '--out', dir])
  t.equal(r.code, 0, r.err)
  const priv = path.join(dir, 'release-key.pem')
  const pub = path.join(dir, 'release-key.pub')
  t.equal(fs.statSync(priv).mode & 0o777, 0o600, 'the private key is 0600')
  t.match(fs.readFileSync(priv, 'utf8'), /^-----BEGIN PRIVATE KEY-----\n/)
  t.match(fs.readFileSync(pub, 'utf8'), /^-----BEGIN PUBLIC KEY-----\n/)
  const key = releasePublicKey(fs.readFileSync(pub, 'utf8'))
  t.equal(r.out, `${priv}\n${pub}\nfingerprint ${keyFingerprint(key)}`)
  t.equal(r.err, '')

  const privBefore = fs.readFileSync(priv, 'utf8')
  const again = await cli(t, ['release-key', '--out', dir])
  t.equal(again.code, 2)
  t.equal(again.err, `agent: ${priv} exists; not overwriting a release key (move it away first)\n`)
  t.equal(fs.readFileSync(priv, 'utf8'), privBefore, 'the key is untouched')

  // Only the public half there: still refused (a pair is written together).
  const half = tempDir(t)
  fs.copyFileSync(pub, path.join(half, 'release-key.pub'))
  const halfRun = await cli(t, ['release-key', '--out', half])
  t.equal(halfRun.code, 2)
  t.same(fs.readdirSync(half), ['release-key.pub'])
})

t.test('sign-release writes TARBALL.sig, which verifies with the public key; refusals in one line', async (t) => {
  const dir = tempDir(t)
  t.equal((await cli(t, ['release-key', '--out', dir])).code, 0)
  const tarball = path.join(dir, 'svc-agent-1.2.3-linux-x64.tar.gz')
  fs.writeFileSync(tarball, zlib.gzipSync(Buffer.alloc(2048, 7)))
  const r = await cli(t, ['sign-release', '--key', path.join(dir, 'release-key.pem'), tarball])
  t.equal(r.code, 0, r.err)
  const key = releasePublicKey(fs.readFileSync(path.join(dir, 'release-key.pub'), 'utf8'))
  t.equal(r.out, `${tarball}.sig\nfingerprint ${keyFingerprint(key)}`)
  const sig = parseSignatureFile(fs.readFileSync(`${tarball}.sig`, 'utf8'))
  t.equal(sig.sha256, sha256Hex(fs.readFileSync(tarball)), 'the tarball’s digest')
  t.ok(signatureValid(key, sig.sha256, sig.signature), 'the signature verifies with the public key')
  t.notOk(signatureValid(key, sha256Hex(Buffer.from('another file')), sig.signature), 'and not for another file')
  t.equal(Buffer.from(sig.publicKey, 'base64').equals(key.export({ type: 'spki', format: 'der' })), true, 'the signer’s key in the file')

  const notGz = path.join(dir, 'notes.txt')
  fs.writeFileSync(notGz, 'hello')
  const cases: Array<[string[], RegExp]> = [
    [['sign-release', tarball], /^agent: --key FILE is needed/],
    [['sign-release', '--key', path.join(dir, 'release-key.pem')], /^agent: one tarball to sign is needed, got 0/],
    [['sign-release', '--key', path.join(dir, 'release-key.pub'), tarball], /^agent: --key: .*release-key\.pub: not a private key/],
    [['sign-release', '--key', path.join(dir, 'none.pem'), tarball], /^agent: --key: cannot read .*none\.pem: ENOENT/],
    [['sign-release', '--key', path.join(dir, 'release-key.pem'), path.join(dir, 'none.tar.gz')], /^agent: cannot read .*none\.tar\.gz: ENOENT/],
    [['sign-release', '--key', path.join(dir, 'release-key.pem'), notGz], /^agent: .*notes\.txt is not a gzipped tarball/],
    [['release-key', '--bogus'], /^agent: Unknown option '--bogus'/],
  ]
  const runs = cases.map(([args, want]) => ({ args, want, p: cli(t, args) }))
  for (const { args, want, p } of runs) {
    const res = await p
    t.equal(res.code, 2, args.join(' '))
    t.match(res.err, want)
    t.notMatch(res.err, /^\s+at /m, 'no stack trace')
  }
  t.notOk(fs.existsSync(`${notGz}.sig`), 'nothing signed')
})

t.test('start --release-key: a file that is not an Ed25519 public key is a usage error', async (t) => {
  const dir = tempDir(t)
  t.equal((await cli(t, ['release-key', '--out', dir])).code, 0)
  for (const [file, want] of [
    [path.join(dir, 'release-key.pem'), /^agent: --release-key: .*release-key\.pem: not a public key/],
    [path.join(dir, 'none.pub'), /^agent: --release-key: cannot read .*none\.pub: ENOENT/],
  ] as const) {
    const r = await cli(t, ['start', '--cloud', 'http://127.0.0.1:1', '--data', dir, '--player-port', '0', '--release-key', file])
    t.equal(r.code, 2)
    t.match(r.err, want)
  }
})
