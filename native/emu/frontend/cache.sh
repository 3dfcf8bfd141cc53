# Sourced by build-cu.sh and build-metal.sh: a content-addressed cache of their outputs, on when ATTNPROOF_BUILD_CACHE
# names a folder (the Maven build sets it for its tests: system-under-test's and conformance's tests and the mutant
# campaign's unchanged kernels build the same sources with the same flags, each into its own folder).
#
# The key is everything a build reads: the script, the name and compiler flags it was given, the source's path (the
# generated C++ names it in #line, so a fault message does too), the bytes of every file in the source's folder and
# in each -I folder given (what it may include), the emulator and front end in use by path and by the bytes of every
# file (a mutant's patched copy is its own key), the optimisation level, and the compiler (whose system headers it
# reads) and Python by path, size and time. The output folder is not in it: a library's bytes do not depend on it
# (only the generated file's base name is in its symbol table, and that is the name). Nor is libclang (the
# translator's parser): the cache lives in the build's target/, so a libclang upgrade wants a `mvn clean`.

emu_sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum; else shasum -a 256; fi; }

# Every file under <folder> (a Python cache aside): names and sizes, then bytes, in one stream to hash.
emu_tree() { # <folder>
    local list
    list="$(mktemp)"
    (cd "$1" && find . -type f ! -path '*/__pycache__/*' -print0 | LC_ALL=C sort -z > "$list"
        xargs -0 wc -c < "$list"; xargs -0 cat < "$list")
    rm -f "$list"
}

emu_cache_key() { # <script> <source> <name> [flags...]
    local emu_root src c py
    emu_root="$(cd "$here/.." && pwd)"
    src="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
    c="$(command -v "$cxx")"
    py="$(command -v "${ATTNPROOF_PYTHON:-/usr/bin/python3}")"
    {
        printf '%s\0' "$@" "opt=$opt" "$src" "$emu_root" "$(ls -lLn "$c")" "$(ls -lLn "$py")"
        emu_tree "$emu_root"
        # What the source may include: its own folder (the translator parses it there) and each -I folder given.
        emu_tree "$(dirname "$src")"
        local a next=""
        for a in "$@"; do
            if [ -n "$next" ]; then emu_tree "$a"; next=""; continue; fi
            case "$a" in -I) next=1 ;; -I?*) emu_tree "${a#-I}" ;; esac
        done
    } | emu_sha256 | cut -c1-40
}

# Copies the cached outputs of <key> into <out> (each through a temporary name, then renamed); fails on a miss.
emu_cache_get() { # <key> <out> <files...>
    local entry="$ATTNPROOF_BUILD_CACHE/$1" out="$2" f
    shift 2
    [ -f "$entry/complete" ] || return 1
    for f in "$@"; do
        cp "$entry/$f" "$out/$f.tmp.$$" && mv -f "$out/$f.tmp.$$" "$out/$f" || return 1
    done
}

# Stores <files> of <out> under <key>. The entry's mkdir is the lock (when two builds race, the first keeps it) and
# its `complete` file, written last, what a reader waits for, so a concurrent build never reads half an entry.
emu_cache_put() { # <key> <out> <files...>
    local entry="$ATTNPROOF_BUILD_CACHE/$1" out="$2" f
    shift 2
    mkdir -p "$ATTNPROOF_BUILD_CACHE"
    mkdir "$entry" 2>/dev/null || return 0
    for f in "$@"; do cp "$out/$f" "$entry/$f"; done
    touch "$entry/complete"
}
