package io.attnproof.attention.backend;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Objective-C runtime through the Foreign Function &amp; Memory API, no JNI: classes and selectors from libobjc,
 * and {@code objc_msgSend} bound once per call signature (on Apple silicon it must be called with the exact
 * signature of the method it reaches, so each signature gets its own downcall handle).
 */
@SuppressWarnings("restricted") // FFM: libobjc, Foundation and Metal.framework
final class ObjC {
    static final String LIBOBJC = "/usr/lib/libobjc.A.dylib";
    static final String FOUNDATION = "/System/Library/Frameworks/Foundation.framework/Foundation";
    static final String METAL = "/System/Library/Frameworks/Metal.framework/Metal";

    /** {@code MTLSize}: three {@code NSUInteger}s, passed by value. */
    static final StructLayout MTL_SIZE = MemoryLayout.structLayout(JAVA_LONG.withName("width"),
            JAVA_LONG.withName("height"), JAVA_LONG.withName("depth"));

    private final Linker linker = Linker.nativeLinker();
    private final SymbolLookup objc;
    private final SymbolLookup metal;
    private final MemorySegment msgSend;
    private final MethodHandle getClass;
    private final MethodHandle registerName;
    private final MethodHandle poolPush;
    private final MethodHandle poolPop;
    private final Map<FunctionDescriptor, MethodHandle> sends = new ConcurrentHashMap<>();
    private final Map<String, MemorySegment> selectors = new ConcurrentHashMap<>();

    private ObjC() {
        objc = SymbolLookup.libraryLookup(LIBOBJC, Arena.global());
        SymbolLookup.libraryLookup(FOUNDATION, Arena.global()); // registers NSString, NSError
        metal = SymbolLookup.libraryLookup(METAL, Arena.global());
        msgSend = find(objc, "objc_msgSend");
        getClass = linker.downcallHandle(find(objc, "objc_getClass"), FunctionDescriptor.of(ADDRESS, ADDRESS));
        registerName = linker.downcallHandle(find(objc, "sel_registerName"), FunctionDescriptor.of(ADDRESS, ADDRESS));
        poolPush = linker.downcallHandle(find(objc, "objc_autoreleasePoolPush"), FunctionDescriptor.of(ADDRESS));
        poolPop = linker.downcallHandle(find(objc, "objc_autoreleasePoolPop"), FunctionDescriptor.ofVoid(ADDRESS));
    }

    /** Loads libobjc, Foundation and Metal; throws (an IllegalArgumentException from the lookup) where they are absent. */
    static ObjC load() {
        return new ObjC();
    }

    /** A C function of Metal.framework (e.g. {@code MTLCreateSystemDefaultDevice}). */
    MethodHandle metalFunction(String name, FunctionDescriptor fd) {
        return linker.downcallHandle(find(metal, name), fd);
    }

    MemorySegment cls(String name) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment c = (MemorySegment) getClass.invokeExact(a.allocateFrom(name));
            if (c.equals(MemorySegment.NULL)) {
                throw new IllegalStateException("objc_getClass(\"" + name + "\") returned nil");
            }
            return c;
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("objc_getClass(" + name + "): " + t, t);
        }
    }

    MemorySegment sel(String name) {
        return selectors.computeIfAbsent(name, n -> {
            try (Arena a = Arena.ofConfined()) {
                return (MemorySegment) registerName.invokeExact(a.allocateFrom(n));
            } catch (Throwable t) {
                throw new IllegalStateException("sel_registerName(" + n + "): " + t, t);
            }
        });
    }

    /** {@code objc_msgSend} bound to {@code fd} = (id self, SEL op, args...) -> result; one handle per signature. */
    MethodHandle send(FunctionDescriptor fd) {
        return sends.computeIfAbsent(fd, d -> linker.downcallHandle(msgSend, d));
    }

    MemorySegment pushPool() {
        try {
            return (MemorySegment) poolPush.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("objc_autoreleasePoolPush: " + t, t);
        }
    }

    void popPool(MemorySegment pool) {
        try {
            poolPop.invokeExact(pool);
        } catch (Throwable t) {
            throw new IllegalStateException("objc_autoreleasePoolPop: " + t, t);
        }
    }

    /** {@code [NSString stringWithUTF8String:s]} (autoreleased). */
    MemorySegment nsString(String s, Arena arena) {
        try {
            return (MemorySegment) send(FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS)).invokeExact(
                    cls("NSString"), sel("stringWithUTF8String:"), arena.allocateFrom(s));
        } catch (Throwable t) {
            throw new IllegalStateException("NSString stringWithUTF8String: " + t, t);
        }
    }

    /** The text of an NSString (or "(nil)"). */
    String string(MemorySegment nsString) {
        if (nsString.equals(MemorySegment.NULL)) {
            return "(nil)";
        }
        try {
            MemorySegment utf8 = (MemorySegment) send(FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS)).invokeExact(
                    nsString, sel("UTF8String"));
            return utf8.reinterpret(Long.MAX_VALUE).getString(0);
        } catch (Throwable t) {
            throw new IllegalStateException("NSString UTF8String: " + t, t);
        }
    }

    /** An NSError as "domain code: localizedDescription". */
    String error(MemorySegment nsError) {
        if (nsError.equals(MemorySegment.NULL)) {
            return "(no NSError)";
        }
        try {
            MethodHandle idOf = send(FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
            MethodHandle longOf = send(FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS));
            String domain = string((MemorySegment) idOf.invokeExact(nsError, sel("domain")));
            long code = (long) longOf.invokeExact(nsError, sel("code"));
            String text = string((MemorySegment) idOf.invokeExact(nsError, sel("localizedDescription")));
            return domain + " " + code + ": " + text;
        } catch (Throwable t) {
            return "(unreadable NSError: " + t + ")";
        }
    }

    private static MemorySegment find(SymbolLookup lookup, String name) {
        return lookup.find(name).orElseThrow(() -> new IllegalStateException("symbol " + name + " not found"));
    }
}
