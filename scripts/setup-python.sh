#!/usr/bin/env bash
# Creates .venv with the probe's pinned Python packages (probe/requirements.txt): PyTorch 2.13 (CPU build), transformers,
# DeepSpeed (the fake-tensor oracle runs its engine).
# Safe to re-run: skipped when .venv already has exactly these versions. Used by .ci/run and named in the README.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${SHARDLENS_VENV:-.venv}"
REQ=probe/requirements.txt
STAMP="$VENV/.requirements.sha256"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; then
  echo "setup-python: $VENV is up to date"
  exit 0
fi
PY="${PYTHON:-python3}"
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' || { echo "setup-python: Python ≥ 3.9 needed ($PY)" >&2; exit 1; }
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQ"
DS_ACCELERATOR=cpu "$VENV/bin/python" -c 'import torch, transformers, deepspeed, peft; print("setup-python: torch", torch.__version__, "transformers", transformers.__version__, "deepspeed", deepspeed.__version__, "peft", peft.__version__)'
echo "$want" > "$STAMP"
