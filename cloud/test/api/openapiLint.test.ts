// The served interface document passes Redocly CLI's recommended rules with 0 errors and
// 0 warnings. Redocly runs as a child process on the document GET /v1/openapi.json
// answers, offline: telemetry and the update check are switched off, and the rules come
// from the installed package (cloud/openapi/redocly.yaml), not from the network.
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { build } from '../helpers.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const configDir = path.join(here, '..', '..', 'openapi')
const require = createRequire(import.meta.url)
const redoclyCli = path.join(path.dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js')

/** A hang guard: Redocly takes seconds alone, and minutes on a machine busy with the rest of the suite. */
const LINT_GUARD_MS = 5 * 60_000

interface Problem {
  ruleId: string
  severity: string
  message: string
  location: { pointer: string }[]
}

function lint(dir: string): Promise<{ code: number; problems: Problem[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [redoclyCli, 'lint', 'openapi.json', '--config', 'redocly.yaml', '--format', 'json', '--max-problems', '10000'],
      {
        cwd: dir,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        maxBuffer: 64 * 1024 * 1024,
        timeout: LINT_GUARD_MS,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0
        const start = stdout.indexOf('{')
        if (start < 0)
          return reject(new Error(`redocly printed no report (exit ${code}, signal ${err?.signal ?? 'none'}): ${stderr.slice(-2000)} ${stdout.slice(-2000)}`))
        try {
          resolve({ code, problems: (JSON.parse(stdout.slice(start)) as { problems: Problem[] }).problems, stderr })
        } catch (e) {
          reject(e)
        }
      },
    )
  })
}

t.test('Redocly recommended rules: 0 errors, 0 warnings on the served document', async (t) => {
  const h = await build(t)
  const res = await h.req('GET', '/v1/openapi.json', null)
  t.equal(res.statusCode, 200)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-openapi-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  fs.writeFileSync(path.join(dir, 'openapi.json'), res.body)
  for (const f of ['redocly.yaml', '.redocly.lint-ignore.yaml']) fs.copyFileSync(path.join(configDir, f), path.join(dir, f))

  const { code, problems, stderr } = await lint(dir)
  const shown = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`)
  t.same(shown, [], 'no problems')
  t.equal(code, 0, `redocly exits 0${stderr ? `; stderr: ${stderr.slice(0, 500)}` : ''}`)
  t.notMatch(stderr, /Something went wrong|ENOTFOUND|fetch failed/i, 'nothing reached for the network')

  // the lint can fail: the same document with an operation stripped of its operationId is refused
  const doc = res.json() as { paths: Record<string, Record<string, { operationId?: string }>> }
  delete doc.paths['/v1/screens']!.get!.operationId
  fs.writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(doc))
  const broken = await lint(dir)
  t.ok(
    broken.problems.some((p) => p.ruleId === 'operation-operationId'),
    'a missing operationId is reported',
  )
})
