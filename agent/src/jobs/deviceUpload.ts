// Uploads a job's result (a screenshot's PNG, the log lines) to the cloud over HTTP with
// the device credential (HTTP Basic, screenId:deviceSecret), as the job's `uploadUrl` says.
// The secret goes only to the cloud this agent was set up with: an upload URL on another
// origin is taken as a path on that cloud.

/** Where to upload: `given` (absolute, or a path) when it is on `cloudUrl`'s origin, else its path on that cloud. */
export function onOwnCloud(given: string, cloudUrl: string): string {
  const cloud = new URL(cloudUrl)
  const url = new URL(given, cloud)
  return url.origin === cloud.origin ? url.toString() : new URL(url.pathname + url.search, cloud).toString()
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
