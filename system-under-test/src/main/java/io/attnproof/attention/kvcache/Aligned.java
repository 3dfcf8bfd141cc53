package io.attnproof.attention.kvcache;

import io.attnproof.attention.Require;
import java.util.Arrays;

/**
 * A front-aligned batch and the dead prefix of each row: {@code leads[i] = width - live_i}, so row i's live tokens
 * occupy columns {@code [leads[i], width)} and every row's last token sits at the end column.
 */
public record Aligned<C extends KvCache>(C cache, int[] leads) {

    public Aligned {
        Require.present("cache", cache);
        Require.present("leads", leads);
        leads = leads.clone();
    }

    @Override
    public int[] leads() {
        return leads.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Aligned<?> a && cache.equals(a.cache) && Arrays.equals(leads, a.leads);
    }

    @Override
    public int hashCode() {
        return cache.hashCode() * 31 + Arrays.hashCode(leads);
    }

    @Override
    public String toString() {
        return "Aligned[" + cache + ", leads " + Arrays.toString(leads) + "]";
    }
}
