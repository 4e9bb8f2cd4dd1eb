package com.shop;

/** Opens carts and checks them out. */
public final class Shop {
    private final PriceService prices;

    public Shop(PriceService prices) {
        this.prices = prices;
    }

    public Cart open() {
        Cart cart = new Cart();
        prices.subscribe(cart);
        return cart;
    }

    /** The bug: the cart stays subscribed to prices after checkout. */
    public void checkout(Cart cart) {
        cart.add("receipt", 0);
    }

    /** Checkout that lets the cart go. */
    public void checkoutAndClose(Cart cart) {
        cart.add("receipt", 0);
        prices.unsubscribe(cart);
    }
}
