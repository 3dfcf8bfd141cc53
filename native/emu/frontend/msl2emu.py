#!/usr/bin/python3
"""msl2emu.py: a standard Metal Shading Language source, parsed by libclang, rewritten into host C++20 the emulator
builds, with the kernel table its attributes describe.

Usage: msl2emu.py <in.metal> <out.cpp> [-I dir | -D name[=value]]...
Writes <out.cpp> and <out.cpp>.rewrites.txt (one line per rewrite: file:line: what). Exit 0 on success; 3 with
`file:line: refused: <construct> (<why>)` lines on stderr when the source uses a construct the emulator cannot run
faithfully; 2 with the parse errors when the source does not parse; 4 when libclang is missing (the message says so).
The exit codes are cuda2emu.py's.

The parse is clang's C++17 with msl_parse.h as a forced include: the address spaces and `kernel` are annotations on
the declarations they start, each kernel parameter's [[buffer(n)]] / [[threadgroup(n)]] / position attribute an
annotation on the parameter. Two things C++ cannot say are handled on clang's tokens before the parse (the same
offsets, so every line stays where it was): the `threadgroup` of `[[threadgroup(n)]]` (a keyword macro elsewhere)
becomes `__msl_tgidx`, and the `[[host_name("...")]]` of an explicit instantiation (C++ allows no attribute there)
is read and blanked. What the rewrite changes is only what no header can stand in for (native/README.md, "The MSL
front end"):
  threadgroup T a[N]           -> static ::emu::shared_array<T, (N)> a{"a"} + its bytes against the 32 KiB limit
  threadgroup T s              -> a one-element threadgroup array and a reference to its element
  device/constant/threadgroup T* p (a parameter or a local; also a local pointer initialised from a checked one)
                               -> ::emu::dptr<T> p (bounds checked; race-recorded when it points to threadgroup memory)
  template [[host_name("n")]] kernel ... k<A...>(...);
                               -> blank lines; table entry "n" -> &k<A...>
The generated kernel table (after the source) lists each kernel's parameters with what their attributes say; the
binder (msl_launch.h) binds the host's buffers by index, as Metal does.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REFUSED = "attnproof-refused:"


from frontend_common import die, load_clang, overloaded_decls, splice

ci = load_clang("msl2emu.py")

K = ci.CursorKind
POSITIONS = ["thread_position_in_grid", "threadgroup_position_in_grid", "thread_position_in_threadgroup",
             "thread_index_in_threadgroup", "threads_per_threadgroup", "dispatch_threads_per_threadgroup",
             "threads_per_grid", "threadgroups_per_grid", "simdgroup_index_in_threadgroup",
             "thread_index_in_simdgroup", "threads_per_simdgroup", "thread_execution_width",
             "simdgroups_per_threadgroup", "dispatch_simdgroups_per_threadgroup"]
SPACES = ("device", "constant", "threadgroup")  # the address spaces whose pointers are checked



def annotations(c):
    return [ch.spelling for ch in c.get_children() if ch.kind == K.ANNOTATE_ATTR]


def space_of(c):
    for a in annotations(c):
        if a.startswith("msl:as:"):
            return a[len("msl:as:"):]
    return None


def main(argv):
    if len(argv) < 3:
        die(1, "usage: msl2emu.py <in.metal> <out.cpp> [-I dir | -D name[=value]]...")
    src, out = os.path.abspath(argv[1]), argv[2]
    extra = argv[3:]
    for a in extra:
        if not (a.startswith("-I") or a.startswith("-D")):
            die(1, "msl2emu.py: extra argument %r: only -I<dir> and -D<name>[=<value>] are accepted" % a)
    args = ["-x", "c++", "-std=c++17", "-I", os.path.join(HERE, "include-msl"), "-include",
            os.path.join(HERE, "msl_parse.h")] + extra
    try:
        index = ci.Index.create()
    except Exception as e:  # the bindings without the shared library
        die(4, "msl2emu.py: libclang could not be loaded (%s; bin/install-frontend.sh)" % e)
    raw = open(src, "rb").read()
    rel = os.path.relpath(src)
    if rel.startswith(".."):
        rel = src
    rewrites = []  # (start byte, end byte, replacement, line, what)

    def src_text(start, end):
        return raw[start:end].decode("utf-8")

    def rewrite(start, end, repl, line, what):
        n = src_text(start, end).count("\n")
        rewrites.append((start, end, repl + "\n" * n, line, what))

    # 1. clang's tokens of the unchanged source: [[threadgroup(n)]], [[kernel]] and the [[host_name]] instantiations.
    tu0 = index.parse(src, args=args)
    toks0 = [t for t in tu0.get_tokens(extent=tu0.cursor.extent)
             if t.location.file is not None and os.path.abspath(t.location.file.name) == src]
    sp0 = [t.spelling for t in toks0]
    text = bytearray(raw)  # what the parse (and the build) see: the same bytes at the same offsets
    instantiations = []  # (host name, line, start byte, end byte of `template ... ;`, its token range)
    inside = -1  # the end byte of the instantiation being read: what lies inside is blanked as a whole

    def retoken(a, b, repl, line, what):
        text[a:b] = repl.encode()
        if a >= inside:
            rewrite(a, b, repl, line, what)

    i = 0
    while i < len(toks0):
        s = sp0[i]
        if s == "[" and sp0[i + 1:i + 4] == ["[", "threadgroup", "("]:
            t = toks0[i + 2]
            retoken(t.extent.start.offset, t.extent.end.offset, "__msl_tgidx", t.location.line,
                    "[[threadgroup(n)]] -> [[__msl_tgidx(n)]] (the binding's attribute, not the address space)")
        elif s == "[" and sp0[i + 1:i + 5] == ["[", "kernel", "]", "]"]:
            a, b = toks0[i].extent.start.offset, toks0[i + 4].extent.end.offset
            retoken(a, b, "  kernel  ", toks0[i].location.line, "[[kernel]] -> kernel")
        elif s == "template" and sp0[i + 1:i + 5] == ["[", "[", "host_name", "("]:
            if i + 8 >= len(sp0) or sp0[i + 6:i + 9] != [")", "]", "]"] or not sp0[i + 5].startswith('"'):
                die(2, "%s:%d: error: expected [[host_name(\"name\")]]" % (rel, toks0[i].location.line))
            name = sp0[i + 5][1:-1]
            a, b = toks0[i + 1].extent.start.offset, toks0[i + 8].extent.end.offset
            text[a:b] = b" " * (b - a)
            j = i + 9
            while j < len(sp0) and sp0[j] != ";":
                j += 1
            if j == len(sp0):
                die(2, "%s:%d: error: an explicit instantiation without its ';'" % (rel, toks0[i].location.line))
            instantiations.append((name, toks0[i].location.line, toks0[i].extent.start.offset,
                                   toks0[j].extent.end.offset, i + 9, j))
            inside = toks0[j].extent.end.offset
        i += 1
    parse_text = bytes(text)

    # 2. The parse proper.
    tu = tu0 if parse_text == raw else index.parse(src, args=args, unsaved_files=[(src, parse_text.decode("utf-8"))])

    def in_main(c):
        return c.location.file is not None and os.path.abspath(c.location.file.name) == src

    refusals = set()

    def refused_of(decl):
        # A variable's own annotations (an attribute on it) are reported where they stand, not at each use.
        if decl is None or decl.kind in (K.PARM_DECL, K.VAR_DECL, K.FIELD_DECL):
            return None
        for a in annotations(decl):
            if a.startswith(REFUSED):
                return a[len(REFUSED):]
        if decl.kind in (K.TYPEDEF_DECL, K.TYPE_ALIAS_DECL):
            return refused_of(decl.underlying_typedef_type.get_declaration())
        return None

    def scan(c):
        for ch in c.get_children():
            if not in_main(ch):
                continue
            if ch.kind == K.ANNOTATE_ATTR and ch.spelling.startswith(REFUSED):
                refusals.add((ch.location.line, ch.spelling[len(REFUSED):]))
            elif ch.kind in (K.DECL_REF_EXPR, K.TYPE_REF, K.TEMPLATE_REF, K.CALL_EXPR, K.MEMBER_REF_EXPR,
                             K.OVERLOADED_DECL_REF):
                why = refused_of(ch.referenced)
                if why is None and ch.kind == K.OVERLOADED_DECL_REF:
                    for d in overloaded_decls(ch):
                        why = why or refused_of(d)
                if why is not None:
                    refusals.add((ch.location.line, why))
            elif ch.kind == K.ASM_STMT:
                refusals.add((ch.location.line, "inline asm (the emulator executes no AIR)"))
            scan(ch)

    scan(tu.cursor)
    if refusals:
        die(3, "".join("%s:%d: refused: %s\n" % (rel, line, why) for line, why in sorted(refusals)))
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        die(2, "".join("%s:%d:%d: error: %s\n" % (d.location.file.name if d.location.file else rel,
                                                   d.location.line, d.location.column, d.spelling)
                       for d in errors))

    tokens = [t for t in tu.get_tokens(extent=tu.cursor.extent)
              if t.location.file is not None and os.path.abspath(t.location.file.name) == src]

    def toks(start, end):
        return [t for t in tokens if start <= t.extent.start.offset and t.extent.end.offset <= end]

    checked = set()

    def key(decl):
        return (decl.location.file.name if decl.location.file else "", decl.location.offset)

    def refers_to_checked(c):
        for ch in c.walk_preorder():
            if ch.kind == K.DECL_REF_EXPR and ch.referenced is not None and key(ch.referenced) in checked:
                return True
        return False

    def pointer_to_dptr(decl, what):
        # Every token before the name (the address space, the pointee, the '*') -> ::emu::dptr<pointee>.
        start = decl.extent.start.offset
        name_at = decl.location.offset
        pointee = decl.type.get_pointee().spelling
        rewrite(start, name_at, "::emu::dptr<%s> " % pointee, decl.location.line,
                "%s %s: %s %s -> ::emu::dptr<%s>" % (what, decl.spelling, space_of(decl) or "(derived)",
                                                     decl.type.spelling, pointee))
        checked.add(key(decl))

    def threadgroup_decl(v):
        if space_of(v) != "threadgroup" or v.type.kind == ci.TypeKind.POINTER:
            return False
        name, line = v.spelling, v.location.line
        t = v.type
        start, end = v.extent.start.offset, v.extent.end.offset
        if t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.DEPENDENTSIZEDARRAY):
            elem_t = t.element_type
            if elem_t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.DEPENDENTSIZEDARRAY):
                die(3, "%s:%d: refused: multi-dimensional threadgroup array %s (msl2emu rewrites one-dimensional "
                       "threadgroup arrays only, so index a flat one)\n" % (rel, line, name))
            elem = elem_t.spelling
            ts = toks(start, end)
            spelled = [x.spelling for x in ts]
            if name not in spelled or "[" not in spelled[spelled.index(name):]:
                die(2, "%s:%d: error: cannot find the size of threadgroup %s" % (rel, line, name))
            i = spelled.index(name)
            lb = i + spelled[i:].index("[")
            depth, j = 0, lb
            while j < len(ts):
                depth += {"[": 1, "]": -1}.get(spelled[j], 0)
                if depth == 0:
                    break
                j += 1
            size = src_text(ts[lb].extent.end.offset, ts[j].extent.start.offset).strip()
            decl = "static ::emu::shared_array<%s, (%s)> %s{\"%s\"}; ::emu::declare_shared(\"%s\", (long long)sizeof(%s) * (%s))" % (
                elem, size, name, name, name, elem, size)
            rewrite(start, end, decl, line, "threadgroup %s %s[%s] -> ::emu::shared_array<%s, %s>" %
                    (elem, name, size, elem, size))
            checked.add(key(v))
        else:
            elem = t.spelling
            decl = "static ::emu::shared_array<%s, 1> %s__emu{\"%s\"}; ::emu::declare_shared(\"%s\", (long long)sizeof(%s)); %s& %s = %s__emu.data[0]" % (
                elem, name, name, name, elem, elem, name, name)
            rewrite(start, end, decl, line,
                    "threadgroup %s %s -> a one-element threadgroup array (bounds checked; scalar accesses not "
                    "race-recorded)" % (elem, name))
        return True

    kernels = {}  # name -> (cursor, [(kind, index expr, name)])

    def kernel_params(f):
        params = []
        for p in f.get_children():
            if p.kind != K.PARM_DECL:
                continue
            binding = None
            for a in annotations(p):
                if a.startswith("msl:buffer:"):
                    binding = ("::emu::msl::BUFFER", "(%s)" % a[len("msl:buffer:"):])
                elif a.startswith("msl:threadgroup:"):
                    binding = ("::emu::msl::THREADGROUP", "(%s)" % a[len("msl:threadgroup:"):])
                elif a.startswith("msl:pos:"):
                    binding = ("::emu::msl::POSITION", "::emu::msl::" + a[len("msl:pos:"):])
            if binding is None:
                die(3, "%s:%d: refused: kernel parameter %s without a [[buffer(n)]], [[threadgroup(n)]] or position "
                       "attribute (no binding the emulator knows)\n" % (rel, p.location.line, p.spelling))
            params.append((binding[0], binding[1], p.spelling))
        return params

    def function(f):
        is_kernel = "msl:kernel" in annotations(f)
        for p in f.get_children():
            if p.kind == K.PARM_DECL and p.type.kind == ci.TypeKind.POINTER and p.spelling and \
                    space_of(p) in SPACES:
                pointer_to_dptr(p, "parameter")
        if is_kernel:
            kernels[f.spelling] = (f, kernel_params(f))
        for b in [ch for ch in f.get_children() if ch.kind == K.COMPOUND_STMT]:
            for c in b.walk_preorder():
                if c.kind != K.VAR_DECL or not in_main(c):
                    continue
                if threadgroup_decl(c):
                    continue
                if c.type.kind == ci.TypeKind.POINTER and (space_of(c) in SPACES or refers_to_checked(c)):
                    pointer_to_dptr(c, "local pointer")

    def top(c):
        for ch in c.get_children():
            if not in_main(ch):
                continue
            if ch.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) and ch.is_definition():
                function(ch)
            elif ch.kind == K.VAR_DECL and space_of(ch) == "threadgroup":
                die(3, "%s:%d: refused: program-scope threadgroup variable %s (MSL declares threadgroup storage in "
                       "a kernel)\n" % (rel, ch.location.line, ch.spelling))
            elif ch.kind in (K.NAMESPACE, K.UNEXPOSED_DECL, K.LINKAGE_SPEC):
                top(ch)

    top(tu.cursor)

    # The table: every non-template kernel by its name, every [[host_name]] instantiation by its host name.
    entries = []  # (host name, C++ function expression, kernel name)
    templates = {n for n, (f, _) in kernels.items() if f.kind == K.FUNCTION_TEMPLATE}
    for n, (f, _) in sorted(kernels.items()):
        if f.kind == K.FUNCTION_DECL:
            entries.append((n, "&" + n, n))
    for host, line, a, b, ti, tj in instantiations:
        target = None
        for j in range(ti, tj):
            if sp0[j] in templates and j + 1 < tj and sp0[j + 1] == "<":
                depth, e = 0, j + 1
                while e < tj:
                    depth += {"<": 1, ">": -1, ">>": -2}.get(sp0[e], 0)
                    if depth <= 0:
                        break
                    e += 1
                target = (sp0[j], src_text(toks0[j + 1].extent.start.offset, toks0[e].extent.end.offset))
        if target is None:
            die(2, "%s:%d: error: [[host_name(\"%s\")]] instantiates no kernel template of this file" % (rel, line, host))
        rewrite(a, b, "", line, "template [[host_name(\"%s\")]] %s%s -> kernel table entry \"%s\"" %
                (host, target[0], target[1], host))
        entries.append((host, "&%s%s" % target, target[0]))
    names = [e[0] for e in entries]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        die(2, "%s: error: two kernels named %s" % (rel, ", ".join(dup)))

    body = splice(raw, rewrites, rel)
    with open(out, "w") as f:
        f.write("// Generated by native/emu/frontend/msl2emu.py from %s: do not edit.\n" % rel)
        f.write("#include \"msl_std.h\"\n#line 1 \"%s\"\n" % src)
        f.write(body)
        f.write("\n#line 1 \"%s (msl2emu's kernel table)\"\nnamespace {\n" % rel)
        for n, (fc, params) in sorted(kernels.items()):
            f.write("const ::emu::msl::Param attnproof_params_%s[] = {\n" % n)
            for kind, idx, pname in params:
                f.write("    {%s, %s, \"%s\"},\n" % (kind, idx, pname))
            f.write("};\n")
        f.write("}  // namespace\n\nstatic std::map<std::string, ::emu::Launcher> attnproof_msl_kernels() {\n"
                "    return {\n")
        for host, fn, kname in entries:
            f.write("        {\"%s\", +[](::emu::Args& a, ::emu::dim3 g, ::emu::dim3 b, std::string& e) {\n"
                    "             return ::emu::msl::run(\"%s\", %s, attnproof_params_%s, a, g, b, e); }},\n"
                    % (host, host, fn, kname))
        f.write("    };\n}\n\n#include \"msl_host.h\"\n")
    with open(out + ".rewrites.txt", "w") as f:
        for _, _, _, line, what in rewrites:
            f.write("%s:%d: %s\n" % (rel, line, what))
        for host, fn, kname in entries:
            f.write("%s: kernel table: \"%s\" -> %s (%s)\n" % (rel, host, fn, ", ".join(
                "%s %s%s" % (p[2], {"::emu::msl::BUFFER": "buffer", "::emu::msl::THREADGROUP": "threadgroup"}.get(
                    p[0], ""), p[1].replace("::emu::msl::", "")) for p in kernels[kname][1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
