package dev.trainwatch.agent.nvml;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The per-poll NVML calls through JNA direct mapping (~0.1 µs a call against ~0.5 for {@code Function.invoke}), all
 * arguments primitives. Direct mapping fails a whole class on one missing symbol, so each symbol has its own class
 * ({@link DirectSymbols}), defined afresh per binder in its own class loader.
 */
public final class DirectCalls {

    /** {@code (pointer)}: GPM sample allocation and release, GPM metrics. */
    public interface Out {
        int call(long out);
    }

    /** {@code (device, out*)}. */
    public interface DeviceOut {
        int call(long device, long out);
    }

    /** {@code (device, type, out*)}: clocks, temperature, PCIe counters; {@code (device, count, values*)}: field values. */
    public interface DeviceTypeOut {
        int call(long device, int type, long out);
    }

    /** {@code (device, count*, entries*)}: compute processes. */
    public interface DeviceCountBuffer {
        int call(long device, long count, long buffer);
    }

    /** {@code (device, entries*, count*, lastSeenTimeStamp)}: per-process utilisation. */
    public interface DeviceBufferCountSince {
        int call(long device, long buffer, long count, long lastSeen);
    }

    /** {@code (device, type, lastSeenTimeStamp, valueType*, count*, samples*)}. */
    public interface DeviceSamples {
        int call(long device, int type, long lastSeen, long valueType, long count, long samples);
    }

    private final NativeLibrary library;
    private final SymbolLoader loader = new SymbolLoader(DirectCalls.class.getClassLoader());
    private final List<Class<?>> registered = new ArrayList<>();

    DirectCalls(NativeLibrary library) {
        this.library = library;
    }

    /**
     * Binds the class of one symbol ({@code DirectSymbols.X}); null when the library lacks the symbol.
     */
    <T> T bind(Class<? extends T> symbolClass, Class<T> shape) {
        Class<?> fresh;
        try {
            fresh = loader.loadClass(symbolClass.getName());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("missing class " + symbolClass.getName(), e);
        }
        try {
            Native.register(fresh, library);
        } catch (UnsatisfiedLinkError | IllegalArgumentException missing) {
            return null; // an older driver: that reading is skipped
        }
        registered.add(fresh);
        try {
            return shape.cast(fresh.getDeclaredConstructor().newInstance());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot instantiate " + fresh.getName(), e);
        }
    }

    /** Releases the registrations (JNA keeps them in a static map otherwise). */
    void unregisterAll() {
        for (Class<?> c : registered) {
            Native.unregister(c);
        }
        registered.clear();
    }

    /** Defines the symbol classes itself, everything else comes from the parent. */
    private static final class SymbolLoader extends ClassLoader {
        private static final String PREFIX = DirectSymbols.class.getName() + "$";

        SymbolLoader(ClassLoader parent) {
            super(parent);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith(PREFIX)) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    String resource = name.replace('.', '/') + ".class";
                    try (InputStream in = getParent().getResourceAsStream(resource)) {
                        if (in == null) {
                            throw new ClassNotFoundException(name);
                        }
                        byte[] bytes = in.readAllBytes();
                        c = defineClass(name, bytes, 0, bytes.length);
                    } catch (IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                return c;
            }
        }
    }
}
