#!/usr/bin/env bash
# Installs the peer gateways the benchmark compares Tollgate with, into
# this directory (git-ignored): LiteLLM's proxy into .venv (PyPI
# `litellm[proxy]`) and Portkey's gateway into portkey/ (npm
# `@portkey-ai/gateway`). Needs python3 (with venv) and npm. Idempotent:
# run it again to reinstall at the pinned versions.
#
#   bash bench/peers/install.sh            # both
#   bash bench/peers/install.sh litellm    # one
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
LITELLM_VERSION="${LITELLM_VERSION:-}"
PORTKEY_VERSION="${PORTKEY_VERSION:-}"
which=("${@:-litellm portkey}")

install_litellm() {
    echo "peers: installing litellm[proxy]${LITELLM_VERSION:+==$LITELLM_VERSION} into $here/.venv"
    python3 -m venv "$here/.venv"
    "$here/.venv/bin/pip" install -q --upgrade pip
    "$here/.venv/bin/pip" install -q "litellm[proxy]${LITELLM_VERSION:+==$LITELLM_VERSION}"
    LITELLM_LOCAL_MODEL_COST_MAP=True "$here/.venv/bin/pip" show litellm | head -2
}

install_portkey() {
    echo "peers: installing @portkey-ai/gateway${PORTKEY_VERSION:+@$PORTKEY_VERSION} into $here/portkey"
    mkdir -p "$here/portkey"
    [ -f "$here/portkey/package.json" ] || echo '{"name":"tollgate-bench-peers","private":true}' >"$here/portkey/package.json"
    npm install --prefix "$here/portkey" --no-audit --no-fund --loglevel=error \
        "@portkey-ai/gateway${PORTKEY_VERSION:+@$PORTKEY_VERSION}"
}

for peer in ${which[*]}; do
    case "$peer" in
        litellm) install_litellm ;;
        portkey) install_portkey ;;
        *) echo "peers: unknown peer '$peer' (litellm, portkey)" >&2; exit 2 ;;
    esac
done
