package io.attnproof.conformance.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.conformance.cases.CaseException;
import io.attnproof.conformance.cases.SinksCase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The adapter format's rules (docs/conformance.md "The adapter"): a good adapter reads as its file says (defaults
 * included), each bad field is refused in one line naming the file, the field, the value and the rule, and the
 * expressions and conditions evaluate as their operators say.
 */
class AdapterRulesTest {
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    static final Path CUDA = ROOT.resolve("examples/kernels/cuda/fa2_sinks.adapter.json");
    static final Path METAL = ROOT.resolve("examples/kernels/metal/sinks_decode.adapter.json");
    static final ObjectMapper JSON = new ObjectMapper();
    static final String EXPRESSION_RULE = "an expression is a non-negative integer, an integer scalar name, or"
            + " {\"ceil_div\"|\"mul\"|\"add\": [a, b]}";
    static final String CONDITION_RULE = "a condition is {\"eq\"|\"ne\"|\"lt\"|\"le\"|\"gt\"|\"ge\": [a, b]} over"
            + " expressions, or {\"all\": [conditions]}";
    static final String REQUIRED_RULE = " (q, k and out are required; v absent means the kernel reads V from k)";

    @TempDir
    Path tmp;
    int written;

    /** The example adapter as an editable tree. */
    static ObjectNode example(Path file) throws IOException {
        return (ObjectNode) JSON.readTree(file.toFile());
    }

    /** {@code a} written into the temp dir beside (empty) copies of the sources it names. */
    Path write(JsonNode a) throws IOException {
        for (JsonNode s : a.path("sources")) {
            Path p = tmp.resolve(s.asText());
            if (!Files.exists(p)) {
                Files.createFile(p);
            }
        }
        Path f = tmp.resolve("adapter" + (written++) + ".json");
        Files.writeString(f, a.toString());
        return f;
    }

    Adapter read(JsonNode a) throws IOException {
        return Adapter.read(write(a));
    }

    static ObjectNode at(JsonNode a, String pointer) {
        return (ObjectNode) a.at(pointer);
    }

    static ArrayNode arr(JsonNode a, String pointer) {
        return (ArrayNode) a.at(pointer);
    }

    static JsonNode json(String s) {
        try {
            return JSON.readTree(s);
        } catch (IOException e) {
            throw new AssertionError(s, e);
        }
    }

    /** The example edited by {@code edit} is refused naming {@code field}, its value (as the file has it) and the rule. */
    void refused(ObjectNode a, Consumer<ObjectNode> edit, String field, String pointerOfValue, String rule)
            throws IOException {
        ObjectNode bad = a.deepCopy();
        edit.accept(bad);
        JsonNode v = pointerOfValue == null ? null : bad.at(pointerOfValue);
        String value = v == null || v.isMissingNode() ? "missing" : v.toString();
        Path f = write(bad);
        CaseException e = assertThrows(CaseException.class, () -> Adapter.read(f), field);
        assertEquals(f, e.file(), e.getMessage());
        assertEquals(field, e.field(), e.getMessage());
        assertEquals(f + ": \"" + field + "\": " + value + ": " + rule, e.getMessage());
    }

    /** An unknown field of {@code where} is refused naming it and listing the fields {@code where} has. */
    void unknownField(ObjectNode a, String objectPointer, String field, String where, Set<String> fields)
            throws IOException {
        ObjectNode bad = a.deepCopy();
        JsonNode value = json("\"anything\"");
        at(bad, objectPointer).set(field, value);
        Path f = write(bad);
        CaseException e = assertThrows(CaseException.class, () -> Adapter.read(f), where + " " + field);
        String name = where.isEmpty() ? field : where + "." + field;
        assertEquals(name, e.field(), e.getMessage());
        String head = f + ": \"" + name + "\": " + value + ": not a field of " + (where.isEmpty() ? "an adapter"
                : where) + " (fields: ";
        assertTrue(e.getMessage().startsWith(head) && e.getMessage().endsWith(")"), e.getMessage());
        String list = e.getMessage().substring(head.length(), e.getMessage().length() - 1);
        assertEquals(fields, new HashSet<>(Arrays.asList(list.split(", "))), e.getMessage());
    }

    /** The argument an argument object of the file describes (defaults of the format filled in). */
    static Adapter.Arg expected(JsonNode o) {
        if (o.has("tensor")) {
            String t = o.get("tensor").asText();
            return new Adapter.Arg("tensor", t, o.get("dtype").asText(), t.equals("sinks") ? "heads"
                    : o.get("layout").asText(), t.equals("sinks") ? o.path("no_sinks").asText("neg-inf") : null);
        }
        if (o.has("cu_seqlens")) {
            return new Adapter.Arg("cu_seqlens", o.get("cu_seqlens").asText(), o.get("dtype").asText(), null, null);
        }
        if (o.has("scalar")) {
            return new Adapter.Arg("scalar", o.get("scalar").asText(), o.get("type").asText(), null, null);
        }
        return new Adapter.Arg("stream", o.get("stream").asText(), null, null, null);
    }

    static List<JsonNode> list(JsonNode array) {
        List<JsonNode> l = new ArrayList<>();
        array.forEach(l::add);
        return l;
    }

    @Test
    void theCudaExampleReadsAsItsFileSays() throws IOException {
        JsonNode file = example(CUDA);
        Adapter a = Adapter.read(CUDA);
        assertEquals(file.get("name").asText(), a.name());
        assertEquals(file.get("language").asText(), a.language());
        assertEquals(List.of(CUDA.getParent().resolve(file.get("sources").get(0).asText())), a.sources());
        Map<String, String> dtypes = new LinkedHashMap<>();
        file.get("dtypes").properties().forEach(e -> dtypes.put(e.getKey(), e.getValue().asText()));
        assertEquals(dtypes, a.dtypes());
        assertEquals(list(file.get("head_dims")).stream().map(JsonNode::asInt).toList(), a.headDims());
        assertEquals(file.get("no_window").asLong(), a.noWindow());
        assertEquals(file.at("/mask/policy").asText(), a.maskPolicy());
        assertEquals(file.at("/mask/route").asText(), a.maskRoute());
        JsonNode eps = file.get("entry_points");
        assertEquals(eps.size(), a.entries().size());
        for (int i = 0; i < eps.size(); i++) {
            JsonNode ep = eps.get(i);
            Adapter.Entry e = a.entries().get(i);
            assertEquals(ep.get("cases").asText(), e.cases());
            assertEquals(ep.get("symbol").asText(), e.symbol());
            assertEquals(ep.get("returns").asText(), e.returns());
            assertEquals(list(ep.get("args")).stream().map(AdapterRulesTest::expected).toList(), e.args());
            assertNull(e.when());
            // The entry serving the layout is found by its name; each tensor by its own argument.
            assertSame(e, a.entry(e.cases()));
            for (int j = 0; j < ep.get("args").size(); j++) {
                JsonNode arg = ep.get("args").get(j);
                if (arg.has("tensor")) {
                    assertEquals(expected(arg), e.tensor(arg.get("tensor").asText()));
                }
                // Everything but a scalar is passed as a pointer (a tensor, a cu_seqlens array, the stream).
                assertEquals(!arg.has("scalar"), e.args().get(j).pointer(), arg.toString());
            }
            assertNull(e.tensor("mask"), "the example has mask policy none");
        }
        assertNull(a.entry("paged"));
    }

    @Test
    void theFormatsDefaultsAndLimitsAreAccepted() throws IOException {
        ObjectNode cuda = example(CUDA);
        // no_window absent: 0; present: the kernel's own value, negative too.
        ObjectNode noNoWindow = cuda.deepCopy();
        noNoWindow.remove("no_window");
        assertEquals(0, read(noNoWindow).noWindow());
        ObjectNode minusOne = cuda.deepCopy();
        minusOne.put("no_window", -1);
        assertEquals(-1, read(minusOne).noWindow());
        // Head dims 1 and 4096 are the ends of [1, 4096].
        ObjectNode ends = cuda.deepCopy();
        ends.set("head_dims", json("[1, 4096]"));
        assertEquals(List.of(1, 4096), read(ends).headDims());
        // Sinks without no_sinks: neg-inf.
        ObjectNode negInf = cuda.deepCopy();
        at(negInf, "/entry_points/0/args/3").remove("no_sinks");
        assertEquals("neg-inf", read(negInf).entry("dense").tensor("sinks").noSinks());
        assertEquals("null", read(cuda).entry("dense").tensor("sinks").noSinks());
        // One dtype: the symbols need no {dtype}.
        ObjectNode one = cuda.deepCopy();
        one.set("dtypes", json("{\"F32\": \"f32\"}"));
        at(one, "/entry_points/0").put("symbol", "fa2_sinks_fwd_f32");
        at(one, "/entry_points/1").put("symbol", "fa2_sinks_varlen_f32");
        assertEquals("fa2_sinks_fwd_f32", read(one).entry("dense").symbol());
        // A varlen out may be padded [sequences, H, max_q, D].
        ObjectNode padded = cuda.deepCopy();
        at(padded, "/entry_points/1/args/6").put("layout", "padded");
        assertEquals("padded", read(padded).entry("varlen").tensor("out").layout());
        // Mask policy takes: the mask is an argument, no route needed.
        ObjectNode takes = cuda.deepCopy();
        takes.set("mask", json("{\"policy\": \"takes\"}"));
        arr(takes, "/entry_points").remove(1);
        arr(takes, "/entry_points/0/args").insert(5, json("{\"tensor\": \"mask\", \"dtype\": \"f32\", \"layout\":"
                + " \"dense\"}"));
        Adapter t = read(takes);
        assertEquals("takes", t.maskPolicy());
        assertNull(t.maskRoute());
        assertEquals(new Adapter.Arg("tensor", "mask", "f32", "dense", null), t.entry("dense").tensor("mask"));
        assertNull(t.entry("varlen"));
        // Mask policy refuses, with the route.
        ObjectNode refuses = cuda.deepCopy();
        refuses.set("mask", json("{\"policy\": \"refuses\", \"route\": \"the host's masked path\"}"));
        assertEquals("the host's masked path", read(refuses).maskRoute());
    }

    @Test
    void badTopLevelFieldsAreRefusedNamingFieldValueAndRule() throws IOException {
        ObjectNode cuda = example(CUDA);
        ObjectNode metal = example(METAL);
        unknownField(cuda, "", "colour", "", Set.of("format", "name", "language", "sources", "dtypes", "head_dims",
                "no_window", "mask", "entry_points", "description"));
        unknownField(cuda, "/mask", "colour", "mask", Set.of("policy", "route"));
        refused(cuda, a -> a.remove("format"), "format", null, "must be one of [attnproof-kernel-adapter/1]");
        refused(cuda, a -> a.put("name", " "), "name", "/name", "must be non-blank text");
        refused(cuda, a -> arr(a, "/sources").add("extra.cu"), "sources", "/sources", "a CUDA adapter names one"
                + " translation unit (the emulator's runtime, its allocations and its checks live in one library);"
                + " headers it includes sit beside it");
        refused(metal, a -> arr(a, "/sources").add("extra.metal"), "sources", "/sources", "a Metal adapter names one"
                + " translation unit (the emulator's runtime, its allocations and its checks live in one library);"
                + " headers it includes sit beside it");
        refused(cuda, a -> a.set("head_dims", json("[0]")), "head_dims[0]", "/head_dims/0",
                "must be an integer in [1, 4096]");
        refused(cuda, a -> a.set("head_dims", json("[64, 4097]")), "head_dims[1]", "/head_dims/1",
                "must be an integer in [1, 4096]");
        for (String nw : List.of("\"none\"", "1.5")) {
            refused(cuda, a -> a.set("no_window", json(nw)), "no_window", "/no_window",
                    "must be the integer the kernel takes as \"no window\" (default 0)");
        }
        refused(cuda, a -> at(a, "/mask").put("policy", "refuses").remove("route"), "mask.route", null,
                "a kernel that refuses masks must say where the host routes masked calls (the SKIP reason of every"
                        + " masked case)");
        refused(cuda, a -> a.set("entry_points", json("[]")), "entry_points", "/entry_points",
                "must be a non-empty array (one entry per case layout: dense, varlen)");
        // Several dtypes: each symbol (CUDA) or dispatch kernel (Metal) carries {dtype}.
        refused(cuda, a -> at(a, "/entry_points/0").put("symbol", "fa2_sinks_fwd"), "entry_points[0].symbol",
                "/entry_points/0/symbol", "must contain {dtype} when the adapter names " + cuda.get("dtypes").size()
                        + " dtypes (one symbol each)");
        refused(metal, a -> at(a, "/entry_points/1/dispatches/1").put("kernel", "sinks_decode_reduce"),
                "entry_points[1].dispatches[1].kernel", "/entry_points/1/dispatches/1/kernel", "must contain {dtype}"
                        + " when the adapter names " + metal.get("dtypes").size() + " dtypes (one kernel each)");
    }

    @Test
    void badCudaEntriesAndArgumentsAreRefusedNamingFieldValueAndRule() throws IOException {
        ObjectNode cuda = example(CUDA);
        unknownField(cuda, "/entry_points/0", "when", "entry_points[0]", Set.of("cases", "symbol", "returns",
                "args"));
        unknownField(cuda, "/entry_points/0/args/0", "shape", "entry_points[0].args[0]", Set.of("tensor", "dtype",
                "layout", "no_sinks", "name"));
        unknownField(cuda, "/entry_points/1/args/4", "layout", "entry_points[1].args[4]", Set.of("cu_seqlens",
                "dtype", "name"));
        unknownField(cuda, "/entry_points/0/args/5", "dtype", "entry_points[0].args[5]", Set.of("scalar", "type",
                "name"));
        unknownField(cuda, "/entry_points/0/args/12", "type", "entry_points[0].args[12]", Set.of("stream", "name"));
        // A tensor is passed once.
        int n = cuda.at("/entry_points/0/args").size();
        refused(cuda, a -> arr(a, "/entry_points/0/args").add(a.at("/entry_points/0/args/0").deepCopy()),
                "entry_points[0].args[" + n + "].tensor", "/entry_points/0/args/" + n + "/tensor", "passed twice");
        // q, k and out are required: a cu_seqlens k does not stand for tensor k.
        refused(cuda, a -> removeTensor(a, "/entry_points/0/args", "out"), "entry_points[0].args",
                "/entry_points/0/args", "no argument carries tensor out" + REQUIRED_RULE);
        refused(cuda, a -> removeTensor(a, "/entry_points/1/args", "k"), "entry_points[1].args",
                "/entry_points/1/args", "no argument carries tensor k" + REQUIRED_RULE);
        // A varlen entry takes both cu_seqlens.
        for (String cu : List.of("q", "k")) {
            refused(cuda, a -> removeWhere(a, "/entry_points/1/args", "cu_seqlens", cu), "entry_points[1].args",
                    "/entry_points/1/args", "a varlen entry needs cu_seqlens " + cu);
        }
        // The mask argument follows the mask policy.
        refused(cuda, a -> a.set("mask", json("{\"policy\": \"takes\"}")), "entry_points[0].args",
                "/entry_points/0/args", "mask.policy takes: an argument must carry tensor mask");
        refused(cuda, a -> arr(a, "/entry_points/0/args").insert(5, json("{\"tensor\": \"mask\", \"dtype\": \"f32\","
                + " \"layout\": \"dense\"}")), "entry_points[0].args", "/entry_points/0/args",
                "mask.policy none: no argument may carry tensor mask");
        // Layouts: a varlen q is packed only; a varlen out packed or padded.
        refused(cuda, a -> at(a, "/entry_points/1/args/0").put("layout", "padded"), "entry_points[1].args[0].layout",
                "/entry_points/1/args/0/layout", "must be one of [packed]");
        refused(cuda, a -> at(a, "/entry_points/1/args/6").put("layout", "dense"), "entry_points[1].args[6].layout",
                "/entry_points/1/args/6/layout", "must be one of [packed, padded]");
    }

    static void removeTensor(ObjectNode a, String args, String tensor) {
        removeWhere(a, args, "tensor", tensor);
    }

    static void removeWhere(ObjectNode a, String args, String key, String value) {
        ArrayNode l = arr(a, args);
        for (int i = 0; i < l.size(); i++) {
            if (l.get(i).path(key).asText().equals(value) && l.get(i).has(key)) {
                l.remove(i);
                return;
            }
        }
        throw new AssertionError("no " + key + " " + value + " in " + l);
    }

    @Test
    void badMetalEntriesAndBuffersAreRefusedNamingFieldValueAndRule() throws IOException {
        ObjectNode metal = example(METAL);
        unknownField(metal, "/entry_points/0", "symbol", "entry_points[0]", Set.of("cases", "when", "params",
                "intermediates", "dispatches"));
        unknownField(metal, "/entry_points/0/dispatches/0", "threads", "entry_points[0].dispatches[0]",
                Set.of("kernel", "grid", "threadgroup", "threadgroup_memory", "buffers"));
        unknownField(metal, "/entry_points/1/dispatches/0/buffers/3", "dtype",
                "entry_points[1].dispatches[0].buffers[3]", Set.of("intermediate", "name"));
        unknownField(metal, "/entry_points/0/dispatches/0/buffers/5", "dtype",
                "entry_points[0].dispatches[0].buffers[5]", Set.of("params", "name"));
        unknownField(metal, "/entry_points/0/params/0", "dtype", "entry_points[0].params[0]", Set.of("scalar",
                "value", "type", "name"));
        refused(metal, a -> at(a, "/entry_points/0/params/9").put("value", -1), "entry_points[0].params[9].value",
                "/entry_points/0/params/9/value", EXPRESSION_RULE);
        refused(metal, a -> at(a, "/entry_points/1/intermediates").put("part", "scale"),
                "entry_points[1].intermediates.part", "/entry_points/1/intermediates/part", EXPRESSION_RULE);
        // A tensor bound by two dispatches is bound alike.
        int n = metal.at("/entry_points/1/dispatches/1/buffers").size();
        refused(metal, a -> arr(a, "/entry_points/1/dispatches/1/buffers").add(json("{\"tensor\": \"k\", \"dtype\":"
                + " \"f32\", \"layout\": \"dense\"}")), "entry_points[1].dispatches[1].buffers[" + n + "]",
                "/entry_points/1/dispatches/1/buffers/" + n, "tensor k is bound with another dtype, layout or"
                        + " no_sinks by an earlier dispatch");
        // The required tensors count over every dispatch.
        refused(metal, a -> removeTensor(a, "/entry_points/1/dispatches/1/buffers", "out"),
                "entry_points[1].dispatches", "/entry_points/1/dispatches", "no argument carries tensor out"
                        + REQUIRED_RULE);
        // A varlen entry binds both cu_seqlens.
        refused(metal, a -> arr(a, "/entry_points").add(metalVarlen(false)), "entry_points[3].dispatches",
                "/entry_points/3/dispatches", "a varlen entry needs cu_seqlens k");
    }

    /** A one-dispatch Metal varlen entry binding packed q, k, v, out, sinks, both cu_seqlens (or only q's) and max_q. */
    static JsonNode metalVarlen(boolean bothCuSeqlens) {
        return json("{\"cases\": \"varlen\", \"dispatches\": [{\"kernel\": \"sinks_varlen_{dtype}\", \"grid\":"
                + " [\"q_heads\", \"sequences\", 1], \"threadgroup\": [128, 1, 1], \"buffers\": ["
                + "{\"tensor\": \"q\", \"dtype\": \"input\", \"layout\": \"packed\"},"
                + "{\"tensor\": \"k\", \"dtype\": \"input\", \"layout\": \"packed\"},"
                + "{\"tensor\": \"v\", \"dtype\": \"input\", \"layout\": \"packed\"},"
                + "{\"tensor\": \"sinks\", \"dtype\": \"f32\"},"
                + "{\"tensor\": \"out\", \"dtype\": \"input\", \"layout\": \"padded\"},"
                + "{\"cu_seqlens\": \"q\", \"dtype\": \"i32\"},"
                + (bothCuSeqlens ? "{\"cu_seqlens\": \"k\", \"dtype\": \"u32\"}," : "")
                + "{\"scalar\": \"max_q\", \"type\": \"i32\"}]}]}");
    }

    @Test
    void theMetalExampleReadsAsItsFileSaysAndTensorsBoundAlikeAreOneArgument() throws IOException {
        JsonNode file = example(METAL);
        Adapter a = Adapter.read(METAL);
        JsonNode eps = file.get("entry_points");
        assertEquals(eps.size(), a.entries().size());
        for (int i = 0; i < eps.size(); i++) {
            JsonNode ep = eps.get(i);
            Adapter.Entry e = a.entries().get(i);
            assertEquals(ep.get("cases").asText(), e.cases());
            assertEquals(ep.get("when"), e.when());
            assertEquals(ep.at("/dispatches/0/kernel").asText(), e.symbol());
            assertEquals(ep.get("params").size(), e.params().size());
            assertEquals(ep.path("intermediates").size(), e.intermediates().size());
            assertEquals(ep.get("dispatches").size(), e.dispatches().size());
            for (int d = 0; d < ep.get("dispatches").size(); d++) {
                JsonNode dn = ep.get("dispatches").get(d);
                Adapter.Dispatch dp = e.dispatches().get(d);
                assertEquals(dn.get("kernel").asText(), dp.kernel());
                assertEquals(list(dn.get("grid")), dp.grid());
                assertEquals(list(dn.get("threadgroup")), dp.threadgroup());
                assertEquals(list(dn.path("threadgroup_memory")), dp.threadgroupMemory());
                assertEquals(dn.get("buffers").size(), dp.buffers().size());
            }
        }
        // Dispatch 1 of the two-pass route binds k again, alike: one argument k, every tensor once.
        ObjectNode again = example(METAL);
        arr(again, "/entry_points/1/dispatches/1/buffers").add(again.at("/entry_points/1/dispatches/0/buffers/1")
                .deepCopy());
        int buffers = again.at("/entry_points/1/dispatches/1/buffers").size();
        Adapter.Entry two = read(again).entries().get(1);
        List<String> whats = two.args().stream().map(Adapter.Arg::what).toList();
        assertEquals(Set.of("q", "k", "v", "sinks", "out"), Set.copyOf(whats));
        assertEquals(whats.size(), Set.copyOf(whats).size(), whats.toString());
        assertEquals(expected(again.at("/entry_points/1/dispatches/0/buffers/1")), two.tensor("k"));
        assertEquals(buffers, two.dispatches().get(1).buffers().size());
        // A Metal varlen entry with both cu_seqlens among its buffers is read.
        ObjectNode varlen = example(METAL);
        arr(varlen, "/entry_points").add(metalVarlen(true));
        Adapter.Entry v = read(varlen).entry("varlen");
        assertEquals(List.of("cu_seqlens", "cu_seqlens"), v.dispatches().getFirst().buffers().stream()
                .map(Adapter.Arg::role).filter(r -> r.equals("cu_seqlens")).toList());
        assertEquals("padded", v.tensor("out").layout());
    }

    @Test
    void badConditionsAndExpressionsAreRefusedNamingFieldValueAndRule() throws IOException {
        ObjectNode metal = example(METAL);
        refused(metal, a -> at(a, "/entry_points/0").set("when", json("{\"all\": []}")), "entry_points[0].when",
                "/entry_points/0/when", CONDITION_RULE);
        refused(metal, a -> at(a, "/entry_points/0").set("when", json("{\"all\": [{\"eq\": [\"q_len\", 1]},"
                + " {\"is\": [\"q_len\", 1]}]}")), "entry_points[0].when.all[1]", "/entry_points/0/when/all/1",
                CONDITION_RULE);
        refused(metal, a -> at(a, "/entry_points/1").set("when", json("{\"eq\": [\"scale\", 1]}")),
                "entry_points[1].when.eq[0]", "/entry_points/1/when/eq/0", EXPRESSION_RULE);
        refused(metal, a -> at(a, "/entry_points/1").set("when", json("{\"ge\": [\"q_len\", -1]}")),
                "entry_points[1].when.ge[1]", "/entry_points/1/when/ge/1", EXPRESSION_RULE);
        refused(metal, a -> arr(a, "/entry_points/0/dispatches/0/grid").set(0, json("{\"mul\": [\"scale\", 2]}")),
                "entry_points[0].dispatches[0].grid[0].mul[0]", "/entry_points/0/dispatches/0/grid/0/mul/0",
                EXPRESSION_RULE);
        refused(metal, a -> arr(a, "/entry_points/0/dispatches/0/threadgroup").set(2, json("{\"add\": [1, -1]}")),
                "entry_points[0].dispatches[0].threadgroup[2].add[1]",
                "/entry_points/0/dispatches/0/threadgroup/2/add/1", EXPRESSION_RULE);
        refused(metal, a -> arr(a, "/entry_points/0/dispatches/0/grid").remove(2),
                "entry_points[0].dispatches[0].grid", "/entry_points/0/dispatches/0/grid",
                "must be an array of 3 expressions");
        refused(metal, a -> at(a, "/entry_points/0/dispatches/0").put("threadgroup_memory", 16),
                "entry_points[0].dispatches[0].threadgroup_memory", "/entry_points/0/dispatches/0/threadgroup_memory",
                "must be an array of expressions (bytes of each [[threadgroup(i)]] buffer)");
        // 0 is a non-negative integer.
        ObjectNode zero = metal.deepCopy();
        at(zero, "/entry_points/1").set("when", json("{\"all\": [{\"eq\": [\"q_len\", 1]}, {\"ge\": [\"window\","
                + " 0]}]}"));
        arr(zero, "/entry_points/0/dispatches/0/threadgroup_memory").set(0, json("0"));
        Adapter z = read(zero);
        assertEquals(zero.at("/entry_points/1/when"), z.entries().get(1).when());
        assertEquals(List.of(json("0")), z.entries().getFirst().dispatches().getFirst().threadgroupMemory());
    }

    /** A dense case: q [b, hq, tq, d], k and v [b, hkv, tk, d], window w. */
    static SinksCase dense(int b, int hq, int hkv, int tq, int tk, int d, int w) {
        Tensor q = Tensor.of(new float[b * hq * tq * d], DType.F32, Device.CPU, b, hq, tq, d);
        Tensor k = Tensor.of(new float[b * hkv * tk * d], DType.F32, Device.CPU, b, hkv, tk, d);
        Tensor s = Tensor.of(new float[hq], DType.F32, Device.CPU, hq);
        return new SinksCase(null, q, k, k, s, null, w, null, null, DType.F32);
    }

    @Test
    void expressionsAndConditionsEvaluateAsTheirOperatorsSay() throws IOException {
        Adapter a = Adapter.read(METAL);
        SinksCase c = dense(2, 4, 2, 3, 5, 8, 0);
        assertEquals(4, a.eval(json("\"q_heads\""), c));
        assertEquals(5, a.eval(json("\"kv_len\""), c));
        assertEquals(a.noWindow(), a.eval(json("\"window\""), c), "window 0 is passed as the adapter's no_window");
        for (long[] p : new long[][] {{0, 256}, {1, 256}, {255, 256}, {256, 256}, {257, 256}, {1025, 256}, {7, 1}}) {
            String ab = "[" + p[0] + ", " + p[1] + "]";
            assertEquals(Math.ceilDiv(p[0], p[1]), a.eval(json("{\"ceil_div\": " + ab + "}"), c), ab);
            assertEquals(p[0] * p[1], a.eval(json("{\"mul\": " + ab + "}"), c), ab);
            assertEquals(p[0] + p[1], a.eval(json("{\"add\": " + ab + "}"), c), ab);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> a.eval(json("{\"ceil_div\": [\"kv_len\", 0]}"), c));
        assertTrue(e.getMessage().startsWith(METAL + ": ") && e.getMessage().endsWith(": ceil_div by 0 (must be"
                + " positive)"), e.getMessage());
        for (long x = 1; x <= 3; x++) {
            long y = 2;
            String ab = "[" + x + ", " + y + "]";
            assertEquals(x == y, a.holds(json("{\"eq\": " + ab + "}"), c), "eq " + ab);
            assertEquals(x != y, a.holds(json("{\"ne\": " + ab + "}"), c), "ne " + ab);
            assertEquals(x < y, a.holds(json("{\"lt\": " + ab + "}"), c), "lt " + ab);
            assertEquals(x <= y, a.holds(json("{\"le\": " + ab + "}"), c), "le " + ab);
            assertEquals(x > y, a.holds(json("{\"gt\": " + ab + "}"), c), "gt " + ab);
            assertEquals(x >= y, a.holds(json("{\"ge\": " + ab + "}"), c), "ge " + ab);
        }
        assertTrue(a.holds(json("{\"all\": [{\"eq\": [\"q_len\", 3]}, {\"lt\": [\"kv_len\", 6]}]}"), c));
        assertFalse(a.holds(json("{\"all\": [{\"eq\": [\"q_len\", 3]}, {\"gt\": [\"kv_len\", 6]}]}"), c));
        // The route: a decode (q_len 1) up to 1024 keys takes entry 0, a longer decode entry 1, the rest entry 2.
        assertSame(a.entries().get(0), a.entryFor(dense(1, 2, 1, 1, 1024, 4, 0)));
        assertSame(a.entries().get(1), a.entryFor(dense(1, 2, 1, 1, 1025, 4, 0)));
        assertSame(a.entries().get(2), a.entryFor(c));
    }
}
