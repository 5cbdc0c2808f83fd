// Pairing a screen from the console: the code the player shows, a name, a location. The
// new screen's page opens once it is paired.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, call } from '../api.js'
import { navigate } from '../router.js'
import { ErrorNote, Field, useSubmit } from '../ui.js'

const FIELDS = ['code', 'name', 'nodeId'] as const

export function PairScreen(props: { nodes: { id: string; name: string }[] }): JSX.Element {
  const [open, setOpen] = useState(false)
  const [code, setCode] = useState('')
  const [name, setName] = useState('')
  const [nodeId, setNodeId] = useState('')
  const { busy, fieldErrors, error, submit } = useSubmit(FIELDS, async () => {
    const s = (await call(api.POST('/v1/screens/pair', { body: { code, name, nodeId: nodeId || null } }))).data
    navigate(`/screens/${s.id}`)
  })
  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        Pair a screen
      </button>
    )
  return (
    <form class="panel" onSubmit={submit} noValidate aria-labelledby="pair-title">
      <h2 id="pair-title">Pair a screen</h2>
      <p class="hint">Type the code the player shows on its screen.</p>
      <Field label="Pairing code" name="code" value={code} onInput={setCode} error={fieldErrors.code} required />
      <Field label="Screen name" name="name" value={name} onInput={setName} error={fieldErrors.name} required />
      <div class={`field${fieldErrors.nodeId ? ' invalid' : ''}`}>
        <label for="f-nodeId">Location</label>
        <select id="f-nodeId" value={nodeId} onChange={(e) => setNodeId((e.currentTarget as HTMLSelectElement).value)}>
          <option value="">Workspace (no location)</option>
          {props.nodes.map((n) => (
            <option key={n.id} value={n.id}>
              {n.name}
            </option>
          ))}
        </select>
        {fieldErrors.nodeId ? <small class="field-error">{fieldErrors.nodeId}</small> : null}
      </div>
      <ErrorNote error={error} />
      <div class="row">
        <button type="submit" disabled={busy}>
          Pair
        </button>
        <button type="button" class="link" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  )
}
