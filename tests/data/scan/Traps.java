/*
 * public class NotAClass { void notAMethod() {} }
 */
package com.example.store;

import java.util.List;
import java.util.Map;
import static java.util.Objects.requireNonNull;

/** A store. {@code class NotInJavadoc {}} */
@SuppressWarnings({"unchecked", "rawtypes"})
public final class Store<K extends Comparable<K>, V> implements Iterable<V> {
    private static final String TEXT = """
        class NotInTextBlock {
            void nope() {}
        }
        """;
    private final Map<K, V> items;
    private char brace = '{';

    public Store(Map<K, V> items) {
        this.items = requireNonNull(items);
    }

    @Override
    public java.util.Iterator<V> iterator() {
        return items.values().iterator();
    }

    public <T extends V> List<T> filter(Class<T> type,
                                        boolean strict) throws IllegalStateException {
        Runnable r = new Runnable() {
            @Override
            public void run() {}
        };
        return null;
    }

    static <T> T first(List<? extends T> xs) { return xs.get(0); }

    public static class Builder {
        Builder withName(String name) { return this; }
    }

    class Inner {
        class Deeper {
            int depth() { return 2; }
        }
    }

    interface Listener {
        void onPut(String key);

        default void onDelete(String key) {}
    }

    enum Mode {
        READ("r") {
            @Override
            String flag() { return "R"; }
        },
        WRITE("w");

        private final String code;

        Mode(String code) { this.code = code; }

        String flag() { return code; }
    }

    record Entry<A>(A key, int size) {
        Entry {
            if (size < 0) throw new IllegalArgumentException();
        }

        int twice() { return size * 2; }
    }

    @interface Marker {
        String value() default "";
    }

    abstract static class Base {
        protected abstract int size();
        public native @Deprecated int nativeSize();
    }
}
