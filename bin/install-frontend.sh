#!/usr/bin/env bash
# Installs what the emulator's C++ front end (native/emu/frontend/cuda2emu.py) needs: Debian's libclang and its
# Python bindings for the system Python (/usr/bin/python3), and clang. Idempotent: does nothing when the bindings
# already load. Uses sudo when not root. For CI images; developers without it get the front end's tests SKIPPED.
set -euo pipefail
if /usr/bin/python3 -c 'import clang.cindex as c; c.Index.create()' 2>/dev/null; then
    echo "install-frontend.sh: libclang's Python bindings already load under /usr/bin/python3"
    exit 0
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-clang libclang-dev clang
/usr/bin/python3 -c 'import clang.cindex as c; c.Index.create()'
echo "install-frontend.sh: libclang's Python bindings installed"
