package io.attnproof.attention.backend;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDeviceGetName;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuDriverGetVersion;
import static jcuda.driver.JCudaDriver.cuInit;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD32;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import jcuda.NativePointerObject;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * Runs launches on device 0 through the JCuda driver API: the PTX of {@code native/cuda/sinks_attn.cu} (built by the
 * nvcc profile, else the checked-in fallback) is loaded once into the primary context; each sequence allocates its
 * buffers, copies in, launches, synchronises, copies out and frees. Every driver call's result is checked, and a
 * failure names the call and its {@code CUresult} (e.g. {@code CUDA_ERROR_OUT_OF_MEMORY}).
 */
final class JCudaRunner implements KernelRunner {
    private static final String LANE = "cuda";

    private final CUcontext context;
    private final String device;
    private final int driverVersion;
    private final NativeFiles.Ptx ptx;
    private CUmodule module;
    private final Map<String, CUfunction> functions = new HashMap<>();

    private JCudaRunner(CUcontext context, String device, int driverVersion, NativeFiles.Ptx ptx) {
        this.context = context;
        this.device = device;
        this.driverVersion = driverVersion;
        this.ptx = ptx;
    }

    /**
     * The probe: loads JCuda's driver binding, {@code cuInit(0)}, {@code cuDeviceGetCount} (at least one device),
     * {@code cuDriverGetVersion}, then retains device 0's primary context and loads the PTX. Without a driver JCuda
     * throws {@code UnsatisfiedLinkError} (then {@code NoClassDefFoundError}): the caller caches whatever is thrown
     * as the lane's reason.
     */
    static JCudaRunner probe() {
        try {
            JCudaDriver.setExceptionsEnabled(false);
        } catch (LinkageError e) {
            throw new LaneUnavailableException(LANE, "JCuda cannot load the CUDA driver: " + linkFailure(e)
                    + " (no NVIDIA driver on this machine?)");
        }
        check(cuInit(0), "cuInit(0)");
        int[] count = new int[1];
        check(cuDeviceGetCount(count), "cuDeviceGetCount");
        if (count[0] < 1) {
            throw new LaneUnavailableException(LANE, "cuDeviceGetCount found no CUDA device");
        }
        int[] version = new int[1];
        check(cuDriverGetVersion(version), "cuDriverGetVersion");
        CUdevice dev = new CUdevice();
        check(cuDeviceGet(dev, 0), "cuDeviceGet(0)");
        byte[] name = new byte[256];
        check(cuDeviceGetName(name, name.length, dev), "cuDeviceGetName");
        CUcontext ctx = new CUcontext();
        check(cuDevicePrimaryCtxRetain(ctx, dev), "cuDevicePrimaryCtxRetain");
        JCudaRunner runner = new JCudaRunner(ctx, cString(name), version[0], NativeFiles.ptx());
        runner.loadModule(runner.ptx);
        return runner;
    }

    @Override
    public String lane() {
        return LANE;
    }

    @Override
    public int gridStrideBlocks() {
        return 1024;
    }

    /** The device's name and the driver's CUDA version, e.g. "NVIDIA H200, driver 12.8". */
    String describe() {
        return device + ", driver " + driverVersion / 1000 + "." + driverVersion % 1000 / 10 + ", PTX from " + ptx.source();
    }

    /** Loads {@code text} as the module the kernels come from (also a test hook: bad PTX must fail clearly). */
    synchronized void loadModule(NativeFiles.Ptx text) {
        check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
        byte[] bytes = java.util.Arrays.copyOf(text.text(), text.text().length + 1); // NUL-terminated
        CUmodule m = new CUmodule();
        int rc = cuModuleLoadData(m, bytes);
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new NativeKernelException(LANE, "cuModuleLoadData(" + text.source() + ")", CUresult.stringFor(rc),
                    "PTX " + ptxVersion(text.text()) + " on a driver for CUDA " + driverVersion / 1000 + "."
                    + driverVersion % 1000 / 10);
        }
        module = m;
        functions.clear();
    }

    /** Allocates and frees {@code bytes} on the device (test hook: an impossible size must fail clearly). */
    synchronized void allocateAndFree(long bytes) {
        check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
        CUdeviceptr p = new CUdeviceptr();
        check(cuMemAlloc(p, bytes), "cuMemAlloc(" + bytes + " bytes)");
        check(cuMemFree(p), "cuMemFree");
    }

    @Override
    public synchronized void run(List<KernelLaunch> launches) {
        check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
        Map<DeviceBuffer, CUdeviceptr> device = new IdentityHashMap<>();
        try {
            for (KernelLaunch l : launches) {
                for (KernelArg a : l.args()) {
                    if (a instanceof KernelArg.Buffer(DeviceBuffer b) && !device.containsKey(b)) {
                        CUdeviceptr p = new CUdeviceptr();
                        check(cuMemAlloc(p, b.deviceBytes()), "cuMemAlloc(" + b + ")");
                        device.put(b, p);
                        Pointer host = b.isFloat() ? Pointer.to(b.floats()) : Pointer.to(b.ints());
                        if (b.length() > 0) {
                            check(cuMemcpyHtoD(p, host, 4L * b.length()), "cuMemcpyHtoD(" + b + ")");
                        } else {
                            check(cuMemsetD32(p, 0, 1), "cuMemsetD32(" + b + ")");
                        }
                    }
                }
            }
            for (KernelLaunch l : launches) {
                List<NativePointerObject> params = new ArrayList<>();
                for (KernelArg a : l.args()) {
                    params.add(switch (a) {
                        case KernelArg.Buffer(DeviceBuffer b) -> Pointer.to(device.get(b));
                        case KernelArg.Null() -> Pointer.to(new CUdeviceptr());
                        case KernelArg.I32(int v) -> Pointer.to(new int[] {v});
                        case KernelArg.F32(float v) -> Pointer.to(new float[] {v});
                        case KernelArg.Params(int[] words) -> Pointer.to(words);
                    });
                }
                check(cuLaunchKernel(function(l.kernel()), l.grid()[0], l.grid()[1], l.grid()[2], l.block()[0],
                        l.block()[1], l.block()[2], 0, null, Pointer.to(params.toArray(NativePointerObject[]::new)),
                        null), "cuLaunchKernel(" + l + ")");
            }
            check(cuCtxSynchronize(), "cuCtxSynchronize after " + launches);
            for (Map.Entry<DeviceBuffer, CUdeviceptr> e : device.entrySet()) {
                DeviceBuffer b = e.getKey();
                if (b.readBack() && b.length() > 0) {
                    Pointer host = b.isFloat() ? Pointer.to(b.floats()) : Pointer.to(b.ints());
                    check(cuMemcpyDtoH(host, e.getValue(), 4L * b.length()), "cuMemcpyDtoH(" + b + ")");
                }
            }
        } finally {
            for (CUdeviceptr p : device.values()) {
                cuMemFree(p);
            }
        }
    }

    private CUfunction function(String name) {
        CUfunction f = functions.get(name);
        if (f == null) {
            f = new CUfunction();
            check(cuModuleGetFunction(f, module, name), "cuModuleGetFunction(" + name + ")");
            functions.put(name, f);
        }
        return f;
    }

    private static void check(int rc, String what) {
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new NativeKernelException(LANE, what, CUresult.stringFor(rc), "CUresult " + rc);
        }
    }

    private static String cString(byte[] bytes) {
        int n = 0;
        while (n < bytes.length && bytes[n] != 0) {
            n++;
        }
        return new String(bytes, 0, n, StandardCharsets.UTF_8);
    }

    /**
     * The line of a JCuda load failure that says what is missing (JCuda's message carries whole nested stack
     * traces), e.g. {@code libcuda.so.1: cannot open shared object file: No such file or directory}.
     */
    static String linkFailure(Throwable e) {
        String text = String.valueOf(e.getMessage());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                "([\\w.+-]+\\.so[\\w.]*: cannot open shared object file[^\\n]*)").matcher(text);
        if (m.find()) {
            return e.getClass().getSimpleName() + ": " + m.group(1);
        }
        String first = text.lines().findFirst().orElse(text);
        return e.getClass().getSimpleName() + ": " + (first.length() > 240 ? first.substring(0, 240) + "..." : first);
    }

    /** The {@code .version} line of a PTX text, for messages. */
    static String ptxVersion(byte[] ptx) {
        for (String line : new String(ptx, StandardCharsets.UTF_8).split("\n", 40)) {
            if (line.startsWith(".version")) {
                return "ISA " + line.substring(".version".length()).strip();
            }
        }
        return "(no .version line)";
    }
}
