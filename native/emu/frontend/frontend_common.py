"""What cuda2emu.py and msl2emu.py share: exit codes, libclang's bindings, and splicing the rewrites into the text."""
import sys


def die(code, msg):
    sys.stderr.write(msg + ("" if msg.endswith("\n") else "\n"))
    sys.exit(code)


def load_clang(tool):
    """clang.cindex, or exit 4 naming the tool and what to install."""
    try:
        import clang.cindex as ci
    except ImportError:
        die(4, "%s: libclang's Python bindings are not installed (python3-clang; bin/install-frontend.sh)" % tool)
    return ci


def overloaded_decls(c):
    """The declarations an OVERLOADED_DECL_REF names (the bindings expose no method for it)."""
    import clang.cindex as ci
    lib = ci.conf.lib
    return [lib.clang_getOverloadedDecl(c, i) for i in range(lib.clang_getNumOverloadedDecls(c))]


def splice(raw, rewrites, rel):
    """raw (bytes) with every (start, end, replacement, line, what) applied; overlapping rewrites are an error (2)."""
    rewrites.sort()
    for a, b in zip(rewrites, rewrites[1:]):
        if a[1] > b[0]:
            die(2, "%s:%d: error: overlapping rewrites (%s / %s)" % (rel, b[3], a[4], b[4]))
    pieces, at = [], 0
    for start, end, repl, _, _ in rewrites:
        pieces.append(raw[at:start].decode("utf-8"))
        pieces.append(repl)
        at = end
    pieces.append(raw[at:].decode("utf-8"))
    return "".join(pieces)
