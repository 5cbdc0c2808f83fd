// The .deb, as `pnpm --silent agent pack` builds it where dpkg-deb exists, for the other
// architecture than this machine's (so cross-packing is covered too: the program is the
// same, the binding is the target's). Inspected with dpkg-deb (fields, files, conffile,
// units with [Install]), then installed for real with dpkg in a mount namespace of its own
// (copy-on-write views of /etc, of dpkg's database and of the unit folder; /opt, /var/log and
// /run/systemd empty), so the maintainer scripts run as on a player without touching this
// machine: install, the units checked by systemd-analyze, an upgrade that keeps the
// pairing, the edited settings and a unit the administrator disabled, removal that keeps
// the data folder, a reinstall that resumes, and purge.
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { displayCapture, dpkgDeb, dpkgInstall, HANG_GUARD_MS, missingTool, systemdAnalyze, toolTest, toolsRequired } from '@svc/shared/testing'
import { newReleaseKey } from '@svc/shared/releases'
import { tempDir } from '../helpers.js'
import { VERSION, debMembers, pack, run } from './packed.js'

const ARCH = os.arch() === 'arm64' ? 'x64' : 'arm64'
const DEB_ARCH = ARCH === 'x64' ? 'amd64' : 'arm64'
const DEB = `svc-agent_${VERSION}_${DEB_ARCH}.deb`
const UNITS = ['svc-agent.service', 'svc-kiosk.service', 'svc-agent-watchdog.service', 'svc-agent-watchdog.timer']

const dpkg = (args: string[]): string => execFileSync('dpkg-deb', args, { encoding: 'utf8' })

// Packed with a release key: the public half goes to /opt/svc-agent/share/release-key.pub.
const RELEASE_KEY = newReleaseKey().publicKeyPem
let packing: ReturnType<typeof pack> | null = null
const packed = async () => {
  if (!packing) {
    const keyFile = path.join(tempDir(t), 'release-key.pub')
    fs.writeFileSync(keyFile, RELEASE_KEY)
    packing = pack(t, ['--arch', ARCH, '--release-key', keyFile])
  }
  const r = await packing
  if (r.code !== 0) throw new Error(`pack failed: ${r.stderr}`)
  return { ...r, deb: path.join(r.out, DEB) }
}

toolTest(t, dpkgDeb, `\`agent pack --arch ${ARCH}\` where dpkg-deb exists: the tarball and the .deb`, async (t) => {
  const r = await packed()
  t.equal(r.stdout, `${path.join(r.out, `svc-agent-${VERSION}-linux-${ARCH}.tar.gz`)}\n${r.deb}\n`, 'stdout: the two paths')
  t.equal(r.stderr, '', 'nothing on stderr')
  t.same(debMembers(r.deb), ['debian-binary', 'control.tar.xz', 'data.tar.xz'], 'compressed with xz, the default')
  const field = (f: string) => dpkg(['--field', r.deb, f]).trim()
  t.equal(field('Package'), 'svc-agent')
  t.equal(field('Version'), VERSION, 'the version of agent/package.json')
  t.equal(field('Architecture'), DEB_ARCH)
  t.match(field('Depends'), /^nodejs \(>= 20\.19\)/, 'Node from the distribution (or NodeSource)')
  t.match(field('Recommends'), /chromium/)
  t.match(field('Recommends'), /\bcage\b/, 'the kiosk compositor')
  t.match(field('Recommends'), /\bgrim\b/, 'grim: screenshots of what the display shows')

  const list = dpkg(['--contents', r.deb])
  const files = list.split('\n').filter(Boolean)
  t.ok(
    files.every((l) => / root\/root /.test(l)),
    'everything owned by root',
  )
  for (const p of [
    './opt/svc-agent/bin/svc-agent',
    './opt/svc-agent/lib/svc-agent.mjs',
    './opt/svc-agent/lib/puppeteer-core.mjs',
    './opt/svc-agent/lib/launcher.cjs',
    './opt/svc-agent/share/release-key.pub',
    `./opt/svc-agent/lib/prebuilds/linux-${ARCH}/@serialport+bindings-cpp.${ARCH === 'arm64' ? 'armv8.' : ''}glibc.node`,
    './opt/svc-agent/share/watchdog',
    './opt/svc-agent/share/kiosk',
    './opt/svc-agent/share/kiosk-session',
    './etc/svc-agent/agent.env',
    ...UNITS.map((u) => `./usr/lib/systemd/system/${u}`),
  ])
    t.ok(
      files.some((l) => l.endsWith(` ${p}`)),
      p,
    )
  t.match(list, /^-rwxr-xr-x root\/root .* \.\/opt\/svc-agent\/bin\/svc-agent$/m, 'the launcher is executable')
  t.same(
    files.filter((l) => /prebuilds\/./.test(l) && !l.includes(`prebuilds/linux-${ARCH}`)),
    [],
    `only the ${ARCH} binding`,
  )

  const control = tempDir(t)
  dpkg(['--control', r.deb, control])
  t.equal(fs.readFileSync(path.join(control, 'conffiles'), 'utf8'), '/etc/svc-agent/agent.env\n', 'the settings are a conffile')
  for (const s of ['postinst', 'prerm', 'postrm']) t.equal(fs.statSync(path.join(control, s)).mode & 0o777, 0o755, `${s} is executable`)

  const root = tempDir(t)
  dpkg(['-x', r.deb, root])
  t.equal(fs.readFileSync(path.join(root, 'opt/svc-agent/share/release-key.pub'), 'utf8'), RELEASE_KEY, 'the release key the updates are checked against')
  for (const u of UNITS) {
    const text = fs.readFileSync(path.join(root, 'usr/lib/systemd/system', u), 'utf8')
    if (u === 'svc-agent-watchdog.service') t.notMatch(text, /\[Install\]/, `${u}: run by its timer`)
    else t.match(text, /\n\[Install\]\nWantedBy=(multi-user|graphical|timers)\.target\n/, `${u} has an [Install] section`)
    // Every program a unit runs from the package is in it.
    for (const line of text.match(/^Exec\w*=.*$/gm) ?? [])
      for (const word of line.split(/[= ]/).filter((w) => w.startsWith('/opt/')))
        t.ok(fs.statSync(path.join(root, word)).mode & 0o100, `${u}: ${word} is in the package, executable`)
  }
  const agent = fs.readFileSync(path.join(root, 'usr/lib/systemd/system/svc-agent.service'), 'utf8')
  t.match(agent, /^User=svc-agent$/m)
  t.match(agent, /^SupplementaryGroups=dialout svc-kiosk$/m, 'serial ports, and the kiosk compositor’s socket')
  t.match(agent, /^EnvironmentFile=\/etc\/svc-agent\/agent\.env$/m)
  t.match(agent, /^ExecStart=\/opt\/svc-agent\/bin\/svc-agent start --cloud \$\{SVC_AGENT_CLOUD\} --data \/var\/lib\/svc-agent /m)
  t.notMatch(agent, /network-online/, 'the agent does not wait for the network')
  const kiosk = fs.readFileSync(path.join(root, 'usr/lib/systemd/system/svc-kiosk.service'), 'utf8')
  t.match(kiosk, /^ExecStartPre=\/opt\/svc-agent\/bin\/svc-agent health --wait 60 /m, 'the browser opens once the page answers')
  t.match(kiosk, /^ExecStart=\/opt\/svc-agent\/share\/kiosk-session$/m, 'the kiosk session: cage with its socket where the agent reaches it')
  const session = fs.readFileSync(path.join(root, 'opt/svc-agent/share/kiosk-session'), 'utf8')
  t.match(session, /^exec \/usr\/bin\/cage -s -- "\$\(dirname "\$0"\)\/kiosk"$/m, 'cage shows the kiosk script beside it full screen')
  t.match(session, /^ {2}export XDG_RUNTIME_DIR="\$RUNTIME_DIRECTORY"$/m, 'the socket in the unit’s runtime folder, not the login session’s')
  t.match(session, /^umask 0007$/m, 'the socket open to the group svc-kiosk')
  // Coherent: the agent's socket is in the kiosk unit's runtime folder, which the group may enter.
  const runtime = /^RuntimeDirectory=(.+)$/m.exec(kiosk)?.[1]
  t.equal(runtime, 'svc-kiosk', 'the kiosk has a runtime folder of its own')
  t.match(kiosk, /^RuntimeDirectoryMode=0750$/m, 'which the group svc-kiosk may enter')
  t.match(agent, new RegExp(`^Environment=SVC_AGENT_WAYLAND_DISPLAY=/run/${runtime}/wayland-0$`, 'm'), 'the agent captures through the socket there')
  t.match(
    fs.readFileSync(path.join(root, 'opt/svc-agent/share/kiosk'), 'utf8'),
    /exec "\$browser" --kiosk .*--autoplay-policy=no-user-gesture-required .*"http:\/\/127\.0\.0\.1:\$\{SVC_AGENT_PLAYER_PORT:-7070\}\/"/,
    'Chromium on the player page, full screen, autoplay',
  )
  t.match(kiosk, /^Restart=always$/m)
  t.match(fs.readFileSync(path.join(root, 'etc/svc-agent/agent.env'), 'utf8'), /^SVC_AGENT_CLOUD=$/m, 'the settings name the cloud, empty until set')
})

/** Runs `script` as root in a mount namespace where dpkg installs into copies; answers its output by section. */
async function inNamespace(t: Test, deb: string, steps: string): Promise<Map<string, string>> {
  const work = tempDir(t, 'svc-dpkg-root-')
  const script = path.join(work, 'steps.sh')
  fs.writeFileSync(
    script,
    `set -eu
W=${JSON.stringify(work)}
DEB=${JSON.stringify(deb)}
# A writable view of SRC at $W/NAME: copy-on-write (overlayfs: nothing is copied until
# written), or a copy where overlayfs cannot be mounted.
view() {
  c="$W/cow/$(echo "$2" | tr / _)"
  mkdir -p "$W/$2" "$c/upper" "$c/work"
  mount -t overlay overlay -o "lowerdir=$1,upperdir=$c/upper,workdir=$c/work" "$W/$2" 2>/dev/null || cp -a "$1/." "$W/$2/"
}
view /etc etc
view /var/lib/dpkg varlib/dpkg
view /usr/lib/systemd/system units
mount --bind "$W/etc" /etc
mount --rbind "$W/varlib" /var/lib
mount --bind "$W/units" /usr/lib/systemd/system
mount -t tmpfs tmpfs /opt
mount -t tmpfs tmpfs /var/log
# A running systemd is not this test's business: the scripts see none.
if [ -d /run/systemd ]; then mount -t tmpfs tmpfs /run/systemd; fi
state() {
  echo "status=$(dpkg-query -W -f='\${Status}' svc-agent 2>/dev/null || echo none)"
  echo "agent-groups=$(id -nG svc-agent 2>/dev/null || echo none)"
  echo "kiosk-groups=$(id -nG svc-kiosk 2>/dev/null || echo none)"
  echo "agent-home=$(getent passwd svc-agent | cut -d: -f6)"
  echo "data=$(stat -c '%U %G %a' /var/lib/svc-agent 2>/dev/null || echo none)"
  echo "credentials=$(cat /var/lib/svc-agent/credentials.json 2>/dev/null || echo none)"
  echo "cloud=$(grep '^SVC_AGENT_CLOUD=' /etc/svc-agent/agent.env 2>/dev/null || echo none)"
  echo "program=$(test -x /opt/svc-agent/bin/svc-agent && echo yes || echo no)"
  for u in ${UNITS.join(' ')}; do
    echo "unit $u=$(cd /etc/systemd/system && for l in $u */$u; do [ -L "$l" ] && printf '%s->%s ' "$l" "$(readlink "$l")"; done; true)"
  done
}
install() { dpkg --force-architecture --force-depends -i "$DEB" >/dev/null 2>&1 || { dpkg --force-architecture --force-depends -i "$DEB"; exit 1; }; }
${steps}
`,
  )
  const p = run(t, 'unshare', ['--mount', '--propagation', 'private', 'sh', script])
  const { code } = await p.exited
  t.equal(code, 0, `the steps ran (stderr: ${p.stderr()})`)
  const sections = new Map<string, string>()
  let name = ''
  for (const line of p.stdout().split('\n')) {
    const m = /^@@ (.+)$/.exec(line)
    if (m) sections.set((name = m[1]!), '')
    else if (name) sections.set(name, `${sections.get(name)}${line}\n`)
  }
  return sections
}

/**
 * The kiosk unit's ExecStart as svc-kiosk (headless, the browser replaced by a sleep: not
 * this step's business), with the runtime folder systemd would make (RuntimeDirectory,
 * 0750) and a login session's XDG_RUNTIME_DIR the session must not use (`command install`:
 * the steps' `install` is the package's); then grim as
 * svc-agent on the agent unit's SVC_AGENT_WAYLAND_DISPLAY, the way the agent runs it, and
 * as nobody (not in the group: refused). The socket is awaited at most HANG_GUARD_MS (a hang guard).
 */
const DISPLAY_STEP = `mount -t tmpfs tmpfs /run
command install -d -m 0750 -o svc-kiosk -g svc-kiosk /run/svc-kiosk
# A /tmp of its own, as at boot (cage's Xwayland wants /tmp/.X11-unix root's, and leaves its lock there)
command install -d -m 1777 "$W/tmp"
mount --bind "$W/tmp" /tmp
command install -d -m 1777 /tmp/.X11-unix
printf '#!/bin/sh\\nexec sleep 120\\n' > /opt/svc-agent/share/kiosk
SESSION=$(sed -n 's/^ExecStart=//p' /usr/lib/systemd/system/svc-kiosk.service)
SOCKET=$(sed -n 's/^Environment=SVC_AGENT_WAYLAND_DISPLAY=//p' /usr/lib/systemd/system/svc-agent.service)
echo "socket-path=$SOCKET"
setsid runuser -u svc-kiosk -- env -i PATH=/usr/bin:/bin HOME=/var/lib/svc-kiosk XDG_RUNTIME_DIR=/run/user/4242 RUNTIME_DIRECTORY=/run/svc-kiosk \\
  WLR_BACKENDS=headless WLR_RENDERER=pixman WLR_LIBINPUT_NO_DEVICES=1 $SESSION >/dev/null 2>/run/cage.log &
KIOSK=$!
i=0; while [ ! -S "$SOCKET" ] && [ $i -lt ${HANG_GUARD_MS / 100} ] && kill -0 $KIOSK 2>/dev/null; do sleep 0.1; i=$((i+1)); done
echo "socket=$(stat -c '%U %G %a' "$SOCKET" 2>/dev/null || echo none)"
shot() { runuser -u "$1" -- env -i PATH=/usr/bin:/bin WAYLAND_DISPLAY="$SOCKET" XDG_RUNTIME_DIR="$(dirname "$SOCKET")" grim -t png - 2>/dev/null | head -c 8 | od -An -tx1 | tr -d ' \\n'; }
echo "agent-capture=$(shot svc-agent)"
echo "other-capture=$(shot nobody)"
echo "cage-log=$(tail -c 600 /run/cage.log | tr '\\n' ' ')"
# SIGTERM to the session's process group (as systemd stops the unit); dash's kill takes no "--".
kill -TERM -$KIOSK 2>/dev/null || true
wait $KIOSK && status=0 || status=$?
echo "session-exit=$status"
umount -l /tmp || true
umount -l /run || true`

const field = (section: string | undefined, key: string): string =>
  new RegExp(`^${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}=(.*)$`, 'm').exec(section ?? '')?.[1] ?? '(missing)'

toolTest(
  t,
  dpkgInstall,
  'installed with dpkg: users, data folder, units enabled; upgrade, remove and reinstall keep the pairing; purge removes it',
  async (t) => {
    const { deb } = await packed()
    const analyze = !missingTool(systemdAnalyze)
    if (!analyze) {
      if (toolsRequired()) t.fail(`${missingTool(systemdAnalyze)} (CI is set: a missing tool fails)`)
      else t.comment(`${missingTool(systemdAnalyze)}; the units are not verified`)
    }
    const capture = !missingTool(displayCapture)
    if (!capture) {
      if (toolsRequired()) t.fail(`${missingTool(displayCapture)} (CI is set: a missing tool fails)`)
      else t.comment(`${missingTool(displayCapture)}; the display capture between the two users is not tried`)
    }
    const out = await inNamespace(
      t,
      deb,
      `echo "@@ installed"; install; state
echo "@@ verify"
${analyze ? `for u in ${UNITS.join(' ')}; do systemd-analyze verify "/usr/lib/systemd/system/$u" 2>&1 | sed "s|^|$u: |" || true; done` : 'true'}
echo "@@ display"
${capture ? DISPLAY_STEP : 'true'}
# The agent pairs (its credential is the pairing); the installer sets the cloud and turns the kiosk off.
echo '{"screenId":"scr_kept"}' > /var/lib/svc-agent/credentials.json
chown svc-agent:svc-agent /var/lib/svc-agent/credentials.json
sed -i 's|^SVC_AGENT_CLOUD=.*|SVC_AGENT_CLOUD=https://signage.example.com|' /etc/svc-agent/agent.env
systemctl disable svc-kiosk.service >/dev/null 2>&1
echo "@@ upgraded"; install; state
echo "@@ removed"; dpkg -r svc-agent >/dev/null 2>&1; state
echo "@@ reinstalled"; install; state
# A kiosk process that outlived its unit does not keep the account.
setpriv --reuid=svc-kiosk --regid=svc-kiosk --clear-groups sleep 600 & linger=$!
echo "@@ purged"; dpkg -P svc-agent >/dev/null 2>&1; state
kill $linger 2>/dev/null; wait $linger 2>/dev/null || true
`,
    )
    const installed = out.get('installed')
    t.equal(field(installed, 'status'), 'install ok installed')
    t.match(field(installed, 'agent-groups'), /^svc-agent dialout svc-kiosk$/, 'svc-agent, in dialout and svc-kiosk (the compositor’s socket)')
    t.match(field(installed, 'kiosk-groups'), /^svc-kiosk\b.*\bvideo\b/, 'svc-kiosk, in video')
    t.equal(field(installed, 'agent-home'), '/var/lib/svc-agent')
    t.equal(field(installed, 'data'), 'svc-agent svc-agent 700', 'the data folder, the agent’s own')
    t.equal(field(installed, 'cloud'), 'SVC_AGENT_CLOUD=')
    t.equal(field(installed, 'program'), 'yes')
    t.match(field(installed, 'unit svc-agent.service'), 'multi-user.target.wants/svc-agent.service->', 'the agent starts at boot')
    t.match(field(installed, 'unit svc-kiosk.service'), 'graphical.target.wants/svc-kiosk.service->', 'the kiosk browser starts at boot')
    t.match(field(installed, 'unit svc-agent-watchdog.timer'), 'timers.target.wants/svc-agent-watchdog.timer->', 'the watchdog runs')
    if (analyze) {
      const complaints = (out.get('verify') ?? '').split('\n').filter(Boolean)
      // Without cage on this machine, that is the one thing systemd-analyze may say.
      const allowed = fs.existsSync('/usr/bin/cage')
        ? []
        : ['svc-kiosk.service: svc-kiosk.service: Command /usr/bin/cage is not executable: No such file or directory']
      t.same(
        complaints.filter((l) => !allowed.includes(l)),
        [],
        'systemd-analyze verify: nothing to say about the units',
      )
    }

    if (capture) {
      const display = out.get('display')
      const log = `cage: ${field(display, 'cage-log')}`
      t.equal(field(display, 'socket-path'), '/run/svc-kiosk/wayland-0', 'the agent unit names the socket in the kiosk unit’s runtime folder')
      t.equal(field(display, 'socket'), 'svc-kiosk svc-kiosk 770', `the kiosk session made its socket there, open to the group (${log})`)
      t.equal(field(display, 'agent-capture'), '89504e470d0a1a0a', `svc-agent captures the display: a PNG from grim (${log})`)
      t.equal(field(display, 'other-capture'), '', 'a user outside the group svc-kiosk cannot')
      t.equal(field(display, 'session-exit'), '143', 'SIGTERM ends the kiosk session (128 + 15): it does not run its program to the end')
    }

    const upgraded = out.get('upgraded')
    t.equal(field(upgraded, 'status'), 'install ok installed')
    t.equal(field(upgraded, 'credentials'), '{"screenId":"scr_kept"}', 'the pairing is kept')
    t.equal(field(upgraded, 'cloud'), 'SVC_AGENT_CLOUD=https://signage.example.com', 'the edited settings are kept')
    t.equal(field(upgraded, 'data'), 'svc-agent svc-agent 700')
    t.equal(field(upgraded, 'unit svc-kiosk.service'), '', 'a unit the administrator disabled stays disabled')
    t.match(field(upgraded, 'unit svc-agent.service'), 'multi-user.target.wants/svc-agent.service->')

    const removed = out.get('removed')
    t.equal(field(removed, 'status'), 'deinstall ok config-files')
    t.equal(field(removed, 'program'), 'no', 'the program is gone')
    t.equal(field(removed, 'credentials'), '{"screenId":"scr_kept"}', 'the pairing stays')
    t.equal(field(removed, 'cloud'), 'SVC_AGENT_CLOUD=https://signage.example.com', 'the settings stay')
    t.match(field(removed, 'agent-groups'), /dialout/, 'the user stays')
    t.match(field(removed, 'unit svc-agent.service'), 'svc-agent.service->/dev/null', 'the units are masked')

    const reinstalled = out.get('reinstalled')
    t.equal(field(reinstalled, 'credentials'), '{"screenId":"scr_kept"}', 'installing again resumes with the pairing')
    t.match(field(reinstalled, 'unit svc-agent.service'), 'multi-user.target.wants/svc-agent.service->', 'and the agent starts at boot again')
    t.notMatch(field(reinstalled, 'unit svc-agent.service'), '/dev/null', 'unmasked')

    const purged = out.get('purged')
    t.equal(field(purged, 'status'), 'none')
    for (const k of ['agent-groups', 'kiosk-groups', 'data', 'credentials', 'cloud']) t.equal(field(purged, k), 'none', `purge: no ${k}`)
    for (const u of UNITS) t.equal(field(purged, `unit ${u}`), '', `purge: ${u} forgotten`)
  },
)
