package com.shop;

/** Something that wants to hear of a new price. */
public interface PriceListener {
    void priceChanged(String sku, long cents);
}
