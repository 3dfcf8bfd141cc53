package io.attnproof.conformance.kernel;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.attnproof.conformance.cases.CaseException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A kernel adapter ({@code attnproof kernel --adapter FILE}, format {@value #FORMAT}, docs/conformance.md "Judge your
 * kernels"): how attnproof calls a user's own kernels unchanged. It names the sources, the dtypes and head dims the
 * kernels support (the envelope: other cases are SKIP with the reason), the mask policy, and one entry point per case
 * layout (dense, varlen) with every argument in order: a tensor (q, k, v, sinks, out, mask) with its dtype and layout,
 * a cu_seqlens array, a scalar the case gives, or a stream. Every field is checked; a bad one is one line naming the
 * file, the field, the value and the rule ({@link CaseException}: exit 2).
 */
public record Adapter(Path file, String name, String language, List<Path> sources, Map<String, String> dtypes,
        List<Integer> headDims, long noWindow, String maskPolicy, String maskRoute, List<Entry> entries) {

    /** The format tag an adapter must carry. */
    public static final String FORMAT = "attnproof-kernel-adapter/1";
    /** Case layouts an entry serves. */
    public static final List<String> CASES = List.of("dense", "varlen");
    /** Tensors an argument may carry. */
    public static final List<String> TENSORS = List.of("q", "k", "v", "sinks", "out", "mask");
    /** Scalars the case gives. */
    public static final List<String> SCALARS = List.of("batch", "sequences", "q_heads", "kv_heads", "q_len", "kv_len",
            "max_q", "max_k", "total_q", "total_k", "head_dim", "window", "scale");
    static final List<String> DTYPES = List.of("F32", "F16", "BF16");

    /** One argument of an entry point, in call (CUDA) or buffer (Metal) order. */
    public record Arg(String role, String what, String dtype, String layout, String noSinks) {
        /** Whether the argument is passed as a pointer. */
        public boolean pointer() {
            return !role.equals("scalar");
        }
    }

    /**
     * One entry point: the cases it serves, the symbol ({@code {dtype}} replaced by the adapter's name for the case's
     * dtype; for Metal the first dispatch's kernel), what it returns, its arguments (for Metal: every tensor any
     * dispatch binds). Metal entries also carry {@code when} (a condition on the case's scalars; null: every case of
     * the layout), the {@code params} struct bound with setBytes, the {@code intermediates} (float buffers the host
     * allocates, sized by expressions) and the {@code dispatches} the host encodes in order.
     */
    public record Entry(String cases, String symbol, String returns, List<Arg> args, JsonNode when, List<Arg> params,
            Map<String, JsonNode> intermediates, List<Dispatch> dispatches) {
        /** The argument carrying {@code tensor}, or null. */
        public Arg tensor(String tensor) {
            return args.stream().filter(a -> a.role().equals("tensor") && a.what().equals(tensor)).findFirst()
                    .orElse(null);
        }
    }

    /**
     * One Metal dispatch: the kernel by [[host_name]] ({@code {dtype}} replaced), threadgroups per grid and threads per
     * threadgroup (expressions over the scalars: an integer, a scalar name, or {"ceil_div"|"mul"|"add": [a, b]}), the
     * bytes of each [[threadgroup(i)]] buffer, and the buffers by [[buffer(n)]] index: a tensor, an intermediate, the
     * params struct, a cu_seqlens array or a scalar (setBytes).
     */
    public record Dispatch(String kernel, List<JsonNode> grid, List<JsonNode> threadgroup,
            List<JsonNode> threadgroupMemory, List<Arg> buffers) {
    }

    /** The entry serving {@code cases} ("dense" or "varlen") first, or null. */
    public Entry entry(String cases) {
        return entries.stream().filter(e -> e.cases().equals(cases)).findFirst().orElse(null);
    }

    /** The first entry of the case's layout whose {@code when} holds for it, or null. */
    public Entry entryFor(io.attnproof.conformance.cases.SinksCase c) {
        String cases = c.varlen() ? "varlen" : "dense";
        return entries.stream().filter(e -> e.cases().equals(cases) && (e.when() == null || holds(e.when(), c)))
                .findFirst().orElse(null);
    }

    /** The value of an expression (checked when the adapter was read) for a case. */
    public long eval(JsonNode e, io.attnproof.conformance.cases.SinksCase c) {
        if (e.isIntegralNumber()) {
            return e.asLong();
        }
        if (e.isTextual()) {
            return KernelLibrary.scalar(this, e.asText(), c);
        }
        String op = e.fieldNames().next();
        long a = eval(e.get(op).get(0), c);
        long b = eval(e.get(op).get(1), c);
        return switch (op) {
            case "ceil_div" -> {
                if (b <= 0) {
                    throw new IllegalArgumentException(file + ": " + e + ": ceil_div by " + b + " (must be positive)");
                }
                yield (a + b - 1) / b;
            }
            case "mul" -> Math.multiplyExact(a, b);
            default -> Math.addExact(a, b);
        };
    }

    /** Whether a condition (checked when the adapter was read) holds for a case. */
    public boolean holds(JsonNode cond, io.attnproof.conformance.cases.SinksCase c) {
        String op = cond.fieldNames().next();
        JsonNode ab = cond.get(op);
        if (op.equals("all")) {
            for (JsonNode x : ab) {
                if (!holds(x, c)) {
                    return false;
                }
            }
            return true;
        }
        long a = eval(ab.get(0), c);
        long b = eval(ab.get(1), c);
        return switch (op) {
            case "eq" -> a == b;
            case "ne" -> a != b;
            case "lt" -> a < b;
            case "le" -> a <= b;
            case "gt" -> a > b;
            default -> a >= b;
        };
    }

    /** Condition operators of {@code when}. */
    public static final List<String> CONDITIONS = List.of("eq", "ne", "lt", "le", "gt", "ge");

    private static final ObjectMapper JSON = new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    /**
     * Reads and checks an adapter.
     *
     * @throws CaseException naming the file, the field, the value and the rule
     */
    public static Adapter read(Path file) {
        JsonNode root;
        try {
            root = JSON.readTree(Files.readString(file, StandardCharsets.UTF_8));
        } catch (NoSuchFileException e) {
            throw new CaseException(file, null, "no such adapter file");
        } catch (JsonProcessingException e) {
            throw new CaseException(file, null, "malformed JSON: " + e.getOriginalMessage() + " at line "
                    + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr());
        } catch (IOException e) {
            throw new CaseException(file, null, "cannot read: " + e);
        }
        return new Reader(file).adapter(root);
    }

    /** The field-by-field reader: every rule in one place, each failure naming field, value and rule. */
    private record Reader(Path file) {
        CaseException bad(String field, JsonNode value, String rule) {
            return new CaseException(file, field, (value == null || value.isMissingNode() ? "missing" : value.toString())
                    + ": " + rule);
        }

        void only(JsonNode o, String where, Set<String> allowed) {
            for (Iterator<String> it = o.fieldNames(); it.hasNext();) {
                String f = it.next();
                if (!allowed.contains(f)) {
                    throw bad(where.isEmpty() ? f : where + "." + f, o.get(f), "not a field of " + (where.isEmpty()
                            ? "an adapter" : where) + " (fields: " + String.join(", ", allowed) + ")");
                }
            }
        }

        String text(JsonNode o, String field, String where, List<String> oneOf) {
            JsonNode v = o.path(field);
            String name = where.isEmpty() ? field : where + "." + field;
            if (!v.isTextual() || v.asText().isBlank()) {
                throw bad(name, v, "must be " + (oneOf == null ? "non-blank text" : "one of " + oneOf));
            }
            if (oneOf != null && !oneOf.contains(v.asText())) {
                throw bad(name, v, "must be one of " + oneOf);
            }
            return v.asText();
        }

        Adapter adapter(JsonNode root) {
            if (!root.isObject()) {
                throw bad("(root)", root, "an adapter is a JSON object");
            }
            only(root, "", Set.of("format", "name", "language", "sources", "dtypes", "head_dims", "no_window", "mask",
                    "entry_points", "description"));
            text(root, "format", "", List.of(FORMAT));
            String name = text(root, "name", "", null);
            if (!name.matches("[A-Za-z0-9._+-]+")) {
                throw bad("name", root.get("name"), "use letters, digits and . _ + - only (it names the ledger column)");
            }
            String language = text(root, "language", "", List.of("cuda", "metal"));
            List<Path> sources = new ArrayList<>();
            JsonNode src = root.path("sources");
            if (!src.isArray() || src.isEmpty()) {
                throw bad("sources", src, "must be a non-empty array of source files (relative to the adapter)");
            }
            if (src.size() != 1) {
                throw bad("sources", src, "a " + (language.equals("cuda") ? "CUDA" : "Metal") + " adapter names one"
                        + " translation unit (the emulator's runtime, its allocations and its checks live in one"
                        + " library); headers it includes sit beside it");
            }
            Path base = file.toAbsolutePath().getParent();
            for (int i = 0; i < src.size(); i++) {
                if (!src.get(i).isTextual()) {
                    throw bad("sources[" + i + "]", src.get(i), "must be a file name");
                }
                Path p = base.resolve(src.get(i).asText()).normalize();
                if (!Files.isRegularFile(p)) {
                    throw bad("sources[" + i + "]", src.get(i), "no such file " + p);
                }
                String want = language.equals("cuda") ? ".cu" : ".metal";
                if (!p.toString().endsWith(want)) {
                    throw bad("sources[" + i + "]", src.get(i), "a " + language + " source ends in " + want);
                }
                sources.add(p);
            }
            JsonNode dt = root.path("dtypes");
            if (!dt.isObject() || dt.isEmpty()) {
                throw bad("dtypes", dt, "must map each supported dtype (F32, F16, BF16) to its {dtype} token in the"
                        + " symbols, e.g. {\"F32\": \"f32\"}");
            }
            Map<String, String> dtypes = new LinkedHashMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = dt.fields(); it.hasNext();) {
                var e = it.next();
                if (!DTYPES.contains(e.getKey())) {
                    throw bad("dtypes." + e.getKey(), e.getValue(), "the dtype must be one of " + DTYPES);
                }
                if (!e.getValue().isTextual() || !e.getValue().asText().matches("[A-Za-z0-9_]*")) {
                    throw bad("dtypes." + e.getKey(), e.getValue(), "must be a symbol fragment (letters, digits, _)");
                }
                dtypes.put(e.getKey(), e.getValue().asText());
            }
            JsonNode hd = root.path("head_dims");
            if (!hd.isArray() || hd.isEmpty()) {
                throw bad("head_dims", hd, "must be a non-empty array of the supported head dims");
            }
            List<Integer> headDims = new ArrayList<>();
            for (int i = 0; i < hd.size(); i++) {
                if (!hd.get(i).isInt() || hd.get(i).asInt() < 1 || hd.get(i).asInt() > 4096) {
                    throw bad("head_dims[" + i + "]", hd.get(i), "must be an integer in [1, 4096]");
                }
                headDims.add(hd.get(i).asInt());
            }
            JsonNode nw = root.path("no_window");
            if (!nw.isMissingNode() && !nw.isIntegralNumber()) {
                throw bad("no_window", nw, "must be the integer the kernel takes as \"no window\" (default 0)");
            }
            long noWindow = nw.isMissingNode() ? 0 : nw.asLong();
            JsonNode mask = root.path("mask");
            if (!mask.isObject()) {
                throw bad("mask", mask, "must be {\"policy\": \"takes\"|\"refuses\"|\"none\", \"route\": \"where the"
                        + " host sends masked calls\"}");
            }
            only(mask, "mask", Set.of("policy", "route"));
            String policy = text(mask, "policy", "mask", List.of("takes", "refuses", "none"));
            String route = mask.path("route").isTextual() ? mask.path("route").asText() : null;
            if (!policy.equals("takes") && (route == null || route.isBlank())) {
                throw bad("mask.route", mask.path("route"), "a kernel that " + (policy.equals("none")
                        ? "has no mask parameter" : "refuses masks") + " must say where the host routes masked calls"
                        + " (the SKIP reason of every masked case)");
            }
            JsonNode eps = root.path("entry_points");
            if (!eps.isArray() || eps.isEmpty()) {
                throw bad("entry_points", eps, "must be a non-empty array (one entry per case layout: dense, varlen)");
            }
            List<Entry> entries = new ArrayList<>();
            Set<String> served = new LinkedHashSet<>();
            for (int i = 0; i < eps.size(); i++) {
                Entry e = entry(eps.get(i), "entry_points[" + i + "]", language, policy);
                // An entry without "when" serves every case of its layout: a later one for the layout is dead.
                if (served.contains(e.cases())) {
                    throw bad("entry_points[" + i + "].cases", eps.get(i).get("cases"), "an earlier entry without"
                            + " \"when\" serves every " + e.cases() + " case: this one would never run (one entry per"
                            + " layout, or a \"when\" on each but the last)");
                }
                if (e.when() == null) {
                    served.add(e.cases());
                }
                if (dtypes.size() > 1) {
                    if (language.equals("metal")) {
                        for (int d = 0; d < e.dispatches().size(); d++) {
                            if (!e.dispatches().get(d).kernel().contains("{dtype}")) {
                                String f = "entry_points[" + i + "].dispatches[" + d + "].kernel";
                                throw bad(f, eps.get(i).get("dispatches").get(d).get("kernel"), "must contain {dtype}"
                                        + " when the adapter names " + dtypes.size() + " dtypes (one kernel each)");
                            }
                        }
                    } else if (!e.symbol().contains("{dtype}")) {
                        throw bad("entry_points[" + i + "].symbol", eps.get(i).get("symbol"), "must contain {dtype}"
                                + " when the adapter names " + dtypes.size() + " dtypes (one symbol each)");
                    }
                }
                entries.add(e);
            }
            return new Adapter(file, name, language, List.copyOf(sources), Map.copyOf(dtypes), List.copyOf(headDims),
                    noWindow, policy, route, List.copyOf(entries));
        }

        Entry entry(JsonNode o, String where, String language, String maskPolicy) {
            if (!o.isObject()) {
                throw bad(where, o, "must be an object");
            }
            if (language.equals("metal")) {
                return metalEntry(o, where, maskPolicy);
            }
            only(o, where, Set.of("cases", "symbol", "returns", "args"));
            String cases = text(o, "cases", where, CASES);
            String symbol = symbol(o, "symbol", where);
            String returns = text(o, "returns", where, List.of("cudaError_t", "void"));
            JsonNode args = o.path("args");
            if (!args.isArray() || args.isEmpty()) {
                throw bad(where + ".args", args, "must be a non-empty array, one object per argument in order");
            }
            List<Arg> list = new ArrayList<>();
            Set<String> tensors = new LinkedHashSet<>();
            for (int i = 0; i < args.size(); i++) {
                Arg a = arg(args.get(i), where + ".args[" + i + "]", cases, false);
                if (a.role().equals("tensor") && !tensors.add(a.what())) {
                    throw bad(where + ".args[" + i + "].tensor", args.get(i).get("tensor"), "passed twice");
                }
                list.add(a);
            }
            required(where + ".args", args, list, cases, maskPolicy);
            return new Entry(cases, symbol, returns, List.copyOf(list), null, List.of(), Map.of(), List.of());
        }

        String symbol(JsonNode o, String field, String where) {
            String symbol = text(o, field, where, null);
            if (!symbol.replace("{dtype}", "").matches("[A-Za-z_][A-Za-z0-9_]*")) {
                throw bad(where + "." + field, o.get(field), "must be a C identifier, with {dtype} where the dtype"
                        + " token goes");
            }
            return symbol;
        }

        /** q, k and out carried; the mask as the policy says; a varlen entry's cu_seqlens. */
        void required(String where, JsonNode args, List<Arg> list, String cases, String maskPolicy) {
            Set<String> tensors = new LinkedHashSet<>();
            list.stream().filter(a -> a.role().equals("tensor")).forEach(a -> tensors.add(a.what()));
            for (String need : List.of("q", "k", "out")) {
                if (!tensors.contains(need)) {
                    throw bad(where, args, "no argument carries tensor " + need + " (q, k and out are"
                            + " required; v absent means the kernel reads V from k)");
                }
            }
            if (tensors.contains("mask") != maskPolicy.equals("takes")) {
                throw bad(where, args, maskPolicy.equals("takes") ? "mask.policy takes: an argument must"
                        + " carry tensor mask" : "mask.policy " + maskPolicy + ": no argument may carry tensor mask");
            }
            if (cases.equals("varlen")) {
                for (String cu : List.of("q", "k")) {
                    if (list.stream().noneMatch(a -> a.role().equals("cu_seqlens") && a.what().equals(cu))) {
                        throw bad(where, args, "a varlen entry needs cu_seqlens " + cu);
                    }
                }
            }
        }

        Entry metalEntry(JsonNode o, String where, String maskPolicy) {
            only(o, where, Set.of("cases", "when", "params", "intermediates", "dispatches"));
            String cases = text(o, "cases", where, CASES);
            JsonNode when = o.get("when");
            if (when != null) {
                condition(when, where + ".when");
            }
            List<Arg> params = new ArrayList<>();
            JsonNode ps = o.path("params");
            if (!ps.isMissingNode()) {
                if (!ps.isArray() || ps.isEmpty()) {
                    throw bad(where + ".params", ps, "must be a non-empty array of the params struct's 4-byte fields"
                            + " in order, each {\"scalar\": name, \"type\": \"i32\"|\"f32\"} or {\"value\": expression,"
                            + " \"type\": \"i32\"}");
                }
                for (int i = 0; i < ps.size(); i++) {
                    params.add(param(ps.get(i), where + ".params[" + i + "]", cases));
                }
            }
            Map<String, JsonNode> inter = new LinkedHashMap<>();
            JsonNode is = o.path("intermediates");
            if (!is.isMissingNode()) {
                if (!is.isObject() || is.isEmpty()) {
                    throw bad(where + ".intermediates", is, "must map each intermediate buffer's name to its length in"
                            + " floats (an expression)");
                }
                for (Iterator<Map.Entry<String, JsonNode>> it = is.fields(); it.hasNext();) {
                    var e = it.next();
                    expr(e.getValue(), where + ".intermediates." + e.getKey());
                    inter.put(e.getKey(), e.getValue());
                }
            }
            JsonNode ds = o.path("dispatches");
            if (!ds.isArray() || ds.isEmpty()) {
                throw bad(where + ".dispatches", ds, "must be a non-empty array of the dispatches the host encodes, in"
                        + " order (e.g. partials, then reduce)");
            }
            List<Dispatch> dispatches = new ArrayList<>();
            List<Arg> tensors = new ArrayList<>();
            Set<String> written = new LinkedHashSet<>();
            for (int i = 0; i < ds.size(); i++) {
                String w = where + ".dispatches[" + i + "]";
                JsonNode d = ds.get(i);
                if (!d.isObject()) {
                    throw bad(w, d, "must be an object");
                }
                only(d, w, Set.of("kernel", "grid", "threadgroup", "threadgroup_memory", "buffers"));
                String kernel = symbol(d, "kernel", w);
                List<JsonNode> grid = exprs(d.path("grid"), w + ".grid", 3);
                List<JsonNode> tg = exprs(d.path("threadgroup"), w + ".threadgroup", 3);
                JsonNode m = d.path("threadgroup_memory");
                List<JsonNode> tgMem = m.isMissingNode() ? List.of() : exprs(m, w + ".threadgroup_memory", -1);
                JsonNode bs = d.path("buffers");
                if (!bs.isArray() || bs.isEmpty()) {
                    throw bad(w + ".buffers", bs, "must be a non-empty array, the binding of [[buffer(n)]] at index n");
                }
                List<Arg> buffers = new ArrayList<>();
                for (int j = 0; j < bs.size(); j++) {
                    String bw = w + ".buffers[" + j + "]";
                    JsonNode b = bs.get(j);
                    Arg a;
                    if (b.isObject() && b.has("intermediate")) {
                        only(b, bw, Set.of("intermediate", "name"));
                        String n = text(b, "intermediate", bw, null);
                        if (!inter.containsKey(n)) {
                            throw bad(bw + ".intermediate", b.get("intermediate"), "not one of the entry's"
                                    + " intermediates " + inter.keySet());
                        }
                        a = new Arg("intermediate", n, "f32", null, null);
                    } else if (b.isObject() && b.has("params")) {
                        only(b, bw, Set.of("params", "name"));
                        if (!b.get("params").isBoolean() || !b.get("params").asBoolean() || params.isEmpty()) {
                            throw bad(bw + ".params", b.get("params"), "must be true, and the entry must declare"
                                    + " \"params\" (the struct bound with setBytes)");
                        }
                        a = new Arg("params", "params", null, null, null);
                    } else {
                        a = arg(b, bw, cases, true);
                    }
                    if (a.role().equals("tensor")) {
                        if (tensors.stream().noneMatch(t -> t.what().equals(a.what()))) {
                            tensors.add(a);
                        } else if (!tensors.stream().filter(t -> t.what().equals(a.what())).findFirst().get()
                                .equals(a)) {
                            throw bad(bw, b, "tensor " + a.what() + " is bound with another dtype, layout or"
                                    + " no_sinks by an earlier dispatch");
                        }
                    }
                    buffers.add(a);
                }
                dispatches.add(new Dispatch(kernel, grid, tg, tgMem, List.copyOf(buffers)));
                written.add(kernel);
            }
            List<Arg> all = new ArrayList<>(tensors);
            dispatches.forEach(d -> d.buffers().stream().filter(a -> a.role().equals("cu_seqlens")).forEach(all::add));
            required(where + ".dispatches", ds, all, cases, maskPolicy);
            return new Entry(cases, dispatches.getFirst().kernel(), "void", List.copyOf(tensors), when,
                    List.copyOf(params), Map.copyOf(inter), List.copyOf(dispatches));
        }

        Arg param(JsonNode o, String where, String cases) {
            if (!o.isObject() || o.has("scalar") == o.has("value")) {
                throw bad(where, o, "must be {\"scalar\": name, \"type\": ...} or {\"value\": expression, \"type\":"
                        + " \"i32\"}");
            }
            only(o, where, Set.of("scalar", "value", "type", "name"));
            if (o.has("value")) {
                expr(o.get("value"), where + ".value");
                text(o, "type", where, List.of("i32"));
                return new Arg("value", o.get("value").toString(), "i32", null, null);
            }
            List<String> names = new ArrayList<>(SCALARS);
            names.add("has_sinks");
            String s = text(o, "scalar", where, names);
            String type = text(o, "type", where, s.equals("scale") ? List.of("f32") : List.of("i32"));
            return new Arg("scalar", s, type, null, null);
        }

        void condition(JsonNode c, String where) {
            if (c.isObject() && c.size() == 1) {
                String op = c.fieldNames().next();
                JsonNode ab = c.get(op);
                if (op.equals("all") && ab.isArray() && !ab.isEmpty()) {
                    for (int i = 0; i < ab.size(); i++) {
                        condition(ab.get(i), where + ".all[" + i + "]");
                    }
                    return;
                }
                if (CONDITIONS.contains(op) && ab.isArray() && ab.size() == 2) {
                    expr(ab.get(0), where + "." + op + "[0]");
                    expr(ab.get(1), where + "." + op + "[1]");
                    return;
                }
            }
            throw bad(where, c, "a condition is {\"eq\"|\"ne\"|\"lt\"|\"le\"|\"gt\"|\"ge\": [a, b]} over expressions,"
                    + " or {\"all\": [conditions]}");
        }

        List<JsonNode> exprs(JsonNode a, String where, int n) {
            if (!a.isArray() || (n >= 0 && a.size() != n)) {
                throw bad(where, a, n >= 0 ? "must be an array of " + n + " expressions" : "must be an array of"
                        + " expressions (bytes of each [[threadgroup(i)]] buffer)");
            }
            List<JsonNode> out = new ArrayList<>();
            for (int i = 0; i < a.size(); i++) {
                expr(a.get(i), where + "[" + i + "]");
                out.add(a.get(i));
            }
            return List.copyOf(out);
        }

        void expr(JsonNode e, String where) {
            if (e.isIntegralNumber() && e.asLong() >= 0 && e.canConvertToInt()) {
                return;
            }
            if (e.isTextual() && SCALARS.contains(e.asText()) && !e.asText().equals("scale")) {
                return;
            }
            if (e.isObject() && e.size() == 1) {
                String op = e.fieldNames().next();
                JsonNode ab = e.get(op);
                if (List.of("ceil_div", "mul", "add").contains(op) && ab.isArray() && ab.size() == 2) {
                    expr(ab.get(0), where + "." + op + "[0]");
                    expr(ab.get(1), where + "." + op + "[1]");
                    return;
                }
            }
            throw bad(where, e, "an expression is a non-negative integer, an integer scalar name, or {\"ceil_div\"|"
                    + "\"mul\"|\"add\": [a, b]}");
        }

        Arg arg(JsonNode o, String where, String cases, boolean metal) {
            if (!o.isObject()) {
                throw bad(where, o, "must be an object with one of tensor, cu_seqlens, scalar, stream");
            }
            List<String> kinds = new ArrayList<>();
            for (String k : List.of("tensor", "cu_seqlens", "scalar", "stream")) {
                if (o.has(k)) {
                    kinds.add(k);
                }
            }
            if (kinds.size() != 1) {
                throw bad(where, o, "must name exactly one of tensor, cu_seqlens, scalar, stream");
            }
            switch (kinds.getFirst()) {
                case "tensor" -> {
                    only(o, where, Set.of("tensor", "dtype", "layout", "no_sinks", "name"));
                    String t = text(o, "tensor", where, TENSORS);
                    String dtype = text(o, "dtype", where, List.of("input", "f32"));
                    String layout;
                    if (t.equals("sinks")) {
                        layout = "heads";
                        if (o.has("layout")) {
                            text(o, "layout", where, List.of("heads"));
                        }
                    } else if (t.equals("mask")) {
                        layout = text(o, "layout", where, List.of("dense"));
                    } else {
                        List<String> ok = cases.equals("dense") ? List.of("dense")
                                : t.equals("out") ? List.of("packed", "padded") : List.of("packed");
                        layout = text(o, "layout", where, ok);
                    }
                    String noSinks = null;
                    if (t.equals("sinks")) {
                        noSinks = o.has("no_sinks") ? text(o, "no_sinks", where, List.of("null", "neg-inf")) : "neg-inf";
                    } else if (o.has("no_sinks")) {
                        throw bad(where + ".no_sinks", o.get("no_sinks"), "only the sinks argument says how \"no"
                                + " sinks\" is passed");
                    }
                    return new Arg("tensor", t, dtype, layout, noSinks);
                }
                case "cu_seqlens" -> {
                    only(o, where, Set.of("cu_seqlens", "dtype", "name"));
                    if (!cases.equals("varlen")) {
                        throw bad(where + ".cu_seqlens", o.get("cu_seqlens"), "only a varlen entry takes cu_seqlens");
                    }
                    return new Arg("cu_seqlens", text(o, "cu_seqlens", where, List.of("q", "k")),
                            text(o, "dtype", where, List.of("i32", "u32")), null, null);
                }
                case "scalar" -> {
                    only(o, where, Set.of("scalar", "type", "name"));
                    String s = text(o, "scalar", where, SCALARS);
                    String type = text(o, "type", where, s.equals("scale") ? List.of("f32") : List.of("i32", "i64"));
                    List<String> varlenOnly = List.of("sequences", "max_q", "max_k", "total_q", "total_k");
                    if (cases.equals("dense") && varlenOnly.contains(s)) {
                        throw bad(where + ".scalar", o.get("scalar"), "a dense entry has no " + s + " (varlen only: "
                                + varlenOnly + ")");
                    }
                    if (cases.equals("varlen") && List.of("batch", "q_len", "kv_len").contains(s)) {
                        throw bad(where + ".scalar", o.get("scalar"), "a varlen entry has no single " + s
                                + " (use sequences, max_q, max_k, total_q, total_k)");
                    }
                    return new Arg("scalar", s, type, null, null);
                }
                default -> {
                    if (metal) {
                        throw bad(where + ".stream", o.get("stream"), "a Metal dispatch binds no stream (the host's"
                                + " command buffer is not a kernel argument)");
                    }
                    only(o, where, Set.of("stream", "name"));
                    text(o, "stream", where, List.of("null"));
                    return new Arg("stream", "null", null, null, null);
                }
            }
        }
    }
}
