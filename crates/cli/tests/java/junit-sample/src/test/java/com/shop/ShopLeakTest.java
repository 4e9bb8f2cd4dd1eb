package com.shop;

import io.leakscope.junit.LeakTest;

class ShopLeakTest {
    private final Shop leaky = new Shop(new PriceService());
    private final Shop careful = new Shop(new PriceService());

    /** Fails: every checkout leaves its cart subscribed to prices. */
    @LeakTest
    void checkoutForgetsTheCart() {
        Cart cart = leaky.open();
        cart.add("sku-1", 1999);
        leaky.checkout(cart);
    }

    /** Passes: the cart is unsubscribed at checkout. */
    @LeakTest
    void checkoutAndCloseLetsTheCartGo() {
        Cart cart = careful.open();
        cart.add("sku-1", 1999);
        careful.checkoutAndClose(cart);
    }

    /** Fails: each checkout keeps one small entry (32 bytes) in a static list. */
    @LeakTest
    void checkoutIsAuditedForever() {
        Audit.record("sku-1", "checkout", "ok");
    }
}
