#!/bin/sh
# Checks a built tollgate .deb (`cargo deb`): what it installs, its control
# fields and conffiles, and what its maintainer scripts do. Run by .ci/test
# after `cargo deb`; needs dpkg-deb only (no root, nothing is installed).
#
#   packaging/check-deb.sh target/debian/tollgate_<version>_<arch>.deb
set -eu

deb=${1:?usage: check-deb.sh PACKAGE.deb}
fail() {
    echo "check-deb: $deb: $*" >&2
    exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- contents: path, mode, owner ---------------------------------------------
dpkg-deb --contents "$deb" >"$work/contents"
has() { # MODE PATH
    awk -v mode="$1" -v path="$2" '$1 == mode && ($2 == "root/root" || $2 == "0/0") && $NF == path { found = 1 } END { exit !found }' "$work/contents" ||
        fail "no $2 with mode $1 owned by root: $(grep -F "$2" "$work/contents" || echo absent)"
}
has -rwxr-xr-x ./usr/bin/tollgate
if grep -q ' \./usr/lib/systemd/system/tollgate.service$' "$work/contents"; then
    has -rw-r--r-- ./usr/lib/systemd/system/tollgate.service
else
    has -rw-r--r-- ./lib/systemd/system/tollgate.service
fi
has -rw-r----- ./etc/tollgate/config.toml
# The data directory is made by postinst, never shipped (dpkg would own it
# and could remove it).
! grep -q ' \./var/lib/tollgate' "$work/contents" || fail "ships files under /var/lib/tollgate"

# --- control fields ------------------------------------------------------------
dpkg-deb --field "$deb" Package | grep -qx tollgate || fail "Package is not tollgate"
dpkg-deb --field "$deb" Depends | grep -q 'ca-certificates' || fail "Depends lacks ca-certificates"
dpkg-deb --field "$deb" Version | grep -q . || fail "no Version"

# --- control archive: conffiles and maintainer scripts ---------------------------
dpkg-deb -e "$deb" "$work/DEBIAN"
grep -qx /etc/tollgate/config.toml "$work/DEBIAN/conffiles" || fail "config.toml is not a conffile"
for script in postinst prerm postrm; do
    [ -x "$work/DEBIAN/$script" ] || fail "no executable $script"
    sh -n "$work/DEBIAN/$script" || fail "$script does not parse"
    ! grep -q '#DEBHELPER#' "$work/DEBIAN/$script" || fail "$script still holds #DEBHELPER#"
    # cargo-deb's snippets each start a line of their own (a marker in a
    # comment would put one mid-line).
    ! grep -v '^# Automatically added by cargo-deb$' "$work/DEBIAN/$script" | grep -q 'Automatically added by cargo-deb' ||
        fail "$script has a cargo-deb snippet inside another line"
done
postinst=$work/DEBIAN/postinst
grep -q 'useradd --system' "$postinst" || fail "postinst does not create the tollgate system user"
grep -q 'install -d -m 0750 -o "$SERVICE_USER" -g "$SERVICE_USER" "$STATE_DIR"' "$postinst" ||
    fail "postinst does not create /var/lib/tollgate 0750"
grep -q '^STATE_DIR=/var/lib/tollgate$' "$postinst" || fail "postinst's STATE_DIR is not /var/lib/tollgate"
# Enable nothing and start nothing without the operator: no enable, and at
# most a try-restart (a service already running, on upgrade).
# cargo-deb's snippet re-creates the links of a unit the operator had
# enabled (`was-enabled`); any other enable is refused.
awk 'heredoc && $0 == tag { heredoc = 0; next }
     heredoc { next }  # text printed for the operator
     match($0, /<<.[A-Z]+./) { tag = substr($0, RSTART + 3, RLENGTH - 4); heredoc = 1 }
     /deb-systemd-helper( --quiet)? enable|systemctl( --system)? enable/ && prev !~ /was-enabled/ { bad = 1 }
     NF && $1 !~ /^#/ { prev = $0 } END { exit bad }' "$postinst" || fail "postinst enables the unit"
! grep -Eq 'deb-systemd-invoke (start|restart) ' "$postinst" || fail "postinst starts the unit"
# Data is kept on remove and purge.
! grep -Eq 'rm -[a-z]*r[a-z]* .*(/var/lib/tollgate|\$STATE_DIR|\$BACKUP_DIR)' "$work/DEBIAN/postrm" ||
    fail "postrm deletes the data"

# --- the binary runs -------------------------------------------------------------
dpkg-deb -x "$deb" "$work/root"
"$work/root/usr/bin/tollgate" --help >/dev/null || fail "/usr/bin/tollgate --help fails"

echo "check-deb: $deb: ok"
