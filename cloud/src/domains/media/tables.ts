// The media domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Selectable } from 'kysely'

export interface MediaTable {
  id: string
  workspace_id: string
  name: string
  kind: string
  mime_type: string
  size_bytes: number
  sha256: string
  state: string
  failure_reason: string | null
  width: number | null
  height: number | null
  duration_ms: number | null
  /** When the thumbnail was made (MediaStore.thumbPath), null when there is none. */
  thumbnail_at: string | null
  folder_id: string | null
  node_id: string | null
  recalled_at: string | null
  recall_reason: string | null
  recalled_by: string | null
  created_by: string
  created_at: string
  updated_at: string
}

export interface MediaUploadsTable {
  id: string
  workspace_id: string
  name: string
  folder_id: string | null
  node_id: string | null
  created_by: string
  created_at: string
  expires_at: string
}

export interface MediaUploadPartsTable {
  upload_id: string
  part_number: number
  size_bytes: number
  sha256: string
  received_at: string
}

export interface ServerSecretsTable {
  name: string
  value: string
  created_at: string
}

export type MediaRow = Selectable<MediaTable>
export type MediaUploadRow = Selectable<MediaUploadsTable>
export type MediaUploadPartRow = Selectable<MediaUploadPartsTable>

declare module '../../platform/db/schema.js' {
  interface DB {
    media: MediaTable
    media_uploads: MediaUploadsTable
    media_upload_parts: MediaUploadPartsTable
    server_secrets: ServerSecretsTable
  }
}
