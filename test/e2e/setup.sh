#!/usr/bin/env bash
# Installs code-server 4.100.3 (VS Code 1.100.3) into test/e2e/.cache/code-server, offline except for the npm registry.
# Follows ../shared/reference/e2e-recipe.md: chromium, libkrb5-dev and ripgrep come from apt (.ci/run installs them).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CS="$HERE/.cache/code-server"
VERSION=4.100.3

if [ -x "$CS/node_modules/.bin/code-server" ] && "$CS/node_modules/.bin/code-server" --version 2>/dev/null | grep -q "^$VERSION"; then
  echo "code-server $VERSION already installed in $CS"
  exit 0
fi
for bin in rg; do
  command -v "$bin" >/dev/null || { echo "setup.sh: '$bin' missing; install it with apt-get (ripgrep)" >&2; exit 1; }
done
[ -e /usr/include/gssapi/gssapi.h ] || { echo "setup.sh: libkrb5-dev missing (kerberos native build needs gssapi.h)" >&2; exit 1; }

# @vscode/ripgrep downloads rg from GitHub in its postinstall; seed its cache with Debian's rg (also ripgrep 13.0.0).
RG_CACHE="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
mkdir -p "$RG_CACHE"
tar czf "$RG_CACHE/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$(dirname "$(command -v rg)")" rg

mkdir -p "$CS"
cd "$CS"
[ -f package.json ] || npm init -y >/dev/null
# postinstall.sh refuses root without unsafe_perm; node-pty's postinstall runs npx node-gyp, which needs "yes".
npm_config_unsafe_perm=true npm_config_yes=true npm i --no-audit --no-fund "code-server@$VERSION"
XDG_CONFIG_HOME="$(mktemp -d)" node_modules/.bin/code-server --version
