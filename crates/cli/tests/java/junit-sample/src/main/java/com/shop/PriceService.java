package com.shop;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Tells every subscribed listener of price changes. */
public final class PriceService {
    private final List<PriceListener> listeners = new CopyOnWriteArrayList<>();

    public void subscribe(PriceListener l) {
        listeners.add(l);
    }

    public void unsubscribe(PriceListener l) {
        listeners.remove(l);
    }

    public void priceChanged(String sku, long cents) {
        for (PriceListener l : listeners) {
            l.priceChanged(sku, cents);
        }
    }
}
