#!/usr/bin/env bash
# Installs what the emulator's front ends (native/emu/frontend/cuda2emu.py, msl2emu.py) need to build the emulated
# lanes: Debian's libclang and its Python bindings for the system Python (/usr/bin/python3), and clang. Idempotent:
# does nothing when the bindings already load under $ATTNPROOF_PYTHON (default /usr/bin/python3), e.g. a venv with
# PyPI's libclang on macOS. Uses sudo when not root. Run by the build (system-under-test's pom) and by .ci/run.
set -euo pipefail
py="${ATTNPROOF_PYTHON:-/usr/bin/python3}"
if "$py" -c 'import clang.cindex as c; c.Index.create()' 2>/dev/null; then
    echo "install-frontend.sh: libclang's Python bindings already load under $py"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-frontend.sh: libclang's Python bindings do not load under $py and there is no apt-get here:" \
        "install them (Debian: python3-clang; elsewhere PyPI's libclang in a venv) and set ATTNPROOF_PYTHON" >&2
    exit 4
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-clang libclang-dev clang
/usr/bin/python3 -c 'import clang.cindex as c; c.Index.create()'
echo "install-frontend.sh: libclang's Python bindings installed"
