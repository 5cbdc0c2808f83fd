// The console's test harness: the console built once per test process into a folder of its
// own, a real cloud serving it (real sockets, the injected clock), and the system Chromium
// through puppeteer-core (never a downloaded browser) with axe-core for accessibility.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import type { Test } from 'tap'
import puppeteer, { type Browser, type BrowserContext, type HTTPRequest, type HTTPResponse, type Page } from 'puppeteer-core'
import { chromium, HANG_GUARD_MS, missingTool, toolsRequired } from '@svc/shared/testing'
import { processShared } from '@svc/shared/testing/processShared'
import { buildConsole } from '../../console/build.mjs'
import { ManualClock } from '../../src/platform/clock.js'
import { startCloud, type Cloud } from '../devicelink/link.js'

let built: Promise<string> | null = null

/** The console built from the sources, once per process. */
export function consoleDir(): Promise<string> {
  built ??= buildConsole(`${fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-'))}/console`)
  return built
}

export interface ConsoleCloud extends Cloud {
  base: string
}

export async function startConsoleCloud(t: Test, opts: Parameters<typeof startCloud>[1] = {}): Promise<ConsoleCloud> {
  // The browser keeps cookies by its own clock: the cloud's injected clock starts at now, so a
  // session's expiry is in the browser's future.
  const clock = opts.clock ?? new ManualClock(new Date().toISOString())
  const c = await startCloud(t, { ...opts, clock, config: { consoleDir: await consoleDir(), ...opts.config } })
  return Object.assign(c, { base: `http://127.0.0.1:${c.running.httpPort}` })
}

/**
 * A cloud shared by the tests of one file: `const cloud = fileCloud()` at the top and
 * `const c = await cloud(t)` in each test. The first test to ask starts it; it closes a second
 * after the last test using it has ended (as the shared browser does), so the next file of a
 * folder starts with a cloud of its own. Tests sharing one use their own names and emails.
 */
/** How long a file's cloud outlives its last user, for the file's next test to take it over. */
const LINGER_MS = 1000

export function fileCloud(opts: Parameters<typeof startCloud>[1] = {}): (t: Test) => Promise<ConsoleCloud> {
  let cloud: Promise<ConsoleCloud> | null = null
  let afters: (() => unknown)[] = []
  let users = 0
  let idle: NodeJS.Timeout | null = null
  // startCloud asks its test only to run things after it: here, after the file's last test.
  const owner = { after: (fn: () => unknown) => afters.push(fn) } as unknown as Test
  return async (t) => {
    users++
    if (idle) {
      clearTimeout(idle)
      idle = null
    }
    t.after(() => {
      users--
      if (users > 0) return
      idle = setTimeout(async () => {
        idle = null
        if (users > 0) return
        const closing = afters.reverse()
        afters = []
        cloud = null
        for (const fn of closing) await Promise.resolve(fn()).catch(() => {})
      }, LINGER_MS)
    })
    cloud ??= startConsoleCloud(owner, opts)
    return cloud
  }
}

/**
 * Which browser a test needs: the headless shell (Debian's chromium-headless-shell: the same
 * engine without the browser's own windows and compositor, about half of Chromium's CPU for
 * these pages) for most, a full Chromium where tabs must really be in the background (the
 * shell shows every tab as visible).
 */
type BrowserKind = 'shell' | 'full'

/** The browser of `kind`: CHROME_PATH, else the headless shell (for 'shell'), else a full Chromium on PATH. */
function chromiumPath(kind: BrowserKind): string {
  if (process.env.CHROME_PATH) return process.env.CHROME_PATH
  for (const name of [...(kind === 'shell' ? ['chromium-headless-shell'] : []), 'chromium', 'chromium-browser', 'google-chrome'])
    for (const d of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
      const p = path.join(d, name)
      if (fs.existsSync(p)) return p
    }
  return '/usr/bin/chromium'
}

/** Null when Chromium is there; else why the browser tests skip (they fail with CI=true). */
export function missingChromium(t: Test): string | null {
  const missing = missingTool(chromium)
  if (!missing) return null
  if (toolsRequired()) t.fail(`${missing} (CI is set: a missing tool fails)`)
  return missing
}

/**
 * One Chromium for the tests of a process (a folder's files share it, until the folder's last
 * file has run: `processShared`): each `launch` is a browser context of its own (its own
 * cookies and storage, like a fresh browser) closed when its test ends.
 */
const chromiumShared = (kind: BrowserKind) =>
  processShared<{ browser: Browser; userDataDir: string }>(
    async () => {
      const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-chromium-'))
      const executablePath = chromiumPath(kind)
      const browser = await puppeteer.launch({
        executablePath,
        headless: path.basename(executablePath).includes('headless-shell') ? 'shell' : true,
        userDataDir,
        // A page's wait is one protocol call that lasts as long as the wait: beyond the waits'
        // hang guard, or a long wait ends at puppeteer's 3 minutes with a protocol error.
        protocolTimeout: 2 * HANG_GUARD_MS,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--window-size=1280,800',
        ],
      })
      return { browser, userDataDir }
    },
    async ({ browser, userDataDir }) => {
      await browser.close().catch(() => {})
      // Chromium has exited once close() resolves; its profile folder can go.
      try {
        fs.rmSync(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })
      } catch {
        // A folder in the temp dir left behind is no failure of the tests.
      }
    },
    ({ browser }, lost) => browser.once('disconnected', lost),
  )
const browsers = { shell: chromiumShared('shell'), full: chromiumShared('full') }

/** How long a page's wait may take before the test fails naming it: a hang guard of minutes. */
export const PAGE_WAIT_MS = HANG_GUARD_MS

export interface LaunchOptions {
  /** The page prefers the dark colour scheme. */
  dark?: boolean
  /** A full Chromium, whose tabs behind others are hidden (the headless shell's never are). */
  tabs?: boolean
}

export async function launch(t: Test, opts: LaunchOptions = {}): Promise<{ browser: BrowserContext; page: Page }> {
  const { browser: chromium } = await browsers[opts.tabs ? 'full' : 'shell'].use(t)
  const browser = await chromium.createBrowserContext()
  t.after(() => browser.close().catch(() => {}))
  const page = await browser.newPage()
  // A hang guard for every wait on the page (puppeteer's own is 30 s, which a busy machine
  // overruns): the page's waits are on what it shows, not on how fast it shows it.
  page.setDefaultTimeout(PAGE_WAIT_MS)
  await page.setViewport({ width: 1280, height: 800 })
  if (opts.dark) await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }])
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(String(e)))
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 40[134]/.test(m.text())) errors.push(m.text())
  })
  t.after(() => {
    if (errors.length) t.comment(`browser errors: ${errors.join(' | ')}`)
  })
  Object.assign(page, { errors })
  return { browser, page }
}

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** axe-core's serious and critical violations on the page as it is now (run through DevTools: the page's CSP does not apply). */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource)
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as {
    violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[]
  }
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
}

/** Saves a screenshot for docs/console.md when SVC_CONSOLE_SCREENSHOTS names a folder. */
export async function docShot(page: Page, name: string): Promise<void> {
  const dir = process.env.SVC_CONSOLE_SCREENSHOTS
  if (!dir) return
  fs.mkdirSync(dir, { recursive: true })
  await page.screenshot({ path: path.join(dir, `${name}.png`) as `${string}.png` })
}

/** How often pageHolds reads the page. */
const PAGE_POLL_MS = 50

/**
 * Waits until `expression` is truthy in the page, reading it from here every PAGE_POLL_MS
 * rather than with puppeteer's waitForFunction, which polls on animation frames: a tab in
 * the background runs none, so a test with more than one tab waited there until its guard.
 * A read that fails while the page navigates is tried again. The page's default timeout (a
 * hang guard of minutes) fails naming `what`.
 */
export async function pageHolds(page: Page, expression: string, what = expression): Promise<void> {
  const deadline = Date.now() + page.getDefaultTimeout()
  for (;;) {
    const ok = await page.evaluate(expression).catch((e: Error) => {
      // A navigation replaced the page's context: read the new one.
      if (/context was destroyed|Cannot find context|navigat/i.test(e.message)) return false
      throw e
    })
    if (ok) return
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} (${page.url()})`)
    await new Promise((r) => setTimeout(r, PAGE_POLL_MS))
  }
}

/**
 * Holds back the page's first request whose URL `matches` (the others go on) until `release`,
 * through puppeteer's request interception: what the page shows while an answer is on its
 * way. `asked` resolves when the request is held; `release` lets it go and ends the
 * interception.
 */
export async function holdRequest(page: Page, matches: (url: string) => boolean): Promise<{ asked: Promise<void>; release: () => Promise<void> }> {
  let held: HTTPRequest | null = null
  let asked = () => {}
  const askedP = new Promise<void>((r) => (asked = r))
  const hold = (r: HTTPRequest) => {
    if (r.isInterceptResolutionHandled()) return
    if (!held && matches(r.url())) {
      held = r
      asked()
    } else void r.continue()
  }
  page.on('request', hold)
  await page.setRequestInterception(true)
  return {
    asked: askedP,
    release: async () => {
      page.off('request', hold)
      await (held as HTTPRequest | null)?.continue()
      await page.setRequestInterception(false)
    },
  }
}

/**
 * Clicks `selector` and waits for the answer to the page's `method` request to `path` (a URL
 * path): a form that shows the same words before and after a submit (a second wrong password)
 * is read once its answer has come, not while the earlier answer's words are still shown.
 */
export async function clickAnswered(page: Page, selector: string, method: string, path: string): Promise<HTTPResponse> {
  const answered = page.waitForResponse((r) => r.request().method() === method && new URL(r.url()).pathname === path)
  await page.click(selector)
  return answered
}

/**
 * Empties a text field as a person does: the field focused, its whole text selected, then
 * Backspace (so the page sees a real input event). The text is selected with the field's own
 * `select()`: a triple click, read as a word or a line selection by how fast its clicks come,
 * left a character behind on a busy machine.
 */
export async function emptyField(page: Page, selector: string): Promise<void> {
  await page.focus(selector)
  await page.$eval(selector, (e) => (e as unknown as { select(): void }).select())
  await page.keyboard.press('Backspace')
}

/**
 * Replaces a field's text with `value` as a person does (emptyField, then typing), and waits
 * until the field holds exactly `value`. Setting `.value` from the test instead fires no input
 * event: the page's state kept the old text, and a render that came between (an answer
 * arriving, an error shown) put it back, so the typing was appended to it.
 */
export async function retype(page: Page, selector: string, value: string): Promise<void> {
  await emptyField(page, selector)
  await page.type(selector, value)
  await pageHolds(
    page,
    `document.querySelector(${JSON.stringify(selector)})?.value === ${JSON.stringify(value)}`,
    `${selector} to hold ${JSON.stringify(value)}`,
  )
}

/**
 * Clicks the first button whose text (trimmed) or `aria-label` is `text`, once the page shows
 * one: it is looked for and clicked in one read of the page (pageHolds), so a render between
 * finding and clicking cannot take it away, and a button still on its way is waited for.
 */
export async function clickButton(page: Page, text: string): Promise<void> {
  const t = JSON.stringify(text)
  await pageHolds(
    page,
    `(() => { const b = [...document.querySelectorAll('button')].find((b) => b.textContent.trim() === ${t} || b.getAttribute('aria-label') === ${t}); if (b) b.click(); return !!b })()`,
    `a button ${t}`,
  )
}

/** Waits until the page's text includes `text` (in a background tab too). */
export async function textShown(page: Page, text: string): Promise<void> {
  await pageHolds(page, `!!document.body && document.body.innerText.includes(${JSON.stringify(text)})`, `the page to show ${JSON.stringify(text)}`)
}

/** The password the browser tests set through invite links. */
export const PASSWORD = 'a long pass phrase'

/**
 * A browser signed in as a new user of `role`, on the dashboard: invited through the API, the
 * invite accepted through the API (setting the password) and its session cookie given to a
 * fresh browser context. The invite page itself, typed into, is tested in console.test.ts;
 * here it would cost every test a page load.
 */
export async function signedIn(t: Test, c: ConsoleCloud, email: string, role: string, opts: LaunchOptions | boolean = false): Promise<Page> {
  const r = await c.call('POST', '/v1/users', { email, role, name: email.split('@')[0] })
  if (r.status !== 201) throw new Error(`invite: ${r.status} ${JSON.stringify(r.body)}`)
  return invitedIn(t, c, r.body.data.inviteUrl, opts)
}

/** A browser signed in through an invite link (`inviteUrl` as the API answers it), as `signedIn` does. */
export async function invitedIn(t: Test, c: ConsoleCloud, inviteUrl: string, opts: LaunchOptions | boolean = false): Promise<Page> {
  const token = new URLSearchParams(new URL(`${c.base}${inviteUrl}`).hash.slice(1)).get('token')
  const accepted = await fetch(`${c.base}/v1/invites/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, password: PASSWORD }),
  })
  if (accepted.status !== 200) throw new Error(`accept: ${accepted.status} ${await accepted.text()}`)
  const { browser, page } = await launch(t, typeof opts === 'boolean' ? { dark: opts } : opts)
  const domain = new URL(c.base).hostname
  await browser.setCookie(
    ...accepted.headers.getSetCookie().map((line) => {
      const [pair, ...attrs] = line.split(';').map((x) => x.trim())
      const eq = pair!.indexOf('=')
      const path = attrs.find((x) => x.toLowerCase().startsWith('path='))?.slice(5) ?? '/'
      return { name: pair!.slice(0, eq), value: pair!.slice(eq + 1), domain, path, httpOnly: true, sameSite: 'Strict' as const }
    }),
  )
  await page.goto(`${c.base}/console/`)
  await page.waitForSelector('h1#page-title')
  return page
}

/** Asserts axe-core finds no serious or critical violation on the page as it is now. */
export async function noSerious(t: Test, page: Page, what: string): Promise<void> {
  t.same(await seriousViolations(page), [], `${what}: no serious or critical axe-core violation`)
}
