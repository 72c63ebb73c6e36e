#!/usr/bin/env bash
# Deploy: "function fake() {" in a comment.
set -euo pipefail

log() {
  echo "[deploy] $*" >&2
}

function build_image {
  local tag="$1"
  docker build -t "$tag" .
}

if [ -n "${DEBUG:-}" ]; then
  debug() { log "debug: $*"; }
fi

cat <<'DOC'
not_a_function() { :; }
DOC

main() {
  build_image "app:latest"
  log done
}

main "$@"
