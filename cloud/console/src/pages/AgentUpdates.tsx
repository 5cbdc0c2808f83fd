// Settings, agent updates: the releases of the packed agent (upload a tarball with its
// signature file), and rollouts that move screens to a version in stages (start one, watch
// each stage's counts, pause, resume, abort) to every screen or a group's members. Reading needs screen.view; uploading and
// running rollouts account.edit (owners and admins): without it no control is offered.
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ApiFailure, api, call, getCsrf } from '../api.js'
import { GroupSelect, useGroups } from '../groups.js'
import { useSession } from '../session.js'
import { Ago, ConfirmButton, ErrorNote, Field, FileField, SelectField, useLoad, useSubmit } from '../ui.js'

type Release = { id: string; version: string; arch: string; sha256: string; sizeBytes: number; keyFingerprint: string; createdAt: string }

/** POST /v1/agent-releases as a multipart form (the tarball and its .sig), with the session's CSRF token. */
async function uploadRelease(file: File, signature: File): Promise<Release> {
  const form = new FormData()
  form.append('file', file, file.name)
  form.append('signature', await signature.text())
  const csrf = getCsrf()
  const res = await fetch('/v1/agent-releases', { method: 'POST', body: form, headers: csrf ? { 'x-svc-csrf': csrf } : {} })
  const body = (await res.json().catch(() => ({}))) as { data?: Release; error?: string; message?: string }
  if (!res.ok) throw new ApiFailure(res.status, body.error ?? 'error', body.message ?? `HTTP ${res.status}`, body as Record<string, unknown>)
  return body.data!
}

const ROLLOUT_FIELDS = ['version', 'stages', 'stageMinutes', 'abortIf', 'allowDowngrade', 'nodeId', 'groupId'] as const

export function AgentUpdates(): JSX.Element {
  const s = useSession()
  const manage = s.can('account.edit')
  const releases = useLoad(async () => (await call(api.GET('/v1/agent-releases', { params: { query: { limit: '100' } } }))).data, [])
  const rollouts = useLoad(async () => (await call(api.GET('/v1/agent-rollouts', { params: { query: { limit: '20' } } }))).data, [])
  const open = rollouts.data?.some((r) => r.state === 'running' || r.state === 'paused')
  // A rollout under way changes by itself: read it again every 5 s while one is open.
  useEffect(() => {
    if (!open) return
    const timer = setInterval(() => rollouts.reload(), 5000)
    return () => clearInterval(timer)
  }, [open])
  const [rowError, setRowError] = useState<unknown>(null)
  const act = async (id: string, action: 'pause' | 'resume' | 'abort') => {
    setRowError(null)
    try {
      await call(api.POST(`/v1/agent-rollouts/{id}/${action}`, { params: { path: { id } } }))
      rollouts.reload()
    } catch (e) {
      setRowError(e)
    }
  }
  const versions = [...new Set((releases.data ?? []).map((r) => r.version))]
  return (
    <section aria-labelledby="agent-updates">
      <h2 id="agent-updates">Agent updates</h2>
      <p>
        Players accept only releases signed with the key their agent was packed with (<code>agent pack --release-key</code>, <code>agent sign-release</code>). A
        rollout moves screens in stages; a screen whose new version does not come back within 5 minutes returns to its previous one by itself, and the rollout
        stops when too many of a stage fail.
      </p>
      {manage ? <UploadRelease onDone={() => releases.reload()} /> : null}
      <ErrorNote error={releases.error} />
      {releases.data ? (
        <table>
          <caption>{releases.data.length} agent releases</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Architecture</th>
              <th scope="col">Signing key</th>
              <th scope="col">Size</th>
              <th scope="col">Uploaded</th>
            </tr>
          </thead>
          <tbody>
            {releases.data.map((r) => (
              <tr key={r.id}>
                <td>{r.version}</td>
                <td>{r.arch}</td>
                <td>
                  <code>{r.keyFingerprint}</code>
                </td>
                <td>{(r.sizeBytes / 1024 ** 2).toFixed(1)} MB</td>
                <td>
                  <Ago at={r.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {manage && versions.length ? <StartRollout versions={versions} disabled={!!open} onDone={() => rollouts.reload()} /> : null}
      <ErrorNote error={rollouts.error ?? rowError} />
      {rollouts.data?.length ? (
        <table>
          <caption>Rollouts, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">State</th>
              <th scope="col">Stages</th>
              <th scope="col">Started</th>
              {manage ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {rollouts.data.map((r) => (
              <tr key={r.id}>
                <td class="wrap-cell">
                  {r.version}
                  {r.allowDowngrade ? <div class="hint">downgrade allowed</div> : null}
                </td>
                <td class="wrap-cell">
                  {r.state}
                  {r.reason ? <div class="hint">{r.reason}</div> : null}
                </td>
                <td class="wrap-cell">
                  <ol class="stages">
                    {r.stageCounts.map((c, i) => (
                      <li key={c.percent} aria-current={i === r.stage && (r.state === 'running' || r.state === 'paused') ? 'step' : undefined}>
                        {c.percent}%: {c.screens} screens · {c.updated} updated ({c.healthy} healthy) · {c.pending + c.sent} updating · {c.failed} failed ·{' '}
                        {c.rolledBack} rolled back
                      </li>
                    ))}
                  </ol>
                </td>
                <td>
                  <Ago at={r.createdAt} />
                </td>
                {manage ? (
                  <td>
                    <span class="row">
                      {r.state === 'running' ? (
                        <button type="button" class="secondary" onClick={() => void act(r.id, 'pause')}>
                          Pause
                        </button>
                      ) : null}
                      {r.state === 'paused' ? (
                        <button type="button" class="secondary" onClick={() => void act(r.id, 'resume')}>
                          Resume
                        </button>
                      ) : null}
                      {r.state === 'running' || r.state === 'paused' ? (
                        <ConfirmButton label="Abort" name={`the rollout to ${r.version}`} onConfirm={() => void act(r.id, 'abort')} />
                      ) : null}
                    </span>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  )
}

function UploadRelease(props: { onDone: () => void }): JSX.Element {
  const [file, setFile] = useState<File | null>(null)
  const [signature, setSignature] = useState<File | null>(null)
  const [done, setDone] = useState<Release | null>(null)
  const submit = useSubmit(['file', 'signature'], async () => {
    setDone(null)
    if (!file || !signature) throw new ApiFailure(422, 'validation_error', 'Choose the tarball and its signature file.', {})
    setDone(await uploadRelease(file, signature))
    props.onDone()
  })
  return (
    <form class="form-box" noValidate onSubmit={submit.submit} aria-label="Upload an agent release">
      <h3>Upload an agent release</h3>
      <FileField
        label="Tarball (svc-agent-…-linux-….tar.gz)"
        name="release-file"
        accept=".tar.gz,.tgz,application/gzip"
        onPick={setFile}
        error={submit.fieldErrors.file}
      />
      <FileField
        label="Signature (….tar.gz.sig)"
        name="release-signature"
        accept=".sig,application/json"
        onPick={setSignature}
        error={submit.fieldErrors.signature}
      />
      <ErrorNote error={submit.error} />
      {done ? (
        <p role="status">
          Uploaded {done.version} for {done.arch}.
        </p>
      ) : null}
      <button type="submit" disabled={submit.busy}>
        {submit.busy ? 'Uploading…' : 'Upload release'}
      </button>
    </form>
  )
}

function StartRollout(props: { versions: string[]; disabled: boolean; onDone: () => void }): JSX.Element {
  const [version, setVersion] = useState(props.versions[0] ?? '')
  const [stages, setStages] = useState('5, 25, 100')
  const [minutes, setMinutes] = useState('30')
  const [unhealthy, setUnhealthy] = useState('10')
  const [downgrade, setDowngrade] = useState(false)
  const [to, setTo] = useState<'all' | 'group'>('all')
  const [groupId, setGroupId] = useState('')
  const groups = useGroups(to === 'group')
  const submit = useSubmit(ROLLOUT_FIELDS, async () => {
    const list = stages
      .split(/[,\s]+/)
      .filter(Boolean)
      .map(Number)
    if (list.some((n) => !Number.isInteger(n)))
      throw new ApiFailure(422, 'validation_error', 'stages: whole percentages separated by commas, e.g. 5, 25, 100.', {})
    await call(
      api.POST('/v1/agent-rollouts', {
        body: {
          version,
          stages: list,
          stageMinutes: Number(minutes),
          abortIf: { unhealthyPercent: Number(unhealthy) },
          ...(downgrade ? { allowDowngrade: true } : {}),
          ...(to === 'group' ? { groupId } : {}),
        },
      }),
    )
    props.onDone()
  })
  return (
    <form class="form-box" noValidate onSubmit={submit.submit} aria-label="Start a rollout">
      <h3>Start a rollout</h3>
      <fieldset class="choices">
        <legend class="legend">Screens</legend>
        <label class="choice">
          <input type="radio" name="rollout-to" value="all" checked={to === 'all'} onChange={() => setTo('all')} /> Every screen
        </label>
        <label class="choice">
          <input type="radio" name="rollout-to" value="group" checked={to === 'group'} onChange={() => setTo('group')} /> A group (its members when the rollout
          starts)
        </label>
      </fieldset>
      {to === 'group' ? (
        <GroupSelect id="rollout-group" label="Group" value={groupId} onChange={setGroupId} groups={groups} error={submit.fieldErrors.groupId} />
      ) : null}
      <SelectField
        label="Version"
        name="rollout-version"
        value={version}
        onInput={setVersion}
        options={props.versions.map((v) => [v, v] as const)}
        error={submit.fieldErrors.version}
      />
      <Field label="Stages (cumulative percentages)" name="rollout-stages" value={stages} onInput={setStages} error={submit.fieldErrors.stages} />
      <Field label="Minutes per stage" name="rollout-minutes" value={minutes} onInput={setMinutes} error={submit.fieldErrors.stageMinutes} />
      <Field
        label="Stop when more than this % of a stage fails"
        name="rollout-unhealthy"
        value={unhealthy}
        onInput={setUnhealthy}
        error={submit.fieldErrors.abortIf}
      />
      <label class="row">
        <input type="checkbox" name="rollout-downgrade" checked={downgrade} onChange={(e) => setDowngrade((e.currentTarget as HTMLInputElement).checked)} />{' '}
        Allow moving screens back to an older version
      </label>
      <ErrorNote error={submit.error} />
      <button type="submit" disabled={submit.busy || props.disabled}>
        Start rollout
      </button>
      {props.disabled ? <p class="hint">A rollout is under way: abort it or let it finish first.</p> : null}
    </form>
  )
}
