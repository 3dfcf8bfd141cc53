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

# The compiler's own flags. g++: -fno-gnu-unique keeps each library's statics its own when several (a mutant's too)
# are loaded in one JVM. clang never makes STB_GNU_UNIQUE symbols, has no such flag, and warns on the MSL attributes
# that g++ ignores silently.
emu_cxx_flags() { # <compiler>
    if "$1" --version 2>/dev/null | grep -qi clang; then
        echo "-Wno-unknown-attributes"
    else
        echo "-Wno-attributes -fno-gnu-unique"
    fi
}

# -Werror where the project's own sources are built with g++, the compiler whose warnings they are written against.
emu_cxx_werror() { # <compiler>
    if ! "$1" --version 2>/dev/null | grep -qi clang; then
        echo "-Werror"
    fi
}
