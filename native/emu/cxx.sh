# Sourced by build.sh and frontend/build-{cu,metal}.sh: the C++ compiler of an emulated build and its own flags.

# $CXX when set; else, for a build at -O0 (the tests' and the mutant campaign's builds, which exist for compile
# speed), clang++ where it is installed (bin/install-frontend.sh installs it with libclang): it compiles these
# sources at -O0 much faster than g++. Else g++. OptLevelBitsTest holds such a build's lanes to the -O2 lanes' bits.
emu_cxx() { # <optimisation level>
    if [ -n "${CXX:-}" ]; then
        echo "$CXX"
    elif [ "$1" = 0 ] && command -v clang++ >/dev/null 2>&1; then
        echo clang++
    else
        echo g++
    fi
}

# Whether the compiler is clang, from its --version (a name says nothing: macOS's g++ is clang). Each --version costs
# a tenth of a second, and the tests and the mutant campaign run these scripts a hundred times, so a script asks once
# per compiler: emu_probe (not in a subshell) keeps the answer for the subshells it forks.
emu_clang_of="" # "|compiler=yes|compiler=no|...": bash 3.2 (macOS) has no associative arrays
emu_probe() { # <compiler>
    case "$emu_clang_of" in *"|$1="*) return 0 ;; esac
    if "$1" --version 2>/dev/null | grep -qi clang; then emu_clang_of+="|$1=yes"; else emu_clang_of+="|$1=no"; fi
}
emu_is_clang() { # <compiler>
    emu_probe "$1"
    case "$emu_clang_of" in *"|$1=yes"*) return 0 ;; *) return 1 ;; esac
}

# The compiler's own flags. g++: -fno-gnu-unique keeps each library's statics its own when several (a mutant's too)
# are loaded in one JVM. clang never makes STB_GNU_UNIQUE symbols, has no such flag, and warns on the MSL attributes
# that g++ ignores silently.
emu_cxx_flags() { # <compiler>
    if emu_is_clang "$1"; then
        echo "-Wno-unknown-attributes"
    else
        echo "-Wno-attributes -fno-gnu-unique"
    fi
}

# -Werror where the project's own sources are built with g++, the compiler whose warnings they are written against.
emu_cxx_werror() { # <compiler>
    if ! emu_is_clang "$1"; then
        echo "-Werror"
    fi
}
