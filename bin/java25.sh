# Sourced by ./attnproof and .ci/run: pick_java_home keeps $JAVA_HOME if it is Java >= 25, else takes the first
# /usr/lib/jvm/*25* JDK, else fails with a message saying what to install.

# The major version of the JDK at $1, or nothing if it is not a JDK.
java_major() {
    local home="$1" version=""
    [ -x "$home/bin/java" ] || return 0
    if [ -r "$home/release" ]; then
        version=$(sed -n 's/^JAVA_VERSION="\([^"]*\)".*/\1/p' "$home/release")
    fi
    if [ -z "$version" ]; then
        version=$("$home/bin/java" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)
    fi
    version=${version#1.}
    printf '%s\n' "${version%%[!0-9]*}"
}

pick_java_home() {
    if [ -n "${JAVA_HOME:-}" ]; then
        local major
        major=$(java_major "$JAVA_HOME")
        if [ -n "$major" ] && [ "$major" -ge 25 ]; then
            return 0
        fi
    fi
    local candidate
    for candidate in /usr/lib/jvm/*25* /usr/lib/jvm/temurin-25*; do
        [ -d "$candidate" ] || continue
        local major
        major=$(java_major "$candidate")
        if [ -n "$major" ] && [ "$major" -ge 25 ]; then
            JAVA_HOME="$candidate"
            return 0
        fi
    done
    echo "attnproof: no Java 25 JDK found: JAVA_HOME=${JAVA_HOME:-<unset>} is not Java >= 25 and no" \
         "/usr/lib/jvm/*25* directory holds one. Install Temurin 25 or point JAVA_HOME at a JDK 25." >&2
    return 1
}

# Run directly (not sourced): print the chosen JDK, as the README's test command uses it:
#   JAVA_HOME="$(bin/java25.sh)" ./mvnw -B verify
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    pick_java_home && printf '%s\n' "$JAVA_HOME"
fi
