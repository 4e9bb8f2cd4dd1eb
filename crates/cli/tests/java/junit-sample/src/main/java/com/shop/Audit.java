package com.shop;

import java.util.ArrayList;
import java.util.List;

/** An audit trail that keeps every entry: a small leak, one {@code String[3]} per call. */
final class Audit {
    static final List<String[]> ENTRIES = new ArrayList<>();

    private Audit() {}

    static void record(String who, String what, String outcome) {
        ENTRIES.add(new String[] {who, what, outcome});
    }
}
