#!/bin/sh
# Lays out the shell-free runtime image's whole file tree in OUT, and its
# SBOM, from the build stage of container/Dockerfile (which has a shell;
# the image built from OUT has none):
#
#   rootfs.sh BUILD OUT VERSION REVISION
#
# OUT gets the two binaries (stripped), exactly the shared libraries they
# load (ldd: each at the path the loader asks for, as a regular file), the
# /etc the guard reads (passwd and group for uid 10001, nsswitch.conf with
# `files`, no CA bundle: the guard trusts no CA), its folders, and
# OUT/usr/share/egress-guard/sbom.tsv: one line per entry of the image,
#   PATH TYPE MODE UID:GID SHA256 PACKAGE VERSION SOURCE
# with PACKAGE and VERSION from dpkg (dpkg -S, dpkg-query) for a library,
# `egress-guard` and VERSION+REVISION for what this project makes. The
# test compares the image's own file list with it (docker_test.sh).
set -eu
BUILD=$1 OUT=$2 VERSION=$3 REVISION=$4
SBOM_REL=usr/share/egress-guard/sbom.tsv
OURS="egress-guard	$VERSION+$REVISION"

rm -rf "$OUT"
install -d -m 0755 "$OUT/usr/local/bin" "$OUT/etc/egress-guard" "$OUT/usr/share/egress-guard"
install -m 0755 -s "$BUILD/egress-guard" "$BUILD/egress-guardctl" "$OUT/usr/local/bin/"
# Folders: the control socket's (root's; the guard creates the socket
# before it drops) and the state folder (the guard's user's).
install -d -m 0700 "$OUT/run/egress-guard"
install -d -m 0700 -o 10001 -g 10001 "$OUT/var/lib/egress-guard"
# A temporary folder for nobody: the guard needs none; the image has none.

printf '%s\n' 'root:x:0:0:root:/root:/nonexistent' \
    'egress-guard:x:10001:10001:egress-guard:/nonexistent:/nonexistent' \
    'nobody:x:65534:65534:nobody:/nonexistent:/nonexistent' >"$OUT/etc/passwd"
printf '%s\n' 'root:x:0:' 'egress-guard:x:10001:' 'nogroup:x:65534:' >"$OUT/etc/group"
# glibc 2.36 has the files service built in: no libnss_*.so to copy.
printf '%s\n' 'passwd: files' 'group: files' 'shadow: files' 'hosts: files dns' \
    >"$OUT/etc/nsswitch.conf"
chmod 0644 "$OUT/etc/passwd" "$OUT/etc/group" "$OUT/etc/nsswitch.conf"

# The libraries, from ldd: NAME => PATH, and the loader itself.
libs=$(ldd "$BUILD/egress-guard" "$BUILD/egress-guardctl" |
    awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $1 !~ /:$/ {print $1}' | sort -u)
[ -n "$libs" ] || { echo "rootfs.sh: ldd found no library" >&2; exit 1; }
for l in $libs; do
	install -d -m 0755 "$OUT$(dirname "$l")"
	cp -L "$l" "$OUT$l"
	chmod 0644 "$OUT$l"
done
# The loader is run, not only mapped.
chmod 0755 "$OUT$(ldd "$BUILD/egress-guard" | awk '$1 ~ /^\// {print $1}')"

# dpkg's name for a file: the path, its real path, with or without /usr
# (Debian 12's merged /usr: dpkg knows each file by one of them).
pkg_of() {
	r=$(readlink -f "$1")
	for p in "$1" "$r" "/usr$1" "/usr$r" "${1#/usr}" "${r#/usr}"; do
		out=$(dpkg -S "$p" 2>/dev/null | head -n1) || continue
		[ -n "$out" ] || continue
		echo "${out%%: *}"
		return 0
	done
	return 1
}

{
	printf '# path\ttype\tmode\towner\tsha256\tpackage\tversion\tsource\n'
	(cd "$OUT" && find . -mindepth 1 | sed 's|^\./|/|' | sort; echo "/$SBOM_REL") | sort -u |
	while read -r f; do
		if [ "$f" = "/$SBOM_REL" ]; then
			printf '%s\tf\t0644\t0:0\t-\t%s\t-\n' "$f" "$OURS"
			continue
		fi
		st=$(stat -c '%a %u:%g' "$OUT$f")
		mode=$(printf '%04o' "0${st%% *}") own=${st#* }
		if [ -d "$OUT$f" ]; then
			printf '%s\td\t%s\t%s\t-\t%s\t-\n' "$f" "$mode" "$own" "$OURS"
			continue
		fi
		sum=$(sha256sum "$OUT$f" | cut -d' ' -f1)
		if printf '%s\n' $libs | grep -qxF -- "$f"; then
			pkg=$(pkg_of "$f") || { echo "rootfs.sh: $f: no package owns it" >&2; exit 1; }
			ver=$(dpkg-query -W -f='${Version}' "$pkg")
			printf '%s\tf\t%s\t%s\t%s\t%s\t%s\t%s\n' "$f" "$mode" "$own" "$sum" "$pkg" "$ver" "$(readlink -f "$f")"
		else
			case "$f" in
			/usr/local/bin/*) src="built from revision $REVISION" ;;
			*) src=container/rootfs.sh ;;
			esac
			printf '%s\tf\t%s\t%s\t%s\t%s\t%s\n' "$f" "$mode" "$own" "$sum" "$OURS" "$src"
		fi
	done
} >"$BUILD/sbom.tsv.tmp"
mv "$BUILD/sbom.tsv.tmp" "$OUT/$SBOM_REL"
chmod 0644 "$OUT/$SBOM_REL"
echo "rootfs.sh: $(du -sb "$OUT" | cut -f1) bytes in $(grep -vc '^#' "$OUT/$SBOM_REL") entries" >&2
