package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Opens the ledger's index.html in headless Chromium (Debian's {@code chromium} package) and checks the rendered
 * page: the claim table is in the DOM, every picture loaded (an SVG Chromium cannot parse has no natural width),
 * and the matrix's cell links resolve to the detail rows. Skips, with the reason, where Chromium is not installed.
 * Left out of the ledger's PIT run (a browser per mutant; pit.excludedTestClasses in the ledger's pom).
 */
class LedgerInChromiumTest {
    @TempDir
    Path dir;

    static Path chromium() {
        for (String candidate : List.of("/usr/bin/chromium", "/usr/bin/chromium-browser")) {
            Path p = Path.of(candidate);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(java.io.File.pathSeparator)) {
                Path p = Path.of(d).resolve("chromium");
                if (!d.isEmpty() && Files.isExecutable(p)) {
                    return p;
                }
            }
        }
        return null;
    }

    @Test
    void theLedgerRendersItsClaimTableAndPicturesInHeadlessChromium() throws IOException, InterruptedException {
        Path chromium = chromium();
        assumeTrue(chromium != null, "chromium is not installed (Debian package `chromium`; .ci/run installs it"
                + " best-effort): the headless-page check is skipped");
        Path root = LedgerFixture.root(dir.resolve("repo"), true, true);
        LedgerWriter.Written w = LedgerWriter.write(Ledger.build(root, List.of()), dir.resolve("ledger"));
        Path profile = Files.createDirectories(dir.resolve("chromium-profile"));
        Path dom = dir.resolve("dom.html");
        Path log = dir.resolve("chromium.log");
        Process p = new ProcessBuilder(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--user-data-dir=" + profile, "--dump-dom", w.html().toUri().toString())
                .redirectOutput(dom.toFile()).redirectError(log.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("chromium did not finish within 60 s; log: " + Files.readString(log));
        }
        String text = Files.readString(dom, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), "chromium exit; log: " + Files.readString(log));
        assertTrue(text.contains("<table id=\"claims\">"), text);
        assertTrue(text.contains("data-claim=\"U5\" data-backend=\"cpu\""), text);
        assertTrue(text.contains("<td class=\"status\">FAIL</td>"), text);
        assertTrue(text.contains("<table id=\"mutants\">"), text);
        int pictures = w.pictures().size();
        assertTrue(text.contains("pictures loaded " + pictures + "/" + pictures), "every picture loaded: "
                + text.substring(Math.max(0, text.indexOf("render-check") - 40)));
    }

    @Test
    void theLinksResolveInHeadlessChromium() throws IOException, InterruptedException {
        Path chromium = chromium();
        assumeTrue(chromium != null, "chromium is not installed (Debian package `chromium`; .ci/run installs it"
                + " best-effort): the headless matrix check is skipped");
        Path root = ClaimMatrixTest.repoWithEngine(dir);
        LedgerWriter.Written w = LedgerWriter.write(Ledger.build(root,
                List.of(root.resolve("conformance/target/evidence-engines/numpy"))), dir.resolve("ledger"));
        Path dom = dir.resolve("dom.html");
        Process p = new ProcessBuilder(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--user-data-dir=" + Files.createDirectories(dir.resolve("profile")), "--dump-dom",
                w.html().toUri().toString()).redirectOutput(dom.toFile()).redirectError(dir.resolve("log").toFile()).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "chromium finished");
        String text = Files.readString(dom, StandardCharsets.UTF_8);
        assertTrue(text.contains("<table id=\"matrix\">"), text);
        assertTrue(text.contains("id=\"detail-U5-numpy\""), "the detail row carries the cell's anchor: " + text);
    }
}
