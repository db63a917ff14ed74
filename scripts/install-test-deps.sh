#!/usr/bin/env bash
# Installs what the end-to-end suites need besides npm packages: Debian's chromium (real VS Code via code-server),
# neovim (an independent LSP client), python3-torch (the torchrun probe), and code-server 4.100.3 itself.
# Safe to re-run: each step is skipped when its result is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v nvim >/dev/null || need+=(neovim)
command -v rg >/dev/null || need+=(ripgrep)
[ -e /usr/include/gssapi/gssapi.h ] || need+=(libkrb5-dev)
/usr/bin/python3 -c 'import torch' 2>/dev/null || need+=(python3-torch)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi
if [ -f test/e2e/setup.sh ]; then bash test/e2e/setup.sh; fi
# The PyTorch 2.x environment of the probe and the fake-tensor oracle (.venv, pinned in probe/requirements.txt).
bash scripts/setup-python.sh
