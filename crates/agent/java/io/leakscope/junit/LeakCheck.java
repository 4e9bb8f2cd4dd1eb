package io.leakscope.junit;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.leakscope.LeakScope;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import org.opentest4j.AssertionFailedError;

/** The extension behind {@link LeakTest}: runs the rounds, dumps, and asks leakscope. */
public final class LeakCheck implements InvocationInterceptor {
    @Override
    public void interceptTestMethod(
            Invocation<Void> invocation, ReflectiveInvocationContext<Method> call, ExtensionContext context)
            throws Throwable {
        invocation.proceed();
        LeakTest spec = call.getExecutable().getAnnotation(LeakTest.class);
        if (spec == null) {
            return;
        }
        Method method = call.getExecutable();
        method.setAccessible(true);
        Object target = call.getTarget().orElse(null);
        Object[] args = call.getArguments().toArray();
        Path dir = Files.createTempDirectory("leakscope-junit-");
        List<String> dumps = new ArrayList<>();
        HotSpotDiagnosticMXBean bean = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        try {
            for (int round = 1; round <= spec.rounds(); round++) {
                for (int i = 0; i < spec.runsPerRound(); i++) {
                    run(method, target, args);
                }
                String dump = dir.resolve(String.format("round-%02d.hprof", round)).toString();
                bean.dumpHeap(dump, true);
                dumps.add(dump);
            }
            String name = context.getDisplayName();
            // Equal rounds of the same body: growth at every round is judged per run, not by
            // its share of the heap (which a unit test's small leak never reaches).
            long perRound = Math.max(1L, (long) spec.leakBytesPerRun() * spec.runsPerRound());
            List<String> growth = new ArrayList<>(List.of(
                    "growth", "--quiet", "--fail-on-growth", "--top", "1", "--per-heap", Long.toString(perRound)));
            growth.addAll(dumps);
            Result judged = leakscope(growth);
            if (judged.code == 1) {
                throw new AssertionFailedError(name + " leaks: over " + dumps.size() + " rounds of "
                        + spec.runsPerRound() + " runs, leakscope growth says:\n" + judged.output);
            } else if (judged.code != 0) {
                throw new AssertionFailedError("leakscope could not judge " + name + "'s heaps (exit "
                        + judged.code + "):\n" + judged.output);
            }
            if (LeakScope.agentLoaded()) {
                Result checked = leakscope(List.of("check", "--quiet", dumps.get(dumps.size() - 1)));
                if (checked.code == 1) {
                    throw new AssertionFailedError(name + " keeps objects it declared dead:\n" + checked.output);
                } else if (checked.code != 0) {
                    throw new AssertionFailedError("leakscope check failed (exit " + checked.code + "):\n" + checked.output);
                }
            }
        } finally {
            if (!Boolean.getBoolean("leakscope.keep")) {
                for (String d : dumps) {
                    Files.deleteIfExists(Path.of(d));
                }
                Files.deleteIfExists(dir);
            }
        }
    }

    /** Runs the test method once more, its own failure thrown as it is. */
    private static void run(Method method, Object target, Object[] args) throws Throwable {
        try {
            method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** What a leakscope command printed (stdout and stderr) and its exit code. */
    private static final class Result {
        final int code;
        final String output;

        Result(int code, String output) {
            this.code = code;
            this.output = output;
        }
    }

    private static Result leakscope(List<String> args) throws IOException, InterruptedException {
        String bin = System.getProperty("leakscope.bin", System.getenv().getOrDefault("LEAKSCOPE_BIN", "leakscope"));
        List<String> command = new ArrayList<>();
        command.add(bin);
        command.addAll(args);
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new AssertionFailedError("cannot run " + bin + " (set -Dleakscope.bin=PATH or LEAKSCOPE_BIN): "
                    + e.getMessage());
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = p.getInputStream()) {
            in.transferTo(out);
        }
        return new Result(p.waitFor(), out.toString(StandardCharsets.UTF_8).trim());
    }
}
