#!/usr/bin/env bash
# Builds memstore's release: a CGO-free binary for each target (static on
# Linux; on macOS and Windows linked only to the system's libraries), one
# archive each (tar.gz, or zip for Windows) holding the binary, the
# README and the LICENSE, and SHA256SUMS, in dist/ (or --out DIR).
#
#   scripts/dist.sh [--out DIR] [TARGET...]
#   scripts/dist.sh --targets      lists the release targets
#
# TARGET is os/arch, or "host" for this machine's; the default is every
# release target. The version is the git tag at HEAD (v0.3.0, or a
# pre-release such as v0.3.0-rc.1), which must match cmd/memstore/VERSION;
# without a tag it is VERSION's. The commit, its time and whether the
# work tree had changes are stamped too (memstore --version). Builds are
# reproducible: the same commit gives the same archives (-trimpath, every
# archive entry dated the commit's time, or SOURCE_DATE_EPOCH).
# Needs only Go and git.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"
out=dist
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --targets) echo "$all_targets"; exit 0 ;;
    -h|--help) sed -n '2,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    --out) [ $# -ge 2 ] || { echo "dist.sh: --out needs a directory" >&2; exit 2; }; out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    host) targets+=("$(go env GOOS)/$(go env GOARCH)"); shift ;;
    */*) targets+=("$1"); shift ;;
    *) echo "dist.sh: unknown argument $1: want --out DIR, os/arch or host (--help)" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || read -r -a targets <<<"$all_targets"

version=$(tr -d ' \r\n' <cmd/memstore/VERSION)
tag= commit= built= modified=
epoch=${SOURCE_DATE_EPOCH:-}
if git rev-parse --verify -q HEAD >/dev/null 2>&1; then
  commit=$(git rev-parse HEAD)
  built=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ)
  epoch=${epoch:-$(git log -1 --format=%ct)}
  if [ -n "$(git status --porcelain)" ]; then modified=true; fi
  # The highest version tag at HEAD, if any.
  tag=$(git tag --points-at HEAD --list 'v[0-9]*' | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$' | sort -V | tail -n 1 || true)
  case $tag in
    ''|"v$version"|"v$version"-*) ;;
    *) echo "dist.sh: HEAD is tagged $tag but cmd/memstore/VERSION says $version: set VERSION to ${tag#v} in the tagged commit, or tag v$version" >&2; exit 1 ;;
  esac
else
  echo "dist.sh: not a git checkout: the binaries will say commit unknown" >&2
fi
epoch=${epoch:-$(date +%s)}
[ -z "$tag" ] || version=${tag#v}

stage="$out/.stage"
rm -rf "$stage"
mkdir -p "$stage"
staged=()
for t in "${targets[@]}"; do
  os=${t%/*} arch=${t#*/}
  name="memstore_${version}_${os}_${arch}"
  exe=; [ "$os" = windows ] && exe=.exe
  echo "== $os/$arch"
  mkdir -p "$stage/$name"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X main.tag=$tag -X main.commit=$commit -X main.commitTime=$built -X main.modified=$modified" \
    -o "$stage/$name/memstore$exe" ./cmd/memstore
  cp README.md LICENSE "$stage/$name/"
  staged+=("$stage/$name")
done
go run ./internal/dist -out "$out" -mtime "$epoch" "${staged[@]}"
rm -rf "$stage"
echo "== $out/SHA256SUMS"
cat "$out/SHA256SUMS"
