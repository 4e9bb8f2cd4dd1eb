package com.shop;

import java.util.HashMap;
import java.util.Map;

/** A shopper's cart: it follows prices while it is open. */
public final class Cart implements PriceListener {
    private final Map<String, Long> lines = new HashMap<>();
    private final byte[] session = new byte[1024];

    public void add(String sku, long cents) {
        lines.put(sku, cents);
    }

    @Override
    public void priceChanged(String sku, long cents) {
        lines.computeIfPresent(sku, (k, old) -> cents);
    }
}
