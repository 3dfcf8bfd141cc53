package io.attnproof.attention.sinks;

import java.text.MessageFormat;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.CopyOnWriteArrayList;

/** A {@link System.Logger} that keeps every record it is given (level and formatted message), for tests. */
final class CapturingLogger implements System.Logger {
    /** One logged record. */
    record Entry(Level level, String message) {
    }

    private final List<Entry> entries = new CopyOnWriteArrayList<>();

    List<Entry> entries() {
        return List.copyOf(entries);
    }

    /** Records at {@code level}. */
    long count(Level level) {
        return entries.stream().filter(e -> e.level() == level).count();
    }

    void clear() {
        entries.clear();
    }

    @Override
    public String getName() {
        return SinksAttention.LOGGER_NAME;
    }

    @Override
    public boolean isLoggable(Level level) {
        return true;
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
        entries.add(new Entry(level, msg));
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
        entries.add(new Entry(level, params == null || params.length == 0 ? format
                : MessageFormat.format(format, params)));
    }
}
