// The group picker wherever a target is chosen, in a real Chromium against a real cloud
// (axe-core on each form): a cast to a group reaching exactly its members, an emergency
// aimed at a group (its confirmation naming it), a bulk assignment and an agent rollout to a
// group (each checked through the API), and an alert rule watching a group.
import t from 'tap'
import { fakeRelease, releaseForm } from '../../fixtures/agentRelease.js'
import { clickButton, missingChromium, noSerious, signedIn, startConsoleCloud, textShown, retype } from '../console.js'
import { taggedScreens } from '../fleet.js'

const skip = missingChromium(t) ?? false

t.test(
  'the group picker: a cast reaches exactly its members; an emergency, a bulk assignment, an agent rollout and an alert rule aim at it',
  { skip },
  async (t) => {
    const c = await startConsoleCloud(t)
    c.content.add(c.workspaceId, { kind: 'media', id: 'med_a' }).add(c.workspaceId, { kind: 'media', id: 'med_fire' })
    const ids = await taggedScreens(c, { North: ['zone:a'], South: ['zone:a'], East: ['zone:b'], West: [] })
    const group = (await c.call('POST', '/v1/groups', { name: 'Zone A', kind: 'dynamic', rule: { all: [{ tag: 'zone:a' }] } })).body.data.id as string
    const members = [ids.North, ids.South].sort()
    const page = await signedIn(t, c, 'ada@example.com', 'admin')

    // A cast.
    await page.goto(`${c.base}/console/casts`)
    await page.waitForSelector('#cast-content')
    await page.type('#cast-content', 'med_a')
    await page.click('input[name=cast-scope][value=group]')
    await page.waitForFunction(`[...document.querySelectorAll('#cast-group option')].some((o) => o.value === '${group}')`)
    t.match(await page.$eval(`#cast-group option[value="${group}"]`, (o) => o.textContent), 'Zone A (2 screens, dynamic)', 'the picker names its member count')
    await noSerious(t, page, 'casts with the group picker')
    await page.select('#cast-group', group)
    await page.click('form[aria-labelledby=h-start-cast] > button[type=submit]')
    await page.waitForFunction("location.pathname.startsWith('/console/casts/cast_')")
    const castId = new URL(page.url()).pathname.split('/').pop()!
    await textShown(page, '2 screens')
    t.match((await c.call('GET', `/v1/casts/${castId}`)).body.data, { scopeKind: 'group', groupId: group, screenCount: 2 })
    const reached = ((await c.call('GET', `/v1/casts/${castId}/screens`)).body.data as { screenId: string }[]).map((r) => r.screenId).sort()
    t.same(reached, members, 'exactly the members, through the API')
    await noSerious(t, page, 'a cast to a group')
    await c.call('POST', `/v1/casts/${castId}/clear`)

    // An emergency: the confirmation names the group.
    await page.goto(`${c.base}/console/emergencies`)
    await page.waitForSelector('#emg-content')
    await page.type('#emg-content', 'med_fire')
    await page.click('input[name=emg-scope][value=group]')
    await page.waitForFunction(`[...document.querySelectorAll('#emg-group option')].some((o) => o.value === '${group}')`)
    await page.select('#emg-group', group)
    await page.click('form[aria-labelledby=h-start-emergency] > button[type=submit]')
    await page.waitForSelector('.confirm')
    t.match(await page.$eval('.confirm', (e) => e.textContent), /the group Zone A \(2 screens, dynamic\)/, 'the confirmation names the group')
    await noSerious(t, page, 'an emergency to a group, confirming')
    await page.click('.confirm button[type=submit]')
    await page.waitForFunction("location.pathname.startsWith('/console/emergencies/emg_')")
    const emgId = new URL(page.url()).pathname.split('/').pop()!
    t.match((await c.call('GET', `/v1/emergencies/${emgId}`)).body.data, { scopeKind: 'group', groupId: group })
    const emgScreens = ((await c.call('GET', `/v1/emergencies/${emgId}/screens`)).body.data as { screenId: string }[]).map((r) => r.screenId).sort()
    t.same(emgScreens, members, "the emergency reaches the group's members")
    await c.call('POST', `/v1/emergencies/${emgId}/clear`)

    // A bulk assignment to the group, from the screens page with nothing chosen.
    await page.goto(`${c.base}/console/screens`)
    await textShown(page, '4 screens')
    await clickButton(page, 'Assign content to a group…')
    await page.waitForSelector('#bulk-group')
    await page.waitForFunction(`[...document.querySelectorAll('#bulk-group option')].some((o) => o.value === '${group}')`)
    await page.select('#bulk-group', group)
    await page.select('#f-bulk-kind', 'media')
    await page.type('#bulk-content', 'med_a')
    await noSerious(t, page, 'bulk assignment to a group')
    await clickButton(page, 'Assign to the group')
    await textShown(page, 'Assigned med_a to 2 screens.')
    const listed = (await c.call('GET', '/v1/screens')).body.data as { id: string; contentId: string | null }[]
    t.same(
      listed
        .filter((s) => s.contentId === 'med_a')
        .map((s) => s.id)
        .sort(),
      members,
      'the API: the members have it, no other screen',
    )

    // An agent rollout to the group.
    const release = await fakeRelease(t, { version: '6.0.0' })
    const up = await fetch(`${c.base}/v1/agent-releases`, { method: 'POST', headers: { authorization: `Bearer ${c.apiKey}` }, body: releaseForm(release) })
    t.equal(up.status, 201, 'a release to roll out')
    await page.goto(`${c.base}/console/settings#agent-updates`)
    await page.waitForSelector('form[aria-label="Start a rollout"]')
    await page.click('input[name=rollout-to][value=group]')
    await page.waitForFunction(`[...document.querySelectorAll('#rollout-group option')].some((o) => o.value === '${group}')`)
    await page.select('#rollout-group', group)
    await retype(page, '#f-rollout-stages', '100')
    await retype(page, '#f-rollout-unhealthy', '100')
    await noSerious(t, page, 'a rollout to a group')
    await clickButton(page, 'Start rollout')
    await textShown(page, 'Rollouts, newest first')
    const rollout = (await c.call('GET', '/v1/agent-rollouts')).body.data[0]
    t.equal(rollout.counts.screens, 2, 'the rollout holds the two members')
    const rolled = ((await c.call('GET', `/v1/agent-rollouts/${rollout.id}/screens`)).body.data as { screenId: string }[]).map((r) => r.screenId).sort()
    t.same(rolled, members, 'exactly the members')

    // An alert rule watching the group: the console sends scopeKind "group" with the group's id,
    // and the rules list names the group it watches.
    await page.goto(`${c.base}/console/alerts`)
    await clickButton(page, 'New rule')
    await page.type('#f-rule-name', 'Zone A offline')
    await page.select('#f-rule-scope', 'group')
    await page.waitForFunction(`[...document.querySelectorAll('#rule-group option')].some((o) => o.value === '${group}')`)
    await page.select('#rule-group', group)
    await noSerious(t, page, 'an alert rule watching a group')
    const sent = page.waitForRequest((r) => r.url().endsWith('/v1/alert-rules') && r.method() === 'POST')
    const answered = page.waitForResponse((r) => r.url().endsWith('/v1/alert-rules') && r.request().method() === 'POST')
    await clickButton(page, 'Save rule')
    t.match(
      JSON.parse((await sent).postData() ?? '{}'),
      { name: 'Zone A offline', config: { scopeKind: 'group', scopeId: group } },
      'the rule aims at the group',
    )
    t.equal((await answered).status(), 201, 'the cloud takes the group scope')
    await textShown(page, 'group Zone A')
    const rules = (await c.call('GET', '/v1/alert-rules')).body.data as { name: string; config: { scopeKind: string; scopeId: string } }[]
    t.match(
      rules.find((r) => r.name === 'Zone A offline'),
      { config: { scopeKind: 'group', scopeId: group } },
      'stored as watching the group',
    )
  },
)
