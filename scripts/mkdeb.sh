#!/bin/sh
# Builds egress-guard_VERSION_ARCH.deb from a finished build (make deb):
#
#   mkdeb.sh BUILD OUTDIR VERSION
#
# The tree is `make install` with PREFIX=/usr (binaries stripped, man
# pages gzipped, the unit under /lib/systemd/system running as the
# package's system user instead of DynamicUser), plus the maintainer
# scripts and files in pkg/deb/. Depends is computed from the binaries by
# dpkg-shlibdeps (dpkg-dev), never listed by hand; adduser is added for
# the postinst. Prints the .deb's path.
set -eu
BUILD=$(cd "$1" && pwd) OUT=$2 VERSION=$3
TOP=$(cd "$(dirname "$0")/.." && pwd)
ARCH=$(dpkg --print-architecture)
W=$BUILD/deb
R=$W/root
rm -rf "$W"
mkdir -p "$R/DEBIAN" "$OUT"

make -s -C "$TOP" BUILD="$BUILD" -o deps PREFIX=/usr SYSTEMDUNITDIR=/lib/systemd/system \
    DESTDIR="$R" install >/dev/null
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
    "$R/usr/bin/egress-guard" "$R/usr/bin/egress-guardctl"
find "$R/usr/share/man" -type f -exec gzip -9n {} +
# The package's unit: its system user (made by postinst) and the real
# state folder, where the repository's unit has DynamicUser.
sed -e 's|^DynamicUser=yes$|User=egress-guard\nGroup=egress-guard|' \
    -e 's|/var/lib/private/egress-guard|/var/lib/egress-guard|' \
    -i "$R/lib/systemd/system/egress-guard.service"
install -d -m 0755 "$R/etc/egress-guard" "$R/usr/share/lintian/overrides"
install -m 0644 "$TOP/pkg/deb/egress-guard.env" "$R/etc/egress-guard/"
install -m 0644 "$TOP/pkg/deb/copyright" "$R/usr/share/doc/egress-guard/copyright"
# A native package's changelog: this version, dated by the last commit.
when=$(git -C "$TOP" log -1 --format=%cD 2>/dev/null || date -R)
printf 'egress-guard (%s) unstable; urgency=medium\n\n  * Built by make deb from revision %s.\n\n -- %s  %s\n' \
    "$VERSION" "$(git -C "$TOP" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" \
    "$(sed -n 's/^Maintainer: //p' "$TOP/pkg/deb/control.in")" "$when" |
    gzip -9n >"$R/usr/share/doc/egress-guard/changelog.gz"
chmod 0644 "$R/usr/share/doc/egress-guard/changelog.gz"
install -m 0644 "$TOP/pkg/deb/lintian-overrides" "$R/usr/share/lintian/overrides/egress-guard"
for f in postinst prerm postrm; do install -m 0755 "$TOP/pkg/deb/$f" "$R/DEBIAN/"; done
install -m 0644 "$TOP/pkg/deb/conffiles" "$R/DEBIAN/"

# dpkg-shlibdeps reads debian/control from its working folder.
mkdir -p "$W/src/debian"
printf 'Source: egress-guard\n\nPackage: egress-guard\nArchitecture: any\n' >"$W/src/debian/control"
deps=$(cd "$W/src" && dpkg-shlibdeps -O --warnings=0 "$R/usr/bin/egress-guard" \
    "$R/usr/bin/egress-guardctl" | sed -n 's/^shlibs:Depends=//p')
[ -n "$deps" ] || { echo "mkdeb.sh: dpkg-shlibdeps found no dependency" >&2; exit 1; }
size=$(du -sk --exclude=DEBIAN "$R" | cut -f1)
sed -e "s|@VERSION@|$VERSION|" -e "s|@ARCH@|$ARCH|" -e "s|@SIZE@|$size|" \
    -e "s|@DEPENDS@|adduser, $deps|" "$TOP/pkg/deb/control.in" >"$R/DEBIAN/control"
(cd "$R" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\n' | sort |
    xargs md5sum) >"$R/DEBIAN/md5sums"
chmod 0644 "$R/DEBIAN/md5sums" "$R/DEBIAN/control"
find "$R" -type d -exec chmod 0755 {} +
deb=$OUT/egress-guard_${VERSION}_$ARCH.deb
dpkg-deb --root-owner-group -Zxz --build "$R" "$deb" >/dev/null
echo "$deb"
