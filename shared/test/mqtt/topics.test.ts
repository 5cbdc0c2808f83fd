import t from 'tap'
import {
  TOPIC_SPECS,
  cloudFilters,
  isOwnTopic,
  isValidScreenId,
  mayDevicePublish,
  mayDeviceSubscribe,
  parseScreenTopic,
  screenTopic,
  topics,
} from '../../src/mqtt/index.js'

t.test('builders', async (t) => {
  t.equal(topics.desired('scr_1'), 'svc/v1/screens/scr_1/desired')
  t.equal(topics.jobs('scr_1'), 'svc/v1/screens/scr_1/jobs')
  t.equal(topics.status('scr_1'), 'svc/v1/screens/scr_1/status')
  t.equal(topics.reported('scr_1'), 'svc/v1/screens/scr_1/reported')
  t.equal(topics.jobResults('scr_1'), 'svc/v1/screens/scr_1/job-results')
  t.equal(screenTopic('scr_1', 'desired'), topics.desired('scr_1'))
  for (const bad of ['', 'a/b', '+', '#', 'x+', '$SYS', 'a\u0000b']) t.throws(() => topics.desired(bad), TypeError, `refuses ${JSON.stringify(bad)}`)
  t.notOk(isValidScreenId(42))
  t.equal(cloudFilters.allStatus, 'svc/v1/screens/+/status')
})

t.test('parser round-trips and rejects strangers', async (t) => {
  for (const kind of ['desired', 'jobs', 'status', 'reported', 'job-results'] as const)
    t.same(parseScreenTopic(screenTopic('scr_9', kind)), { screenId: 'scr_9', kind })
  for (const bad of [
    'svc/v1/screens/scr_9/other',
    'svc/v1/screens/scr_9/desired/extra',
    'svc/v1/screens//desired',
    'svc/v1/screens/+/status',
    'svc/v2/screens/scr_9/desired',
    'svc/v1/screens/scr_9',
    '',
  ])
    t.equal(parseScreenTopic(bad), null, bad)
})

t.test('isOwnTopic: exact prefix, no wildcards, for publish and subscribe', async (t) => {
  t.ok(isOwnTopic('scr_1', 'svc/v1/screens/scr_1/status'))
  t.ok(isOwnTopic('scr_1', 'svc/v1/screens/scr_1/desired'))
  t.ok(isOwnTopic('scr_1', 'svc/v1/screens/scr_1/future/thing'), 'unknown subtopics stay under the prefix')
  const refused = [
    'svc/v1/screens/scr_2/status', // another screen
    'svc/v1/screens/scr_10/status', // prefix of another id must not match
    'svc/v1/screens/scr_1', // no trailing level
    'svc/v1/screens/scr_1/', // nothing after the prefix
    'svc/v1/screens/scr_1/#', // wildcard even under own prefix
    'svc/v1/screens/scr_1/+',
    'svc/v1/screens/+/status',
    'svc/v1/screens/#',
    '#',
    '+/v1/screens/scr_1/status',
    'SVC/v1/screens/scr_1/status',
    '/svc/v1/screens/scr_1/status',
    'svc/v1/screens/scr_1/status\u0000',
    '$SYS/broker',
  ]
  for (const topic of refused) t.notOk(isOwnTopic('scr_1', topic), JSON.stringify(topic))
  t.notOk(isOwnTopic('scr_1'.slice(0, 3), 'svc/v1/screens/scr_1/status'), 'shorter id')
  t.notOk(isOwnTopic('+', 'svc/v1/screens/+/status'), 'wildcard as a username')
  t.notOk(isOwnTopic('#', 'svc/v1/screens/#/status'))
  t.notOk(isOwnTopic('', 'svc/v1/screens//status'))
  t.notOk(isOwnTopic('a/b', 'svc/v1/screens/a/b/status'), 'id spanning levels')
})

t.test('direction-aware device ACL', async (t) => {
  t.ok(mayDevicePublish('scr_1', topics.status('scr_1')))
  t.ok(mayDevicePublish('scr_1', topics.reported('scr_1')))
  t.ok(mayDevicePublish('scr_1', topics.jobResults('scr_1')))
  t.notOk(mayDevicePublish('scr_1', topics.desired('scr_1')), 'a device cannot forge its desired state')
  t.notOk(mayDevicePublish('scr_1', topics.jobs('scr_1')))
  t.ok(mayDeviceSubscribe('scr_1', topics.desired('scr_1')))
  t.ok(mayDeviceSubscribe('scr_1', topics.jobs('scr_1')))
  t.notOk(mayDeviceSubscribe('scr_1', topics.status('scr_1')))
  t.notOk(mayDeviceSubscribe('scr_1', 'svc/v1/screens/scr_1/#'))
  t.notOk(mayDevicePublish('scr_1', topics.status('scr_2')))
})

t.test('topic table', async (t) => {
  t.same(
    Object.entries(TOPIC_SPECS).map(([k, v]) => [k, v.direction, v.retained, v.qos]),
    [
      ['desired', 'cloud-to-agent', true, 1],
      ['jobs', 'cloud-to-agent', false, 1],
      ['status', 'agent-to-cloud', true, 1],
      ['reported', 'agent-to-cloud', false, 1],
      ['job-results', 'agent-to-cloud', false, 1],
      ['play-log', 'agent-to-cloud', false, 1],
    ],
  )
})
