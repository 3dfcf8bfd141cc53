#!/usr/bin/python3
"""cuda2emu.py: a standard CUDA C++ source, parsed by libclang, rewritten into host C++20 the emulator builds.

Usage: cuda2emu.py <in.cu> <out.cpp> [-I dir | -D name[=value]]...
Writes <out.cpp> and <out.cpp>.rewrites.txt (one line per rewrite: file:line: what). Exit 0 on success; 3 with
`file:line: refused: <construct> (<why>)` lines on stderr when the source uses a construct the emulator cannot run
faithfully; 2 with the parse errors when the source does not parse; 4 when libclang is missing (the message says so).

The parse is clang's CUDA mode, host side (-x cuda --cuda-host-only -nocudainc -nocudalib), with cuda_parse.h as a
forced include: `k<<<...>>>(...)` is only C++ there, and `__shared__`, `__global__`, `__device__` are attributes the
AST carries. What the rewrite changes is only what no header can stand in for (native/README.md, "The front end"):
  __shared__ T a[N]            -> static ::emu::shared_array<T, (N)> a{"a"}  (checked, race-recorded; block scope
                                  also declares its bytes against the static shared-memory limit)
  __shared__ T s               -> a one-element shared array and a reference to its element
  extern __shared__ T a[]      -> static ::emu::dyn_shared_array<T> a{"a"}  (sized by the launch's dynamic bytes)
  T* p (parameter of a __global__/__device__ function, or a local pointer of one initialised from a checked pointer
       or shared array)        -> ::emu::dptr<T> p  (bounds checked against its allocation)
  k<<<g, b, s, st>>>(args)     -> ::emu::cuda_launch(...): an emulated launch, template arguments deduced by clang
                                  written out, every argument converted once (a pointer: looked up among the
                                  registered allocations)
Every replacement keeps the line count, and the output starts with `#line 1 "<in.cu>"`: compiler errors, deadlock
reports and bounds faults name the original file's lines.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REFUSED = "attnproof-refused:"


from frontend_common import die, load_clang, overloaded_decls, splice

ci = load_clang("cuda2emu.py")

K = ci.CursorKind



def main(argv):
    if len(argv) < 3:
        die(1, "usage: cuda2emu.py <in.cu> <out.cpp> [-I dir | -D name[=value]]...")
    src, out = os.path.abspath(argv[1]), argv[2]
    extra = argv[3:]
    for a in extra:
        if not (a.startswith("-I") or a.startswith("-D")):
            die(1, "cuda2emu.py: extra argument %r: only -I<dir> and -D<name>[=<value>] are accepted" % a)
    args = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "-std=c++17", "-Wno-unknown-cuda-version",
            "-I", os.path.join(HERE, "include"), "-include", os.path.join(HERE, "cuda_parse.h")] + extra
    try:
        index = ci.Index.create()
    except Exception as e:  # the bindings without the shared library
        die(4, "cuda2emu.py: libclang could not be loaded (%s; bin/install-frontend.sh)" % e)
    tu = index.parse(src, args=args, options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    text = open(src, "rb").read().decode("utf-8")
    rel = os.path.relpath(src)
    if rel.startswith(".."):
        rel = src

    def in_main(c):
        return c.location.file is not None and os.path.abspath(c.location.file.name) == src

    # 1. Refusals: before the parse errors (a refused construct may also be what does not parse).
    refusals = set()

    def refused_of(decl):
        if decl is None:
            return None
        for ch in decl.get_children():
            if ch.kind == K.ANNOTATE_ATTR and ch.spelling.startswith(REFUSED):
                return ch.spelling[len(REFUSED):]
        return None

    def scan(c):
        for ch in c.get_children():
            if not in_main(ch):
                continue
            if ch.kind == K.ASM_STMT:
                refusals.add((ch.location.line, "inline asm (PTX the emulator does not execute)"))
            elif ch.kind in (K.DECL_REF_EXPR, K.TYPE_REF, K.TEMPLATE_REF, K.CALL_EXPR, K.MEMBER_REF_EXPR,
                             K.OVERLOADED_DECL_REF):
                why = refused_of(ch.referenced)
                if why is None and ch.kind == K.OVERLOADED_DECL_REF:
                    for d in overloaded_decls(ch):
                        why = why or refused_of(d)
                if why is not None:
                    refusals.add((ch.location.line, why))
            scan(ch)

    scan(tu.cursor)
    if refusals:
        die(3, "".join("%s:%d: refused: %s\n" % (rel, line, why) for line, why in sorted(refusals)))
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        die(2, "".join("%s:%d:%d: error: %s\n" % (d.location.file.name if d.location.file else rel,
                                                   d.location.line, d.location.column, d.spelling)
                       for d in errors))

    # Byte offsets -> character offsets (the source may hold non-ASCII comments).
    raw = open(src, "rb").read()

    def ch_off(byte_off):
        return len(raw[:byte_off].decode("utf-8"))

    tokens = [t for t in tu.get_tokens(extent=tu.cursor.extent)
              if t.location.file is not None and os.path.abspath(t.location.file.name) == src]

    def toks(start, end):
        return [t for t in tokens if start <= t.extent.start.offset and t.extent.end.offset <= end]

    def src_text(start, end):
        return raw[start:end].decode("utf-8")

    rewrites = []  # (start byte, end byte, replacement, line, what)

    def rewrite(start, end, repl, line, what):
        n = src_text(start, end).count("\n")
        rewrites.append((start, end, repl + "\n" * n, line, what))

    checked = set()  # (file offset of the declaration) of every checked pointer or shared array

    def key(decl):
        return (decl.location.file.name if decl.location.file else "", decl.location.offset)

    def refers_to_checked(c):
        for ch in c.walk_preorder():
            if ch.kind == K.DECL_REF_EXPR and ch.referenced is not None and key(ch.referenced) in checked:
                return True
        return False

    def pointer_to_dptr(decl, what):
        # Replace the declared type (every token before the name) by ::emu::dptr<pointee>.
        start = decl.extent.start.offset
        name_at = decl.location.offset
        pointee = decl.type.get_pointee().spelling
        rewrite(start, name_at, "::emu::dptr<%s> " % pointee, decl.location.line,
                "%s %s: %s -> ::emu::dptr<%s>" % (what, decl.spelling, decl.type.spelling, pointee))
        checked.add(key(decl))

    def is_device_fn(f):
        kinds = {ch.kind for ch in f.get_children()}
        return K.CUDAGLOBAL_ATTR in kinds or K.CUDADEVICE_ATTR in kinds

    def shared_decl(v):
        kinds = [ch.kind for ch in v.get_children()]
        if K.CUDASHARED_ATTR not in kinds:
            return False
        ts = toks(v.extent.start.offset, v.extent.end.offset)
        name, line = v.spelling, v.location.line
        file_scope = v.semantic_parent is not None and v.semantic_parent.kind in (K.TRANSLATION_UNIT, K.NAMESPACE)
        t = v.type
        start, end = v.extent.start.offset, v.extent.end.offset
        if t.kind == ci.TypeKind.INCOMPLETEARRAY:
            elem = t.element_type.spelling
            rewrite(start, end, "static ::emu::dyn_shared_array<%s> %s{\"%s\"}" % (elem, name, name), line,
                    "extern __shared__ %s %s[] -> ::emu::dyn_shared_array<%s> (sized by the launch)" % (elem, name, elem))
        elif t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.DEPENDENTSIZEDARRAY):
            elem_t = t.element_type
            if elem_t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.DEPENDENTSIZEDARRAY):
                die(3, "%s:%d: refused: multi-dimensional __shared__ array %s (cuda2emu rewrites one-dimensional "
                       "shared arrays only; index a flat one)\n" % (rel, line, name))
            elem = elem_t.spelling
            spelled = [x.spelling for x in ts]
            if name not in spelled or "[" not in spelled[spelled.index(name):]:
                die(2, "%s:%d: error: cannot find the size of __shared__ %s" % (rel, line, name))
            i = spelled.index(name)
            lb = i + spelled[i:].index("[")
            depth, j = 0, lb
            while j < len(ts):
                depth += {"[": 1, "]": -1}.get(spelled[j], 0)
                if depth == 0:
                    break
                j += 1
            size = src_text(ts[lb].extent.end.offset, ts[j].extent.start.offset).strip()
            decl = "static ::emu::shared_array<%s, (%s)> %s{\"%s\"}" % (elem, size, name, name)
            if not file_scope:
                decl += "; ::emu::declare_shared(\"%s\", (long long)sizeof(%s) * (%s))" % (name, elem, size)
            rewrite(start, end, decl, line, "__shared__ %s %s[%s] -> ::emu::shared_array<%s, %s>%s" %
                    (elem, name, size, elem, size, "" if not file_scope else " (file scope: not counted against the limit)"))
        else:
            elem = t.spelling
            decl = "static ::emu::shared_array<%s, 1> %s__emu{\"%s\"}; %s& %s = %s__emu.data[0]" % (
                elem, name, name, elem, name, name)
            rewrite(start, end, decl, line,
                    "__shared__ %s %s -> a one-element shared array (bounds checked; scalar accesses not race-recorded)"
                    % (elem, name))
            return True
        checked.add(key(v))
        return True

    def function(f):
        for p in f.get_children():
            if p.kind == K.PARM_DECL and p.type.kind == ci.TypeKind.POINTER and p.spelling:
                pointer_to_dptr(p, "parameter")
        body = [ch for ch in f.get_children() if ch.kind == K.COMPOUND_STMT]
        for b in body:
            for c in b.walk_preorder():
                if c.kind != K.VAR_DECL or not in_main(c):
                    continue
                if shared_decl(c):
                    continue
                if c.type.kind == ci.TypeKind.POINTER and refers_to_checked(c):
                    pointer_to_dptr(c, "local pointer")

    def launches(c):
        for ch in c.get_children():
            if not in_main(ch):
                continue
            kids = list(ch.get_children())
            if ch.kind == K.CALL_EXPR and len(kids) >= 2 and kids[1].kind == K.CALL_EXPR and \
                    kids[1].spelling == "__cudaPushCallConfiguration":
                launch(ch, kids)
            launches(ch)

    def split_top(ts, open_i, close_i):
        # Comma-separated pieces between ts[open_i] and ts[close_i] (exclusive), as (start, end) byte offsets.
        parts, depth, s = [], 0, None
        for j in range(open_i + 1, close_i):
            sp = ts[j].spelling
            if sp in ("(", "[", "{", "<<<"):
                depth += 1
            elif sp in (")", "]", "}", ">>>"):
                depth -= 1
            if sp == "," and depth == 0:
                parts.append((s, ts[j - 1].extent.end.offset))
                s = None
                continue
            if s is None:
                s = ts[j].extent.start.offset
        if s is not None:
            parts.append((s, ts[close_i - 1].extent.end.offset))
        return parts

    def launch(call, kids):
        ts = toks(call.extent.start.offset, call.extent.end.offset)
        sp = [t.spelling for t in ts]
        line = call.location.line
        o = sp.index("<<<")
        c = sp.index(">>>")
        config = [src_text(a, b) for a, b in split_top(ts, o, c)]
        if not 2 <= len(config) <= 4:
            die(2, "%s:%d: error: a launch configuration takes 2 to 4 values, this one has %d" % (rel, line, len(config)))
        grid, block = config[0], config[1]
        smem = config[2] if len(config) > 2 else "0"
        stream = config[3] if len(config) > 3 else "nullptr"
        callee = src_text(ts[0].extent.start.offset, ts[o - 1].extent.end.offset).strip()
        ref = call.referenced
        names = []
        if ref is not None:
            names = [a.spelling for a in ref.get_arguments()]
            n = ref.get_num_template_arguments()
            if n > 0 and "<" not in callee:
                targs = []
                for i in range(n):
                    kind = ref.get_template_argument_kind(i)
                    if kind == ci.TemplateArgumentKind.INTEGRAL:
                        targs.append(str(ref.get_template_argument_value(i)))
                    else:
                        targs.append(ref.get_template_argument_type(i).spelling)
                callee = "%s<%s>" % (callee, ", ".join(targs))
        if not names:  # a dependent launch (inside a template): the parameter names of the kernel template
            for d in kids[0].walk_preorder():
                r = d.referenced if d.kind == K.DECL_REF_EXPR else (
                    (overloaded_decls(d) or [None])[0] if d.kind == K.OVERLOADED_DECL_REF else None)
                if r is not None and r.kind in (K.FUNCTION_TEMPLATE, K.FUNCTION_DECL):
                    names = [p.spelling for p in r.get_children() if p.kind == K.PARM_DECL]
                    break
        if sp[c + 1] != "(" or sp[-1] != ")":
            die(2, "%s:%d: error: cannot read the arguments of this launch" % (rel, line))
        args = [src_text(a, b) for a, b in split_top(ts, c + 1, len(ts) - 1)]
        conv = []
        for i, a in enumerate(args):
            pname = names[i] if i < len(names) and names[i] else "arg%d" % i
            conv.append("::emu::arg(%s, \"%s\")" % (a, pname))
        repl = "::emu::cuda_launch(\"%s\", (const void*)&%s, %s, %s, %s, %s, [](auto... a_) { %s(a_...); }%s)" % (
            callee.replace('"', "'"), callee, grid, block, smem, stream, callee,
            "".join(", " + x for x in conv))
        rewrite(call.extent.start.offset, call.extent.end.offset, repl, line,
                "launch %s<<<%s>>> -> ::emu::cuda_launch" % (callee, ", ".join([grid, block, smem, stream])))

    def top(c):
        for ch in c.get_children():
            if not in_main(ch):
                continue
            if ch.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) and is_device_fn(ch):
                function(ch)
            elif ch.kind == K.VAR_DECL:
                shared_decl(ch)
            elif ch.kind in (K.NAMESPACE, K.UNEXPOSED_DECL, K.LINKAGE_SPEC):
                top(ch)

    top(tu.cursor)
    launches(tu.cursor)

    body = splice(raw, rewrites, rel)
    with open(out, "w") as f:
        f.write("// Generated by native/emu/frontend/cuda2emu.py from %s: do not edit.\n" % rel)
        # The source's own functions (its extern "C" launchers) keep default visibility, as nvcc's do.
        f.write("#include \"cuda_std.h\"\n#pragma GCC visibility push(default)\n#line 1 \"%s\"\n" % src)
        f.write(body)
    with open(out + ".rewrites.txt", "w") as f:
        for _, _, _, line, what in rewrites:
            f.write("%s:%d: %s\n" % (rel, line, what))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
