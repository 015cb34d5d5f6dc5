#!/bin/sh
# Makes sure the Debian 12 packages egress-guard builds and tests with are
# present. As root it installs what is missing (apt-get update first);
# otherwise it prints the exact apt-get line and fails.
set -eu

PKGS="build-essential pkg-config libevent-dev libc-ares-dev libssl-dev
libnftnl-dev libmnl-dev libjansson-dev libcmocka-dev
curl iproute2 nftables python3 openssl procps iputils-ping nodejs git
python3-yaml python3-kubernetes systemd clang libclang-rt-14-dev
docker.io docker-compose mmdebstrap util-linux bind9-dnsutils
gnutls-bin golang-go dpkg-dev lintian mandoc"

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

line="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "egress-guard: missing Debian packages. Run as root:" >&2
	echo "  apt-get update && $line" >&2
	exit 1
fi
echo "egress-guard: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
$line >&2
