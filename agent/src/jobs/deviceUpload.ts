// Uploads a job's result (a screenshot's PNG, the log lines) to the cloud over HTTP with
// the device credential (HTTP Basic, screenId:deviceSecret), as the job's `uploadUrl` says.
// The secret goes only to the cloud this agent was set up with: an upload URL on another
// origin is taken as a path on that cloud.

/**
 * Where to send the device credential: `given` (absolute, or a path) when it is on
 * `cloudUrl`'s origin, else its path and query on that cloud. The answer is always on the
 * cloud's origin: a path is set on a copy of the cloud's URL, never resolved as a
 * reference (`//host/path` resolved against the cloud would name `host`).
 */
export function onOwnCloud(given: string, cloudUrl: string): string {
  const cloud = new URL(cloudUrl)
  const url = new URL(given, cloud)
  if (url.origin === cloud.origin) return url.toString()
  const out = new URL(cloud.origin)
  out.pathname = url.pathname
  out.search = url.search
  if (out.origin !== cloud.origin) throw new Error(`not on the cloud's origin: ${given}`)
  return out.toString()
}

export interface DeviceUpload {
  url: string
  screenId: string
  deviceSecret: string
  contentType: string
  body: Buffer | string
  fetch?: (input: string, init?: RequestInit) => Promise<Response>
  timeoutMs?: number
}

/** PUTs the body; null when the cloud took it, else why not (the error envelope's message when there is one; at most 400 characters). */
export async function putDeviceUpload(u: DeviceUpload): Promise<string | null> {
  try {
    const res = await (u.fetch ?? fetch)(u.url, {
      method: 'PUT',
      headers: {
        'content-type': u.contentType,
        authorization: `Basic ${Buffer.from(`${u.screenId}:${u.deviceSecret}`).toString('base64')}`,
      },
      body: u.body,
      signal: AbortSignal.timeout(u.timeoutMs ?? 60_000),
    })
    if (!res.ok) {
      const text = await res.text().catch(() => '')
      let message = text.slice(0, 200)
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? message
      } catch {
        /* not the envelope */
      }
      return `upload refused: HTTP ${res.status} ${message}`.slice(0, 400)
    }
    await res.arrayBuffer().catch(() => undefined)
    return null
  } catch (err) {
    return `upload failed: ${(err as Error).message}`.slice(0, 400)
  }
}
