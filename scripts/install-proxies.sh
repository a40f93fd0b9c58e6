#!/usr/bin/env bash
# Install the reverse proxies and load tools the lab uses (Debian/Ubuntu).
#
#   scripts/install-proxies.sh [--lab] [--with-traefik] [--no-apt]
#
# --lab installs only what `make lab`'s default plan (quick) runs: nginx,
# haproxy, iproute2 and caddy. Without it, everything below (make deps,
# make test).
#
# Idempotent: installs only what is missing and runs apt-get update only when
# a wanted package has no install candidate.
#   apt:    nginx haproxy apache2 lighttpd lighttpd-mod-openssl (Apache and
#           lighttpd are profile files only: lab/proxy/builtin), h2o and ngtcp2-server (when the release has them: the
#           lean QUIC client is checked against ngtcp2's gtlsserver) iproute2 wrk nghttp2-client
#           strace (the sendfile test of the file-serving origins), prometheus
#           (the metrics tests scrape a real one) and chromium (the report
#           pages are checked in a real headless browser)
#   go:     caddy v2.11.9 into .cache/bin (go install; ~2.5 min, ~1 GB RAM)
#   opt-in: traefik v3.6.12 into .cache/bin (--with-traefik; ~10 min, ~3 GB RAM),
#           built through a wrapper module in .cache/traefik-build because
#           Traefik's go.mod has replace directives that `go install` refuses.
#
# Environment:
#   LOADLAB_PROXY_BIN  directories (':'-separated) that may already hold a
#                      caddy v2.11.9 build; it is copied instead of rebuilt.
#   GO                 the go command (default: go on PATH, else /usr/local/go/bin/go).
#
# Packages installed by this run whose postinst started a system daemon
# (Debian's nginx, haproxy, apache2 and lighttpd bind :80) are stopped again through the service
# manager: systemctl when systemd runs, else `service NAME stop`. A daemon that
# was already installed before this run is left alone.
set -euo pipefail

CADDY_VERSION=v2.11.9
TRAEFIK_VERSION=v3.6.12
APT_REQUIRED=(nginx haproxy apache2 lighttpd lighttpd-mod-openssl iproute2 wrk nghttp2-client strace prometheus chromium)
APT_OPTIONAL=(h2o ngtcp2-server)

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bindir="$root/.cache/bin"
with_traefik=0
use_apt=1

usage() { sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

for arg in "$@"; do
	case "$arg" in
	--lab)
		APT_REQUIRED=(nginx haproxy iproute2)
		APT_OPTIONAL=()
		;;
	--with-traefik) with_traefik=1 ;;
	--no-apt) use_apt=0 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "install-proxies: unknown argument $arg (try --help)" >&2; exit 2 ;;
	esac
done

log() { echo "install-proxies: $*" >&2; }
die() { log "$*"; exit 1; }

# ---------------------------------------------------------------- apt ----

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
has_candidate() {
	local c
	c=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')
	[[ -n "$c" && "$c" != "(none)" ]]
}

# stop_started_daemon NAME: stop the packaged daemon apt's postinst started.
stop_started_daemon() {
	local svc=$1
	if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
		if systemctl is-active --quiet "$svc"; then
			log "stopping the $svc service the package started (it binds :80)"
			systemctl stop "$svc" || log "could not stop $svc: stop it before running the lab"
		fi
	elif [[ -x "/etc/init.d/$svc" ]] && command -v service >/dev/null; then
		if service "$svc" status >/dev/null 2>&1; then
			log "stopping the $svc service the package started (it binds :80)"
			service "$svc" stop || log "could not stop $svc: stop it before running the lab"
		fi
	fi
}

apt_install() {
	local missing=() newly=() p
	for p in "${APT_REQUIRED[@]}" "${APT_OPTIONAL[@]}"; do
		installed "$p" || missing+=("$p")
	done
	[[ ${#missing[@]} -eq 0 ]] && return 0
	command -v apt-get >/dev/null || die "missing packages ${missing[*]} and no apt-get: install them by hand or use --no-apt"
	[[ $(id -u) -eq 0 ]] || die "missing packages ${missing[*]}: run as root (or install them and use --no-apt)"

	local need_update=0
	for p in "${missing[@]}"; do has_candidate "$p" || need_update=1; done
	if [[ $need_update -eq 1 ]]; then
		log "apt-get update (a wanted package has no install candidate yet)"
		DEBIAN_FRONTEND=noninteractive apt-get update -q
	fi

	local want=()
	for p in "${missing[@]}"; do
		if has_candidate "$p"; then
			want+=("$p")
		elif [[ " ${APT_OPTIONAL[*]} " == *" $p "* ]]; then
			log "optional package $p is not available in this release: skipping"
		else
			die "package $p is not available from apt: check /etc/apt/sources.list"
		fi
	done
	[[ ${#want[@]} -eq 0 ]] && return 0
	log "apt-get install ${want[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${want[@]}"
	for p in "${want[@]}"; do
		case "$p" in nginx | haproxy | h2o | apache2 | lighttpd | prometheus) stop_started_daemon "$p" ;; esac
	done
}

# ----------------------------------------------------------------- go ----

find_go() {
	if [[ -n "${GO:-}" ]]; then echo "$GO"; return; fi
	if command -v go >/dev/null; then command -v go; return; fi
	if [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go; return; fi
	return 1
}

# gomod_version BINARY MODULE: the version of MODULE in a Go binary's build info.
gomod_version() {
	local out
	out=$("$GOCMD" version -m "$1" 2>/dev/null) || return 0
	awk -v m="$2" '($1 == "mod" || $1 == "dep") && $2 == m {print $3; exit}' <<<"$out"
}

install_caddy() {
	local want=github.com/caddyserver/caddy/v2 have d
	if [[ -x "$bindir/caddy" ]]; then
		have=$(gomod_version "$bindir/caddy" "$want")
		if [[ "$have" == "$CADDY_VERSION" ]]; then
			log "caddy $CADDY_VERSION already in $bindir"
			return 0
		fi
		log "replacing $bindir/caddy (${have:-unknown version})"
	fi
	IFS=: read -r -a dirs <<<"${LOADLAB_PROXY_BIN:-}"
	for d in "${dirs[@]}"; do
		[[ -n "$d" && -x "$d/caddy" ]] || continue
		if [[ "$(gomod_version "$d/caddy" "$want")" == "$CADDY_VERSION" ]]; then
			log "copying caddy $CADDY_VERSION from $d"
			cp "$d/caddy" "$bindir/caddy.tmp" && mv "$bindir/caddy.tmp" "$bindir/caddy"
			return 0
		fi
	done
	log "go install $want/cmd/caddy@$CADDY_VERSION (a few minutes)"
	GOBIN="$bindir" "$GOCMD" install "$want/cmd/caddy@$CADDY_VERSION"
}

install_traefik() {
	local mod=github.com/traefik/traefik/v3 build="$root/.cache/traefik-build" gomod
	if [[ -x "$bindir/traefik" && "$(gomod_version "$bindir/traefik" "$mod")" == "$TRAEFIK_VERSION" ]]; then
		log "traefik $TRAEFIK_VERSION already in $bindir"
		return 0
	fi
	mkdir -p "$build"
	gomod=$("$GOCMD" mod download -json "$mod@$TRAEFIK_VERSION" | sed -n 's/^[[:space:]]*"GoMod":[[:space:]]*"\(.*\)",\{0,1\}$/\1/p')
	[[ -f "$gomod" ]] || die "go mod download $mod@$TRAEFIK_VERSION gave no go.mod: check the network and GOPROXY"
	local goline
	goline=$(awk '$1 == "go" {print; exit}' "$gomod")
	{
		echo "// Generated by scripts/install-proxies.sh: builds Traefik $TRAEFIK_VERSION"
		echo "// with the replace and exclude directives of its own go.mod."
		echo "module loadlab.local/traefik-build"
		echo
		echo "${goline:-go 1.24}"
		echo
		echo "require $mod $TRAEFIK_VERSION"
		echo
		# Copy every replace/exclude line and block of Traefik's go.mod.
		awk '
			blk { print; if ($0 ~ /^\)/) blk = 0; next }
			/^(replace|exclude)[[:space:]]*\(/ { print; blk = 1; next }
			/^(replace|exclude)[[:space:]]/ { print }
		' "$gomod"
	} >"$build/go.mod"
	if grep -Eq '=>[[:space:]]*\.{1,2}/' "$build/go.mod"; then
		die "Traefik's go.mod replaces a module with a local path; this wrapper cannot build it"
	fi
	cat >"$build/tools.go" <<EOF
//go:build tools

// Package tools pins the Traefik command for go mod tidy.
package tools

import _ "$mod/cmd/traefik"
EOF
	log "building traefik $TRAEFIK_VERSION in $build (about 10 minutes, ~3 GB RAM)"
	(
		cd "$build"
		"$GOCMD" mod tidy
		"$GOCMD" build -trimpath -o "$bindir/traefik" \
			-ldflags "-s -w -X $mod/pkg/version.Version=$TRAEFIK_VERSION" "$mod/cmd/traefik"
	)
}

# ------------------------------------------------------------ summary ----

# find_bin NAME: the path the lab would use (its .cache/bin first, then PATH, sbin).
find_bin() {
	local d
	IFS=: read -r -a dirs <<<"${LOADLAB_PROXY_BIN:-}"
	for d in "${dirs[@]}" "$bindir"; do
		[[ -n "$d" && -x "$d/$1" ]] && { echo "$d/$1"; return 0; }
	done
	command -v "$1" 2>/dev/null && return 0
	for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin; do
		[[ -x "$d/$1" ]] && { echo "$d/$1"; return 0; }
	done
	return 1
}

# version_of NAME PATH: the version the binary reports (never fails).
version_of() {
	local v="" out
	case "$1" in
	nginx) out=$("$2" -v 2>&1) || true; v=$(sed -n 's/.*nginx\/\([^ ]*\).*/\1/p' <<<"$out") ;;
	haproxy) out=$("$2" -v 2>&1) || true; v=$(sed -n 's/^HAProxy version \([^ ]*\).*/\1/p' <<<"$out") ;;
	h2o) out=$("$2" --version 2>&1) || true; v=$(sed -n 's/^h2o version \([^ ]*\).*/\1/p' <<<"$out") ;;
	apache2) out=$("$2" -v 2>&1) || true; v=$(sed -n 's/^Server version: Apache\/\([^ ]*\).*/\1/p' <<<"$out") ;;
	lighttpd) out=$("$2" -v 2>&1) || true; v=$(sed -n 's/^lighttpd\/\([^ ]*\).*/\1/p' <<<"$out") ;;
	caddy)
		v=$(gomod_version "$2" github.com/caddyserver/caddy/v2)
		if [[ -z "$v" || "$v" == "(devel)" ]]; then
			out=$("$2" version 2>&1) || true; v=$(awk '{print $1; exit}' <<<"$out")
		fi ;;
	traefik)
		v=$(gomod_version "$2" github.com/traefik/traefik/v3)
		if [[ -z "$v" ]]; then
			out=$("$2" version 2>&1) || true; v=$(awk '$1 == "Version:" {print $2; exit}' <<<"$out")
		fi ;;
	wrk) out=$("$2" --version 2>&1) || true; v=$(awk '$1 == "wrk" {print $2; exit}' <<<"$out") ;;
	h2load) out=$("$2" --version 2>&1) || true; v=$(awk '{print $NF; exit}' <<<"$out") ;;
	esac
	echo "${v:-unknown}"
}

summary() {
	local name path
	for name in nginx caddy haproxy traefik h2o apache2 lighttpd wrk h2load; do
		if path=$(find_bin "$name"); then
			printf '%-8s found      %-18s %s\n' "$name" "$(version_of "$name" "$path")" "$path"
		else
			printf '%-8s not found\n' "$name"
		fi
	done
}

# --------------------------------------------------------------- main ----

mkdir -p "$bindir"
# Caddy's build (mostly CPU) runs beside apt (mostly downloads and dpkg).
caddy_pid=
if GOCMD=$(find_go); then
	install_caddy &
	caddy_pid=$!
else
	log "no go command: skipping caddy and traefik (install Go 1.26 or set GO)"
	GOCMD=false
fi
apt_status=0
if [[ $use_apt -eq 1 ]]; then
	(apt_install) || apt_status=$?
fi
if [[ -n "$caddy_pid" ]]; then
	wait "$caddy_pid" || die "go install of caddy $CADDY_VERSION failed (see above)"
fi
[[ $apt_status -eq 0 ]] || exit "$apt_status"
if [[ $with_traefik -eq 1 && "$GOCMD" != false ]]; then
	install_traefik
fi
summary
