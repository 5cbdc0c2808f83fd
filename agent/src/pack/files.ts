// What the packed agent installs besides its program: the settings file, the systemd units
// (the agent, the kiosk browser, the watchdog and its timer), the watchdog script, and the
// .deb's control file and maintainer scripts. The tarball carries the same files under
// share/ for an installation by hand; the .deb puts them in place.
//   /opt/svc-agent/              the program (bin/svc-agent, lib/, share/)
//   /etc/svc-agent/agent.env     settings (a conffile: an upgrade keeps your edits)
//   /var/lib/svc-agent/          the agent's data folder (the pairing, the media cache)
//   /var/lib/svc-kiosk/          the kiosk browser's home
//   /usr/lib/systemd/system/     svc-agent.service, svc-kiosk.service,
//                                svc-agent-watchdog.service, svc-agent-watchdog.timer

export const PREFIX = '/opt/svc-agent'
export const DATA_DIR = '/var/lib/svc-agent'
export const KIOSK_HOME = '/var/lib/svc-kiosk'
export const ENV_FILE = '/etc/svc-agent/agent.env'
export const UNIT_DIR = '/usr/lib/systemd/system'
/**
 * The kiosk compositor's runtime folder (svc-kiosk.service's RuntimeDirectory, svc-kiosk's,
 * mode 0750): cage's Wayland socket is made there, group svc-kiosk, so the agent (in that
 * group) captures the display with grim. A fresh folder at each start: the socket is wayland-0.
 */
export const KIOSK_RUNTIME_DIR = '/run/svc-kiosk'
export const KIOSK_WAYLAND_SOCKET = `${KIOSK_RUNTIME_DIR}/wayland-0`

/**
 * The launcher, bin/svc-agent: checks Node's version; `start` runs the supervisor
 * (lib/launcher.cjs, which runs the agent as its child and handles updates and their
 * rollback), every other command the bundle beside it.
 */
export const LAUNCHER = `#!/usr/bin/env node
// svc-agent: the screen-player agent, packed. Node alone runs it: svc-agent start --cloud URL …
'use strict'
const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 20 || (major === 20 && minor < 19) || major === 21) {
  process.stderr.write('svc-agent needs Node 20.19 or later (not 21); this is Node ' + process.versions.node + '\\n')
  process.exit(1)
}
const path = require('node:path')
const lib = path.join(__dirname, '..', 'lib')
if (process.argv[2] === 'start') {
  require(path.join(lib, 'launcher.cjs')).run(process.argv.slice(3), lib)
} else {
  const { pathToFileURL } = require('node:url')
  import(pathToFileURL(path.join(lib, 'svc-agent.mjs')).href)
}
`

export const AGENT_ENV = `# Settings of the svc agent on this player, read by svc-agent.service, svc-kiosk.service
# and the watchdog. After a change: sudo systemctl restart svc-agent svc-kiosk
#
# The cloud's HTTP API base URL (required), e.g. https://signage.example.com
SVC_AGENT_CLOUD=
# The port of the local player page, which the kiosk browser shows.
SVC_AGENT_PLAYER_PORT=7070
# More flags of \`svc-agent start\`, separated by spaces, for example
#   --serial /dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A10K1234-if00-port0
#   --serial tcp://10.0.0.20:4001 --cache-max-mb 4096 --log-level debug
SVC_AGENT_ARGS=
`

export const AGENT_UNIT = `[Unit]
Description=svc screen-player agent (pairing, playback, the panel's serial port)
# No wait for the network: the player plays what it holds and connects when it can.
After=local-fs.target network.target
StartLimitIntervalSec=0

[Service]
Type=simple
User=svc-agent
Group=svc-agent
SupplementaryGroups=dialout svc-kiosk
Environment=SVC_AGENT_PLAYER_PORT=7070
# The kiosk compositor's socket, for screenshots of what the display shows (grim); in the
# group svc-kiosk to reach it. No kiosk running: the screenshots render the player page.
Environment=SVC_AGENT_WAYLAND_DISPLAY=${KIOSK_WAYLAND_SOCKET}
EnvironmentFile=${ENV_FILE}
WorkingDirectory=${DATA_DIR}
ExecStart=${PREFIX}/bin/svc-agent start --cloud \${SVC_AGENT_CLOUD} --data ${DATA_DIR} --player-port \${SVC_AGENT_PLAYER_PORT} $SVC_AGENT_ARGS
Restart=always
RestartSec=2
# Exit code 2 is a bad setting (SVC_AGENT_CLOUD empty, a wrong flag): no restart loop,
# the reason is in \`journalctl -u svc-agent\`.
RestartPreventExitStatus=2
KillSignal=SIGTERM
TimeoutStopSec=15
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
ReadWritePaths=${DATA_DIR}

[Install]
WantedBy=multi-user.target
`

/** Chromium's flags for the kiosk: full screen, no bars or dialogs, videos play without a click. */
export const KIOSK_FLAGS = [
  '--kiosk',
  '--ozone-platform=wayland',
  '--noerrdialogs',
  '--disable-infobars',
  '--disable-session-crashed-bubble',
  '--disable-features=Translate',
  '--no-first-run',
  '--incognito',
  '--password-store=basic',
  '--autoplay-policy=no-user-gesture-required',
]

/** share/kiosk: what cage runs. Debian names the browser chromium, older Raspberry Pi OS chromium-browser. */
export const KIOSK = `#!/bin/sh
# The kiosk browser, run by svc-kiosk.service inside cage (a Wayland compositor that shows
# one program full screen): Chromium on the local player page.
for browser in /usr/bin/chromium /usr/bin/chromium-browser; do
  if [ -x "$browser" ]; then
    exec "$browser" ${KIOSK_FLAGS.join(' ')} "http://127.0.0.1:\${SVC_AGENT_PLAYER_PORT:-7070}/"
  fi
done
echo "svc-kiosk: no Chromium on this player (apt-get install chromium)" >&2
exit 1
`

/**
 * share/kiosk-session: what svc-kiosk.service starts. cage makes its Wayland socket in
 * XDG_RUNTIME_DIR; the login session (PAM) points that at /run/user/UID, which only
 * svc-kiosk may enter, so the session moves it to the unit's RuntimeDirectory (systemd
 * passes it as RUNTIME_DIRECTORY) and makes the socket group-accessible (umask 0007): the
 * agent, in the group svc-kiosk, captures the display there. The browser keeps the login
 * session's sound server (PULSE_SERVER) where it has one. Without RUNTIME_DIRECTORY (run by
 * hand) XDG_RUNTIME_DIR stays as given.
 */
export const KIOSK_SESSION = `#!/bin/sh
# svc kiosk session, run by svc-kiosk.service: cage (the Wayland compositor) on tty1 showing
# the kiosk script beside this one (${PREFIX}/share/kiosk) full screen, its socket in
# $RUNTIME_DIRECTORY (${KIOSK_RUNTIME_DIR}) for the agent's screenshots of the display
# (grim, as svc-agent, in the group svc-kiosk).
if [ -n "\${RUNTIME_DIRECTORY:-}" ]; then
  if [ -n "\${XDG_RUNTIME_DIR:-}" ] && [ -S "$XDG_RUNTIME_DIR/pulse/native" ]; then
    export PULSE_SERVER="unix:$XDG_RUNTIME_DIR/pulse/native"
  fi
  export XDG_RUNTIME_DIR="$RUNTIME_DIRECTORY"
fi
umask 0007
exec /usr/bin/cage -s -- "$(dirname "$0")/kiosk"
`

export const KIOSK_UNIT = `[Unit]
Description=svc kiosk browser: the player page full screen (Chromium in the cage compositor on tty1)
Wants=svc-agent.service
After=svc-agent.service systemd-user-sessions.service getty@tty1.service
Conflicts=getty@tty1.service
ConditionPathExists=/usr/bin/cage
ConditionPathExists=|/usr/bin/chromium
ConditionPathExists=|/usr/bin/chromium-browser
StartLimitIntervalSec=0

[Service]
Type=simple
User=svc-kiosk
Group=svc-kiosk
Environment=SVC_AGENT_PLAYER_PORT=7070
EnvironmentFile=${ENV_FILE}
WorkingDirectory=${KIOSK_HOME}
# A login session on tty1, so the compositor may use the screen and the input devices.
PAMName=login
TTYPath=/dev/tty1
TTYReset=yes
TTYVHangup=yes
TTYVTDisallocate=yes
StandardInput=tty-fail
StandardOutput=journal
StandardError=journal
UtmpIdentifier=tty1
UtmpMode=user
# cage's Wayland socket goes here (${KIOSK_WAYLAND_SOCKET}), readable by the group svc-kiosk: the agent's
# screenshots capture the display through it.
RuntimeDirectory=svc-kiosk
RuntimeDirectoryMode=0750
# The page opens once the agent answers; it then follows the agent across its restarts.
ExecStartPre=${PREFIX}/bin/svc-agent health --wait 60 --player-port \${SVC_AGENT_PLAYER_PORT}
ExecStart=${PREFIX}/share/kiosk-session
# A crash restarts it; a hang is found by the watchdog (svc-agent-watchdog.timer).
Restart=always
RestartSec=3

[Install]
WantedBy=graphical.target
`

export const WATCHDOG = `#!/bin/sh
# svc watchdog, run every 30 s by svc-agent-watchdog.timer. \`svc-agent health\` asks the
# agent's own page: exit 1 = the agent did not answer for 15 s (it hangs: restart it);
# 3 = no kiosk page has spoken for 60 s (the page says it is alive every 10 s from its main
# thread, so the browser hangs, crashed its page or shows an error: restart the browser).
# try-restart: a unit an administrator stopped stays stopped.
${PREFIX}/bin/svc-agent health --player-port "\${SVC_AGENT_PLAYER_PORT:-7070}" --wait 15 --page-silent-after 60
case $? in
  1) echo "the agent does not answer: restarting it"; systemctl try-restart svc-agent.service ;;
  3) echo "the kiosk page is silent: restarting the browser"; systemctl try-restart svc-kiosk.service ;;
esac
exit 0
`

export const WATCHDOG_UNIT = `[Unit]
Description=svc watchdog: restarts the agent or the kiosk browser when they stop answering
After=svc-agent.service

[Service]
Type=oneshot
Environment=SVC_AGENT_PLAYER_PORT=7070
EnvironmentFile=${ENV_FILE}
ExecStart=${PREFIX}/share/watchdog
`

export const WATCHDOG_TIMER = `[Unit]
Description=svc watchdog every 30 s

[Timer]
OnBootSec=2min
OnUnitActiveSec=30s
AccuracySec=5s

[Install]
WantedBy=timers.target
`

/** Unit file name → text. */
export const UNITS: Record<string, string> = {
  'svc-agent.service': AGENT_UNIT,
  'svc-kiosk.service': KIOSK_UNIT,
  'svc-agent-watchdog.service': WATCHDOG_UNIT,
  'svc-agent-watchdog.timer': WATCHDOG_TIMER,
}

/** Units enabled at installation (the watchdog service runs from its timer). */
const ENABLED = ['svc-agent.service', 'svc-kiosk.service', 'svc-agent-watchdog.timer']

/** A Debian version from the package.json one (`1.2.0-beta.1` → `1.2.0~beta.1`, which sorts before `1.2.0`). */
export function debianVersion(version: string): string {
  return version.replace('-', '~')
}

export function control(o: { version: string; arch: string; installedKiB: number }): string {
  return `Package: svc-agent
Version: ${debianVersion(o.version)}
Architecture: ${o.arch}
Maintainer: svc <svc@localhost>
Installed-Size: ${o.installedKiB}
Depends: nodejs (>= 20.19), init-system-helpers, passwd
Recommends: chromium | chromium-browser, cage, xwayland, grim
Section: misc
Priority: optional
Description: svc screen-player agent
 One agent runs on each screen player: it pairs the player with the svc cloud, plays
 what the cloud says (and keeps playing offline) on a local page that the kiosk
 browser shows full screen, and drives the display panel over RS232.
`
}

export const CONFFILES = `${ENV_FILE}\n`

// The systemd parts follow what debhelper writes for a package's units: deb-systemd-helper
// enables them at the first installation and remembers an administrator's `disable` across
// upgrades; removal masks them, purge forgets them.
export const POSTINST = `#!/bin/sh
# svc-agent postinst: the users, the data folder, the units. The data folder (and with it
# the pairing) is never touched here: installing again or upgrading keeps it.
set -e
if [ "$1" = configure ]; then
  # The agent's user: owns the data folder, may open serial ports (dialout).
  if ! getent passwd svc-agent >/dev/null; then
    useradd --system --user-group --home-dir ${DATA_DIR} --no-create-home --shell /usr/sbin/nologin --comment "svc screen-player agent" svc-agent
  fi
  usermod -a -G dialout svc-agent
  install -d -m 0700 -o svc-agent -g svc-agent ${DATA_DIR}
  # The kiosk browser's user: the screen and the input devices, nothing of the agent's.
  if ! getent passwd svc-kiosk >/dev/null; then
    useradd --system --user-group --home-dir ${KIOSK_HOME} --no-create-home --shell /usr/sbin/nologin --comment "svc kiosk browser" svc-kiosk
  fi
  for g in video render input; do
    if getent group "$g" >/dev/null; then usermod -a -G "$g" svc-kiosk; fi
  done
  install -d -m 0700 -o svc-kiosk -g svc-kiosk ${KIOSK_HOME}
  # The agent reaches the kiosk compositor's socket (screenshots of the display): group svc-kiosk.
  usermod -a -G svc-kiosk svc-agent
fi
if [ "$1" = configure ] || [ "$1" = abort-upgrade ] || [ "$1" = abort-deconfigure ] || [ "$1" = abort-remove ]; then
  for unit in ${ENABLED.join(' ')}; do
    deb-systemd-helper unmask "$unit" >/dev/null || true
    if deb-systemd-helper --quiet was-enabled "$unit"; then
      deb-systemd-helper enable "$unit" >/dev/null || true
    else
      deb-systemd-helper update-state "$unit" >/dev/null || true
    fi
  done
  if [ -d /run/systemd/system ]; then
    systemctl --system daemon-reload >/dev/null || true
    # The agent starts now (without SVC_AGENT_CLOUD it stops at once, saying so in its journal);
    # the kiosk browser starts at the next boot (or: systemctl start svc-kiosk), a running one restarts.
    deb-systemd-invoke restart svc-agent.service svc-agent-watchdog.timer >/dev/null || true
    if [ -n "$2" ]; then deb-systemd-invoke try-restart svc-kiosk.service >/dev/null || true; fi
  fi
fi
exit 0
`

export const PRERM = `#!/bin/sh
# svc-agent prerm: removal stops the units (an upgrade restarts them in postinst instead).
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
  deb-systemd-invoke stop svc-kiosk.service svc-agent-watchdog.timer svc-agent-watchdog.service svc-agent.service >/dev/null || true
fi
exit 0
`

export const POSTRM = `#!/bin/sh
# svc-agent postrm. remove: the units are masked; the users, /etc/svc-agent/agent.env and
# the data folder (the pairing, the media cache) stay, so installing again resumes.
# purge: everything goes: the units' state, the data folder, the kiosk's home, the users.
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
  systemctl --system daemon-reload >/dev/null || true
fi
if [ "$1" = remove ] && [ -x /usr/bin/deb-systemd-helper ]; then
  for unit in ${ENABLED.join(' ')}; do deb-systemd-helper mask "$unit" >/dev/null || true; done
fi
if [ "$1" = purge ]; then
  if [ -x /usr/bin/deb-systemd-helper ]; then
    for unit in ${ENABLED.join(' ')}; do
      deb-systemd-helper purge "$unit" >/dev/null || true
      deb-systemd-helper unmask "$unit" >/dev/null || true
    done
  fi
  rm -rf ${DATA_DIR} ${KIOSK_HOME}
  # -f: a process of the user that outlived its unit (a kiosk browser still exiting) must not
  # keep the account; whatever still fails is said, not hidden.
  for user in svc-agent svc-kiosk; do
    if getent passwd "$user" >/dev/null; then userdel -f "$user" >/dev/null 2>&1 || echo "svc-agent: could not remove the user $user: $(userdel -f "$user" 2>&1)" >&2; fi
    if getent group "$user" >/dev/null; then groupdel "$user" >/dev/null 2>&1 || echo "svc-agent: could not remove the group $user: $(groupdel "$user" 2>&1)" >&2; fi
  done
  rmdir /etc/svc-agent 2>/dev/null || true
fi
exit 0
`
