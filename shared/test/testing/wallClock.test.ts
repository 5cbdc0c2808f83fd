// No test asserts how long something took: a duration measured on the wall clock and
// compared with a number passes on an idle machine and fails on a busy one. Durations are
// bench figures (bench/); timing behaviour runs on the injected clock (ManualClock); a real
// process is awaited on its output or an event, with a deadline only as a hang guard.
// This reads every test file of the workspace and fails naming file:line for each
// comparison (<, <=, >, >=) of a wall-clock duration with anything but 0. A duration is:
//   - a difference with a clock reading on one side (`Date.now() - started`,
//     `performance.now() - t0`, `process.hrtime.bigint() - t0`) or with a variable that
//     holds one (`const started = Date.now()`);
//   - a variable assigned such a difference (`const took = Date.now() - started`);
//   - a value named as one (`ms`, `took`, `elapsed`, `waited`, `…durationMs`, `…elapsedMs`,
//     `…tookMs`): a measured span the code under test or the test reports.
// Deadlines are not durations: `Date.now() > end` with `end = Date.now() + ms` is a hang guard.
// A hang guard is minutes, though: a deadline of a literal number of milliseconds (`end =
// Date.now() + 5000`, then `Date.now() < end`) is a bound on how fast something is, which a
// busy machine overruns, and is reported too; so is a polling helper's guard (`until(5000, fn)`).
// The line is the shared HANG_GUARD_MS (5 minutes): a literal guard shorter than that is
// reported, whatever its shape: a deadline (`Date.now() + 120_000`), a wait's default limit
// (`ms = 2 * 60_000`, `timeoutMs`, `waitMs`), a fetch's `AbortSignal.timeout(120_000)`, a
// timer, a child's or a browser's `timeout:`. Under load, 2-minute guards have expired on
// healthy tests. A name (`HANG_GUARD_MS`) is not judged; a literal of 5 minutes or more passes.
// So is a reply or request time limit handed to the code under test as a number of seconds
// (`new DisplayDriver({ timeoutMs: 1000 })`): a busy machine overruns it on the path that was
// meant to succeed. A limit that is the subject (a peer that never answers, a limit on the
// injected clock) is a named constant whose comment says so (`REPLY_TIMEOUT_MS`).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
const PACKAGES = ['agent', 'cloud', 'shared', 'firmware-sim', 'demo']

/** Every .ts/.mts/.mjs file under `dir` (relative to the repository), outside node_modules and dot-folders. */
function find(dir: string): string[] {
  const out: string[] = []
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, e.name)
    if (e.isDirectory() && e.name !== 'node_modules' && !e.name.startsWith('.')) out.push(...find(rel))
    else if (e.isFile() && /\.(ts|mts|mjs)$/.test(e.name)) out.push(rel)
  }
  return out
}

const CLOCK_READINGS = new Set(['Date.now', 'performance.now', 'process.hrtime', 'process.hrtime.bigint', 'hrtime', 'hrtime.bigint'])
const DURATION_NAME = /^(ms|took|elapsed|waited)$|(durationMs|elapsedMs|tookMs)$/i
const RELATIONAL = new Set([
  ts.SyntaxKind.LessThanToken,
  ts.SyntaxKind.LessThanEqualsToken,
  ts.SyntaxKind.GreaterThanToken,
  ts.SyntaxKind.GreaterThanEqualsToken,
])

/** The expression without parentheses, `as`/`!`, and number conversions (`Math.round(x)`, `Number(x)`). */
function unwrap(e: ts.Expression): ts.Expression {
  for (;;) {
    if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e)) e = e.expression
    else if (ts.isCallExpression(e) && e.arguments.length === 1 && /^(Math\.(round|floor|ceil|trunc)|Number)$/.test(e.expression.getText())) e = e.arguments[0]!
    else return e
  }
}

/** The wall-clock comparisons of one file's text: `line: code` for each. */
export function wallClockComparisons(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const isReading = (e: ts.Expression): boolean => {
    const u = unwrap(e)
    return ts.isCallExpression(u) && CLOCK_READINGS.has(u.expression.getText(source))
  }
  // Variables that hold a clock reading, then those that hold a duration (to a fixed point:
  // a duration may be computed from a variable declared below it in the file).
  const instants = new Set<string>()
  const durations = new Set<string>()
  const assignments: Array<[string, ts.Expression]> = []
  const visitAssignments = (n: ts.Node): void => {
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer) assignments.push([n.name.text, n.initializer])
    if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isIdentifier(n.left)) assignments.push([n.left.text, n.right])
    ts.forEachChild(n, visitAssignments)
  }
  visitAssignments(source)
  for (const [name, init] of assignments) if (isReading(init)) instants.add(name)
  const isInstant = (e: ts.Expression): boolean => {
    const u = unwrap(e)
    return isReading(u) || (ts.isIdentifier(u) && instants.has(u.text))
  }
  const isConstant = (e: ts.Expression): boolean => {
    const u = unwrap(e)
    if (ts.isNumericLiteral(u)) return true
    if (ts.isIdentifier(u)) return /^[A-Z][A-Z0-9_]*$/.test(u.text)
    return ts.isBinaryExpression(u) && isConstant(u.left) && isConstant(u.right)
  }
  const isDuration = (e: ts.Expression): boolean => {
    const u = unwrap(e)
    // A reading minus a constant (`Date.now() - 86_400_000`) is an instant, not a duration.
    if (ts.isBinaryExpression(u) && u.operatorToken.kind === ts.SyntaxKind.MinusToken)
      return (isInstant(u.left) && !isConstant(u.right)) || (isInstant(u.right) && !isConstant(u.left))
    if (ts.isIdentifier(u)) return durations.has(u.text) || DURATION_NAME.test(u.text)
    if (ts.isPropertyAccessExpression(u)) return DURATION_NAME.test(u.name.text)
    return false
  }
  for (let grew = true; grew; ) {
    grew = false
    for (const [name, init] of assignments)
      if (!durations.has(name) && isDuration(init)) {
        durations.add(name)
        grew = true
      }
  }
  // Deadlines of a fixed number of milliseconds under a minute: `end = Date.now() + 5000`.
  const valueOf = (e: ts.Expression): number | null => {
    const u = unwrap(e)
    if (ts.isNumericLiteral(u)) return Number(u.text.replaceAll('_', ''))
    if (!ts.isBinaryExpression(u)) return null
    const [l, r] = [valueOf(u.left), valueOf(u.right)]
    if (l === null || r === null) return null
    if (u.operatorToken.kind === ts.SyntaxKind.AsteriskToken) return l * r
    if (u.operatorToken.kind === ts.SyntaxKind.PlusToken) return l + r
    if (u.operatorToken.kind === ts.SyntaxKind.MinusToken) return l - r
    return null
  }
  const shortDeadline = (e: ts.Expression): boolean => {
    const u = unwrap(e)
    if (!ts.isBinaryExpression(u) || u.operatorToken.kind !== ts.SyntaxKind.PlusToken) return false
    const guard = isReading(u.left) ? valueOf(u.right) : isReading(u.right) ? valueOf(u.left) : null
    return guard !== null && guard < HANG_GUARD_MS
  }
  const shortDeadlines = new Set(assignments.filter(([, init]) => shortDeadline(init)).map(([name]) => name))
  const isShortDeadline = (e: ts.Expression): boolean => {
    const u = unwrap(e)
    return (ts.isIdentifier(u) && shortDeadlines.has(u.text)) || shortDeadline(u)
  }
  const found: string[] = []
  const isZero = (e: ts.Expression): boolean => {
    const u = unwrap(e)
    return ts.isNumericLiteral(u) && Number(u.text.replaceAll('_', '')) === 0
  }
  const visit = (n: ts.Node): void => {
    // A wait's limit given as a parameter's default (`async function until(pred, ms = 10_000)`).
    if (ts.isParameter(n) && n.initializer && ts.isIdentifier(n.name) && /^(ms|timeout|timeoutMs|guardMs|waitMs|withinMs|limitMs)$/.test(n.name.text)) {
      const guard = valueOf(n.initializer)
      if (guard !== null && guard > 0 && guard < HANG_GUARD_MS)
        found.push(`${source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1}: ${n.name.text} = ${n.initializer.getText(source)}`)
    }
    // A wait bounded by a count of pauses (`for (let i = 0; i < 100 && !done; i++) await sleep(20)`):
    // a bound of seconds in disguise.
    if (ts.isForStatement(n) && n.incrementor && /\+\+|\+= 1/.test(n.incrementor.getText(source)) && n.condition && /&&/.test(n.condition.getText(source))) {
      const body = n.statement.getText(source)
      if (/setTimeout\(|sleep\(|delay\(/.test(body))
        found.push(`${source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1}: for (${n.condition.getText(source)}) … pause`)
    }
    // A time limit given to the code under test as a literal of seconds: `{ timeoutMs: 1000 }` in a
    // call's or constructor's arguments (a message's `timeoutMs` field is data, not a limit; a
    // database's busy timeout bounds lock waits, not answers).
    if (ts.isPropertyAssignment(n) && /(^t|T)imeoutMs$/.test(n.name.getText(source)) && n.name.getText(source) !== 'busyTimeoutMs') {
      const holder = ts.findAncestor(n.parent, (a) => ts.isCallExpression(a) || ts.isNewExpression(a) || ts.isVariableDeclaration(a) || ts.isFunctionLike(a))
      const guard = valueOf(n.initializer)
      if (holder && (ts.isCallExpression(holder) || ts.isNewExpression(holder)) && guard !== null && guard > 0 && guard < HANG_GUARD_MS)
        found.push(`${source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1}: ${n.getText(source)}`)
    }
    if (ts.isCallExpression(n)) {
      const callee = ts.isIdentifier(n.expression) ? n.expression.text : ts.isPropertyAccessExpression(n.expression) ? n.expression.name.text : ''
      const report = (what: string) => found.push(`${source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1}: ${what}`)
      const first = n.arguments[0]
      // A fetch's (or any request's) limit: `AbortSignal.timeout(120_000)`.
      if (callee === 'timeout' && n.expression.getText(source) === 'AbortSignal.timeout' && first) {
        const guard = valueOf(first)
        if (guard !== null && guard < HANG_GUARD_MS) report(`AbortSignal.timeout(${first.getText(source)})`)
      }
      // The tests' polling helpers, `until(ms, fn)`: `ms` is the hang guard.
      if (/^until/.test(callee) && first && n.arguments.length >= 2) {
        const guard = valueOf(first)
        if (guard !== null && guard < HANG_GUARD_MS) report(`${callee}(${first.getText(source)}, …)`)
      }
      // A browser's or an emitter's wait with a limit (`page.waitForSelector(s, { timeout: 5000 })`).
      // …and a child process's (`execFile(cmd, args, { timeout: 90_000 }, cb)`: the child is killed).
      if (/^waitFor|^(exec|execFile|execSync|execFileSync|spawn|spawnSync|fork)$/.test(callee))
        for (const a of n.arguments)
          if (ts.isObjectLiteralExpression(a))
            for (const p of a.properties)
              if (ts.isPropertyAssignment(p) && p.name.getText(source) === 'timeout') {
                const guard = valueOf(p.initializer)
                if (guard !== null && guard < HANG_GUARD_MS) report(`${callee}(…, { timeout: ${p.initializer.getText(source)} })`)
              }
      // A timer that ends a wait: `setTimeout(() => reject(new Error('not closed')), 5000)`, or a
      // race against a sleep (`sleep(5000).then(() => 'timeout')`). A pause handed a resolver
      // (`setTimeout(r, 20)`) is a polling interval, not a limit.
      if (callee === 'setTimeout' && first && (ts.isArrowFunction(first) || ts.isFunctionExpression(first)) && n.arguments[1]) {
        const guard = valueOf(n.arguments[1])
        if (guard !== null && guard > 0 && guard < HANG_GUARD_MS) report(`${callee}(…, ${n.arguments[1].getText(source)})`)
      }
      if (ts.isPropertyAccessExpression(n.expression) && n.expression.name.text === 'then') {
        const inner = unwrap(n.expression.expression)
        if (ts.isCallExpression(inner) && ts.isIdentifier(inner.expression) && /^(sleep|delay|wait)$/.test(inner.expression.text) && inner.arguments[0]) {
          const guard = valueOf(inner.arguments[0])
          if (guard !== null && guard < HANG_GUARD_MS) report(`${inner.expression.text}(${inner.arguments[0].getText(source)}).then(…)`)
        }
      }
    }
    if (ts.isBinaryExpression(n) && RELATIONAL.has(n.operatorToken.kind)) {
      const [a, b] = [n.left, n.right]
      const durationVsNumber = (isDuration(a) && !isZero(b) && !isDuration(b)) || (isDuration(b) && !isZero(a) && !isDuration(a))
      const secondsDeadline = (isReading(a) && isShortDeadline(b)) || (isReading(b) && isShortDeadline(a))
      if (durationVsNumber || secondsDeadline) {
        const { line } = source.getLineAndCharacterOfPosition(n.getStart(source))
        found.push(`${line + 1}: ${n.getText(source)}`)
      }
    }
    ts.forEachChild(n, visit)
  }
  visit(source)
  return found
}

t.test('the check finds a duration compared with a number, and leaves deadlines and counts alone', async (t) => {
  const flagged = (code: string) => wallClockComparisons('x.test.ts', code).map((f) => f.replace(/^\d+: /, ''))
  t.same(flagged('const started = Date.now(); await stop(); t.ok(Date.now() - started < 8000)'), ['Date.now() - started < 8000'])
  t.same(flagged('const t0 = performance.now(); run(); const waited = performance.now() - t0; t.ok(waited >= 50)'), ['waited >= 50'])
  t.same(flagged('const a = process.hrtime.bigint(); const took = Number(process.hrtime.bigint() - a); t.ok(took < 5e6)'), ['took < 5e6'])
  t.same(flagged('t.ok(Math.round(Date.now() - killedAt) >= GRACE_MS - 50)'), ['Math.round(Date.now() - killedAt) >= GRACE_MS - 50'])
  t.same(flagged('t.ok(runs.every((ms) => ms > 600 && ms < 1500))'), ['ms > 600', 'ms < 1500'])
  t.same(flagged('t.ok(records.every((r) => r.durationMs < 1500))'), ['r.durationMs < 1500'])
  t.same(flagged('const end = Date.now() + 5 * 60_000; while (Date.now() < end) await tick(); if (performance.now() > end) throw new Error()'), [])
  t.same(flagged('t.ok(count > 100); t.ok(clock.nowMs >= 2000); t.ok(Date.now() - started >= 0)'), [])
  t.same(flagged('t.ok(c.expires.getTime() <= Date.now() - 86_400_000 * 365 || at < Date.now() - DAY_MS)'), [])
  t.same(flagged('t.comment(`took ${Date.now() - started} ms`); t.equal(clock.delays[0], 1000)'), [])
  t.same(flagged('const end = Date.now() + 5000; while (!done && Date.now() < end) await tick()'), ['Date.now() < end'], 'a deadline of seconds')
  t.same(flagged('for (const until = performance.now() + 10_000; performance.now() < until; ) await tick()'), ['performance.now() < until'])
  t.same(flagged('const end = Date.now() + 5 * 60_000; if (Date.now() > end) throw new Error()'), [], 'a hang guard of minutes')
  t.same(flagged('const end = Date.now() + HANG_GUARD_MS; if (Date.now() > end) throw new Error()'), [], 'the shared hang guard')
  t.same(flagged('const end = Date.now() + 2 * 60_000; if (Date.now() > end) throw new Error()'), ['Date.now() > end'], 'a deadline of 2 minutes')
  t.same(
    flagged('for (const giveUp = Date.now() + 120_000; ; await tick()) if (Date.now() > giveUp) throw new Error()'),
    ['Date.now() > giveUp'],
    'a deadline of 2 minutes in a loop',
  )
  t.same(
    flagged('const at = new Date(Date.now() + 120_000).toISOString(); clock.advance(60_000); await clock.advanceSettling(120_000)'),
    [],
    'an instant, the injected clock',
  )
  t.same(flagged('t.ok(await until(5000, () => (jobs.length ? true : undefined)))'), ['until(5000, …)'], "a polling helper's guard of seconds")
  t.same(flagged('t.ok(await until(5 * 60_000, () => (jobs.length ? true : undefined)))'), [], "a polling helper's guard of minutes")
  t.same(flagged("await page.waitForSelector('.badge', { timeout: 5000 })"), ['waitForSelector(…, { timeout: 5000 })'], "a browser's wait of seconds")
  t.same(flagged("await page.waitForFunction('x', { timeout: 5 * 60_000 })"), [], "a browser's wait of minutes")
  t.same(flagged("await page.waitForFunction('x', { timeout: 120_000 })"), ['waitForFunction(…, { timeout: 120_000 })'], "a browser's wait of 2 minutes")
  t.same(flagged('execFile(node, [cli], { cwd, timeout: 90_000 }, done)'), ['execFile(…, { timeout: 90_000 })'], "a child's time limit of seconds")
  t.same(flagged("const timer = setTimeout(() => reject(new Error('not closed')), 5000)"), ['setTimeout(…, 5000)'], 'a timer that ends a wait')
  t.same(flagged('await new Promise((r) => setTimeout(r, 20))'), [], 'a polling interval')
  t.same(flagged('for (let i = 0; i < 100 && !done; i++) await new Promise((r) => setTimeout(r, 20))'), ['for (i < 100 && !done) … pause'], 'a count of pauses')
  t.same(flagged('const until = async (pred: () => boolean, ms = 10_000) => pred()'), ['ms = 10_000'], "a wait's limit as a default")
  t.same(
    flagged(
      'const c = { async waitFor(topic: string, pred: () => boolean, ms = 120_000) {} }; function next(timeoutMs = 2 * 60_000) {}; const x = (waitMs = 90_000) => 0',
    ),
    ['ms = 120_000', 'timeoutMs = 2 * 60_000', 'waitMs = 90_000'],
    "a wait's default limit under 5 minutes",
  )
  t.same(
    flagged('function next(ms = HANG_GUARD_MS, timeoutMs = 5 * 60_000, waitMs = 10 * 60_000, lengthMs = 10_000, intervalMs = 60_000) {}'),
    [],
    'a default of the shared guard, of 5 minutes or more, or a length that is no wait',
  )
  t.same(
    flagged('await fetch(url, { signal: AbortSignal.timeout(30_000) }); await fetch(url, { signal: AbortSignal.timeout(2 * 60_000) })'),
    ['AbortSignal.timeout(30_000)', 'AbortSignal.timeout(2 * 60_000)'],
    "a fetch's limit under 5 minutes",
  )
  t.same(flagged('await fetch(url, { signal: AbortSignal.timeout(HANG_GUARD_MS) }); AbortSignal.timeout(5 * 60_000)'), [], "a fetch's hang guard")
  t.same(flagged('spawnSync(node, [f], { timeout: 2 * 60_000 }); setTimeout(() => reject(new Error("not closed")), 120_000)'), [
    'spawnSync(…, { timeout: 2 * 60_000 })',
    'setTimeout(…, 120_000)',
  ])
  t.same(
    flagged("await Promise.race([s.close(), sleep(5000, undefined, { ref: false }).then(() => 'timeout')])"),
    ['sleep(5000).then(…)'],
    'a race against seconds',
  )
  t.same(flagged('const end = Date.now() + GUARD_MS; if (Date.now() > end) throw new Error()'), [], 'a named guard is not judged here')
  t.same(flagged("call('POST', '/v1/casts', { expiresAt: new Date(Date.now() + 2500).toISOString() })"), [], 'an instant sent, not a deadline')
  t.same(flagged('const d = new DisplayDriver({ path: p, timeoutMs: 1000 })'), ['timeoutMs: 1000'], 'a reply limit of seconds handed to the code')
  t.same(flagged('const g = new OutboundGuard({ lookup, timeoutMs: HANG_GUARD_MS }); setup(t, { runTimeoutMs: 5000 })'), ['runTimeoutMs: 5000'])
  t.same(flagged('const g = new OutboundGuard({ lookup, timeoutMs: 2 * 60_000 })'), ['timeoutMs: 2 * 60_000'], 'a limit of 2 minutes handed to the code')
  t.same(flagged('const d = new DisplayDriver({ path: p, timeoutMs: REPLY_TIMEOUT_MS })'), [], 'a named limit: its comment says why')
  t.same(flagged("const job: Job = { id: 'sjob_1', timeoutMs: 2000 }; open({ busyTimeoutMs: 2000 })"), [], "a message's field, a lock wait")
})

t.test('no test file compares a wall-clock duration with a number (durations are bench figures: bench/)', async (t) => {
  const found: string[] = []
  for (const pkg of PACKAGES)
    for (const file of find(path.posix.join(pkg, 'test')))
      for (const hit of wallClockComparisons(file, fs.readFileSync(path.join(ROOT, file), 'utf8'))) found.push(`${file}:${hit}`)
  t.same(found, [], 'wall-clock assertions (file:line: comparison); assert what happened, on the injected clock or on events')
})
