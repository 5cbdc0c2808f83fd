import { runFolder } from '@svc/shared/testing/folderSuite'

// The console's browser tests are three folders, each a process with one Chromium, so no
// one of them bounds the suite's time: this one (the console's shell, content, schedules and
// reports), admin/ (settings, users, SSO, audit log, approvals, agent updates, CAP feeds) and
// fleet/ (screens, tags, groups, targets, live changes, alerts, emergencies and casts).
await runFolder(import.meta.url)
