#!/bin/sh
# Install Tollgate as a hardened systemd service on this machine.
#
#   sudo sh packaging/install.sh [--dry-run] [path/to/tollgate]
#
# The binary defaults to target/release/tollgate (build it first with
# `cargo build --release`). The script:
#   - installs the binary to /usr/bin/tollgate,
#   - creates the system user and group `tollgate` if they don't exist,
#   - installs /etc/tollgate/config.toml and /etc/tollgate/tollgate.env only
#     if they are absent (an operator's files are never overwritten),
#   - installs the unit to /etc/systemd/system/tollgate.service and reloads
#     systemd. It does not enable or start the service.
# It is idempotent: run it again with a new binary to upgrade (see
# docs/install.md). With --dry-run it only prints what it would do and
# needs neither root nor systemd.

set -eu

PREFIX_BIN=/usr/bin/tollgate
CONF_DIR=/etc/tollgate
CONF_FILE=$CONF_DIR/config.toml
ENV_FILE=$CONF_DIR/tollgate.env
UNIT_FILE=/etc/systemd/system/tollgate.service
STATE_DIR=/var/lib/tollgate
SERVICE_USER=tollgate

# Files shipped next to this script; the repository root is one level up.
SCRIPT_DIR=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
REPO_DIR=$(dirname -- "$SCRIPT_DIR")

usage() {
    cat <<USAGE
Usage: $0 [--dry-run] [BINARY]

Install Tollgate as a systemd service.

  BINARY     built tollgate executable (default: $REPO_DIR/target/release/tollgate)
  --dry-run  print what would be done, change nothing (root not required)
  -h, --help show this help
USAGE
}

die() {
    printf 'install.sh: error: %s\n' "$*" >&2
    exit 1
}

say() {
    printf '%s\n' "$*"
}

DRY_RUN=0
BINARY=

while [ $# -gt 0 ]; do
    case $1 in
        --dry-run|-n) DRY_RUN=1 ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        -*) usage >&2; die "unknown option: $1" ;;
        *)
            [ -z "$BINARY" ] || die "only one binary path may be given"
            BINARY=$1
            ;;
    esac
    shift
done
if [ $# -gt 0 ]; then
    if [ -n "$BINARY" ] || [ $# -ne 1 ]; then
        die "only one binary path may be given"
    fi
    BINARY=$1
fi
[ -n "$BINARY" ] || BINARY=$REPO_DIR/target/release/tollgate

# run CMD ARGS...: execute, or in dry-run mode only print it.
run() {
    if [ "$DRY_RUN" -eq 1 ]; then
        printf '[dry-run] %s\n' "$*"
    else
        printf '+ %s\n' "$*"
        "$@"
    fi
}

# --- Preconditions -----------------------------------------------------------

[ -f "$BINARY" ] || die "binary not found: $BINARY (build it with 'cargo build --release' or pass its path)"
[ -x "$BINARY" ] || die "binary is not executable: $BINARY"
for f in tollgate.service config.toml tollgate.env.example; do
    [ -f "$SCRIPT_DIR/$f" ] || die "missing $SCRIPT_DIR/$f (run the script from a Tollgate source tree)"
done

if [ "$DRY_RUN" -eq 1 ]; then
    say "Dry run: nothing will be changed."
else
    [ "$(id -u)" -eq 0 ] || die "must be run as root (try: sudo sh $0 $BINARY)"
    command -v systemctl >/dev/null 2>&1 || die "systemctl not found: this script needs a systemd machine"
    for tool in install getent groupadd useradd; do
        command -v "$tool" >/dev/null 2>&1 || die "required tool not found: $tool"
    done
fi

if [ -f /lib/systemd/system/tollgate.service ] || [ -f /usr/lib/systemd/system/tollgate.service ]; then
    say "warning: a packaged tollgate.service exists (the .deb is installed?);"
    say "         $UNIT_FILE will take precedence over it."
fi

# --- Binary ------------------------------------------------------------------
# Copy next to the target and rename over it: the rename is atomic, so a
# running server keeps its old (unlinked) executable and nothing ever sees a
# half-written file.
run install -m 0755 -o root -g root "$BINARY" "$PREFIX_BIN.new"
run mv -f "$PREFIX_BIN.new" "$PREFIX_BIN"

# --- Service user ------------------------------------------------------------
# A fixed system user (not DynamicUser=) so admins can run the CLI as it with
# `sudo -u tollgate`; see the comment in tollgate.service.
NOLOGIN=/usr/sbin/nologin
[ -x "$NOLOGIN" ] || NOLOGIN=/sbin/nologin
[ -x "$NOLOGIN" ] || NOLOGIN=/bin/false

if getent group "$SERVICE_USER" >/dev/null 2>&1; then
    say "group $SERVICE_USER exists"
else
    run groupadd --system "$SERVICE_USER"
fi
if getent passwd "$SERVICE_USER" >/dev/null 2>&1; then
    say "user $SERVICE_USER exists"
else
    run useradd --system --no-create-home --shell "$NOLOGIN" \
        --home-dir "$STATE_DIR" --gid "$SERVICE_USER" \
        --comment "Tollgate AI gateway" "$SERVICE_USER"
fi

# --- Configuration -----------------------------------------------------------
run install -d -m 0755 -o root -g root "$CONF_DIR"

# config.toml: readable by the service (group), writable only by root.
if [ -e "$CONF_FILE" ]; then
    say "keeping existing $CONF_FILE (the new example is $SCRIPT_DIR/config.toml)"
else
    run install -m 0640 -o root -g "$SERVICE_USER" "$SCRIPT_DIR/config.toml" "$CONF_FILE"
fi

# tollgate.env: secrets, read by systemd as root only.
if [ -e "$ENV_FILE" ]; then
    say "keeping existing $ENV_FILE"
else
    run install -m 0600 -o root -g root "$SCRIPT_DIR/tollgate.env.example" "$ENV_FILE"
fi

# --- systemd unit ------------------------------------------------------------
# Always replaced: local changes belong in a drop-in (systemctl edit tollgate).
run install -m 0644 -o root -g root "$SCRIPT_DIR/tollgate.service" "$UNIT_FILE"
if [ "$DRY_RUN" -eq 1 ] || [ -d /run/systemd/system ]; then
    run systemctl daemon-reload
else
    say "systemd is not running here; skipped 'systemctl daemon-reload'"
fi

# --- Next steps --------------------------------------------------------------
RUNNING=0
if [ "$DRY_RUN" -eq 0 ] && systemctl is-active --quiet tollgate 2>/dev/null; then
    RUNNING=1
fi

if [ "$DRY_RUN" -eq 1 ]; then
    say ""
    say "Dry run complete: Tollgate would be installed as $PREFIX_BIN."
else
    say ""
    say "Tollgate is installed: $PREFIX_BIN"
fi
if [ "$RUNNING" -eq 1 ]; then
    cat <<NEXT
The service is running the previous binary. Restart it to upgrade (the store
schema is migrated on start):
  systemctl restart tollgate
NEXT
else
    cat <<NEXT
Next steps:
  1. Edit $CONF_FILE (providers, models, prices, listen address).
  2. Put the provider API keys into $ENV_FILE (mode 0600).
     Optionally set TOLLGATE_OWNER_PASSWORD for the first start.
  3. Start the service and enable it at boot:
       systemctl enable --now tollgate
  4. On the first start the owner password is printed to the log:
       journalctl -u tollgate
  5. Run the admin CLI as the service user (it talks to the server through
     $STATE_DIR/tollgate.sock):
       sudo -u $SERVICE_USER $PREFIX_BIN --config $CONF_FILE keys list
NEXT
fi
