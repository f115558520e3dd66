# Sourced by the benchmark scripts: installs with apt-get what esbench needs when it is missing
# (LMDB's and SQLite's headers, pkg-config, and wrk, S7's light external client: BENCHMARKS.md,
# "S7: appends over HTTP").
bench_install_deps() {
  local sudo="" missing=()
  [ "$(id -u)" = 0 ] || sudo=sudo
  pkg-config --exists lmdb 2>/dev/null || missing+=(liblmdb-dev)
  pkg-config --exists sqlite3 2>/dev/null || missing+=(libsqlite3-dev)
  command -v pkg-config >/dev/null || missing+=(pkg-config)
  command -v wrk >/dev/null || missing+=(wrk)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]} with apt-get..." >&2
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}
